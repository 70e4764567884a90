// ops-login.js is the ops sign-in page, served at /ops when the server has
// an ops token and the browser has not signed in. It sends the token to
// POST /ops/login, which answers with an HttpOnly cookie (the token itself
// is never stored by the page), then reloads /ops. A token given as
// #token=… in the address is sent at once and removed from the address.

import { pickLang } from './i18n.js';

const STRINGS = {
  en: {
    brand: 'Poise — operations',
    title: 'Sign in',
    intro: 'This server asks for its ops token (ops.token in its config).',
    label: 'Ops token',
    submit: 'Sign in',
    checking: 'Checking…',
    wrong: 'That token is not this server’s ops token.',
    failed: (status) => `The server could not sign you in (${status}).`,
    unreachable: 'The server is out of reach; try again in a moment.',
  },
  zh: {
    brand: 'Poise — 运维',
    title: '登录',
    intro: '此服务器需要运维令牌（配置中的 ops.token）。',
    label: '运维令牌',
    submit: '登录',
    checking: '正在验证…',
    wrong: '该令牌不是此服务器的运维令牌。',
    failed: (status) => `服务器未能完成登录（${status}）。`,
    unreachable: '暂时连不上服务器，请稍后再试。',
  },
};

const params = new URLSearchParams(location.search);
const lang = pickLang(params.get('lang') || navigator.language);
const s = STRINGS[lang];
const $ = (id) => document.getElementById(id);

document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
for (const id of ['brand', 'title', 'intro', 'label', 'submit']) $(id).textContent = s[id];

// signIn posts the token; on success the reload shows the ops page.
async function signIn(token) {
  $('status').textContent = s.checking;
  document.body.dataset.login = 'pending';
  let resp;
  try {
    resp = await fetch('/ops/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    $('status').textContent = s.unreachable;
    document.body.dataset.login = 'unreachable';
    return;
  }
  if (resp.ok) {
    document.body.dataset.login = 'ok';
    location.reload();
    return;
  }
  document.body.dataset.login = 'refused';
  $('status').textContent = resp.status === 401 ? s.wrong : s.failed(resp.status);
  $('token').select();
}

$('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const token = $('token').value.trim();
  if (token) signIn(token);
});

const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get('token')) {
  const token = hash.get('token');
  history.replaceState(null, '', location.pathname + location.search);
  signIn(token);
} else {
  $('token').focus();
}
