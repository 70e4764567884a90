// ops.js is the ops page: it polls /ops/api/* and shows live sessions by
// level, the level-change feed, each backend's health and, under -demo,
// switches for the simulated vendors' faults. Query parameters: lang (zh |
// en), poll_ms (default 1500). A bearer ops token can be given as
// #token=… in the address; it is sent as Authorization and never stored.

import { applyStatic, pickLang, t } from './i18n.js';

const LEVELS = ['L1', 'L2', 'L3', 'L4'];
const FAULTS = ['l1_down', 'l2_slow', 'templates_down', 'whisper_down'];
const POLL_MS = 1500; // default polling period
const TRANSITIONS = 100; // feed length asked of the API
const FETCH_TIMEOUT_MS = 4000; // a request not answered by then counts as failed: its data turns stale
const FEEDS = ['sessions', 'transitions', 'backends'];

const params = new URLSearchParams(location.search);
const hash = new URLSearchParams(location.hash.slice(1));
const pollMs = Number(params.get('poll_ms')) > 0 ? Number(params.get('poll_ms')) : POLL_MS;
const token = hash.get('token') || '';
const $ = (id) => document.getElementById(id);

let lang = pickLang(params.get('lang') || navigator.language);
let last = { sessions: [], transitions: [], backends: [], demo: null };
let drawn = {}; // section → JSON last drawn, so unchanged tables are left alone
let timer = 0;
let demoAvailable = true; // false once /ops/api/demo answered 404: not a -demo server, stop asking
const fresh = { sessions: null, transitions: null, backends: null }; // feed → Date of its last good answer
const stale = { sessions: false, transitions: false, backends: false }; // feed → the last poll of it failed

async function api(path, init = {}) {
  const headers = { ...(init.headers || {}) };
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(path, { cache: 'no-store', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), ...init, headers });
  if (!resp.ok) {
    const err = new Error(`${path}: ${resp.status}`);
    err.status = resp.status;
    throw err;
  }
  const ct = resp.headers.get('Content-Type') || '';
  return ct.includes('json') ? resp.json() : null;
}

// poll fetches every view once; a failing endpoint keeps its last data and
// the status line says so quietly.
async function poll() {
  clearTimeout(timer);
  const [sessions, transitions, backends, demo] = await Promise.allSettled([
    api('/ops/api/sessions'),
    api(`/ops/api/transitions?n=${TRANSITIONS}`),
    api('/ops/api/backends'),
    demoAvailable ? api('/ops/api/demo') : Promise.resolve(null),
  ]);
  const ok = (r) => r.status === 'fulfilled';
  const now = new Date();
  for (const [name, r] of Object.entries({ sessions, transitions, backends })) {
    stale[name] = !ok(r);
    if (ok(r)) {
      last[name] = r.value || [];
      fresh[name] = now;
    }
  }
  last.demo = ok(demo) ? demo.value : null;
  if (!ok(demo) && demo.reason?.status === 404) demoAvailable = false;
  const s = t(lang);
  const failed = [sessions, transitions].filter((r) => !ok(r));
  document.body.dataset.api = failed.length ? 'failing' : 'ok';
  if (failed.some((r) => r.reason?.status === 401 || r.reason?.status === 403)) $('status').textContent = s.opsForbidden;
  else if (failed.length) $('status').textContent = s.opsUnreachable;
  else $('status').textContent = s.opsUpdatedAt(clock(new Date()));
  draw();
  drawFreshness();
  document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
  timer = setTimeout(poll, pollMs);
}

function draw() {
  once('tiles', last.sessions, drawTiles);
  once('sessions', last.sessions, drawSessions);
  once('transitions', last.transitions, drawTransitions);
  once('backends', last.backends, drawBackends);
  once('demo', last.demo, drawDemo);
}

// drawFreshness greys out and timestamps each feed the last poll could
// not refresh: old data never passes for live.
function drawFreshness() {
  const s = t(lang);
  for (const name of FEEDS) {
    for (const e of document.querySelectorAll(`.feed-data[data-feed="${name}"]`)) e.dataset.stale = String(stale[name]);
    for (const e of document.querySelectorAll(`.asof[data-feed="${name}"]`)) {
      e.hidden = !stale[name];
      e.textContent = stale[name] ? s.opsAsOf(fresh[name] ? clock(fresh[name]) : '—') : '';
    }
  }
  document.body.dataset.stale = String(FEEDS.some((n) => stale[n]));
}

function once(name, data, fn) {
  const key = lang + JSON.stringify(data);
  if (drawn[name] === key) return;
  drawn[name] = key;
  fn(data);
}

function drawTiles(sessions) {
  const s = t(lang);
  // A tile counts the connected sessions; those whose browser is gone
  // (kept for a resume) are shown apart, under it.
  const counts = Object.fromEntries(LEVELS.map((l) => [l, 0]));
  const away = Object.fromEntries(LEVELS.map((l) => [l, 0]));
  for (const x of sessions) if (x.level in counts) (x.connected ? counts : away)[x.level]++;
  $('tiles').replaceChildren(
    ...LEVELS.map((l) => {
      const tile = el('div', 'tile');
      tile.dataset.level = l;
      tile.dataset.away = String(away[l]);
      tile.append(el('div', 'lvl', l), el('div', 'count', String(counts[l])), el('div', 'name', s.levelNames[l]));
      if (away[l]) {
        const a = el('div', 'away', s.opsAway(away[l]));
        a.title = s.opsAwayTitle;
        tile.append(a);
      }
      return tile;
    }),
  );
}

function drawSessions(sessions) {
  const s = t(lang);
  const rows = [...sessions].sort((a, b) => Number(b.connected) - Number(a.connected) || String(a.level).localeCompare(String(b.level)) || String(a.id).localeCompare(String(b.id)));
  table('sessions', [s.opsSession, s.opsLevel, s.opsLimit, s.opsLang, s.opsSeniority, s.opsConnected, s.opsNode, s.opsUpdated], rows, (x) => [
    code(short(x.id), x.id),
    level(x.level),
    limit(x.limit),
    x.lang || '',
    x.seniority || '',
    x.connected ? s.yes : s.no,
    x.node || '',
    clock(x.updated_at),
  ], (tr, x) => {
    tr.dataset.session = x.id;
    tr.dataset.level = x.level;
    tr.dataset.limit = x.limit || '';
    tr.dataset.connected = String(!!x.connected);
  });
  $('sessions-empty').hidden = rows.length > 0;
}

function drawBackends(backends) {
  const s = t(lang);
  const rows = [...backends].sort((a, b) => String(a.level).localeCompare(String(b.level)) || String(a.name).localeCompare(String(b.name)));
  table('backends', [s.opsBackend, s.opsLevel, s.opsState, s.opsCircuit, s.opsPass, s.opsFail, s.opsTrial, s.opsUpdated], rows, (x) => {
    const st = el('span', 'state', x.state === 'down' ? s.down : s.up);
    st.dataset.state = x.state;
    const circuit = el('span', 'circuit', s['circuit_' + x.circuit] || String(x.circuit ?? ''));
    circuit.title = x.reason || '';
    return [x.name, level(x.level), st, circuit, String(x.consecutive_pass ?? ''), String(x.consecutive_fail ?? ''),
      x.last_trial && !String(x.last_trial).startsWith('0001') ? clock(x.last_trial) : '—', clock(x.changed_at || x.updated_at)];
  }, (tr, x) => {
    tr.dataset.backend = x.name;
    tr.dataset.state = x.state;
    tr.dataset.circuit = x.circuit;
  });
  $('backends-empty').hidden = rows.length > 0;
}

function drawTransitions(list) {
  const s = t(lang);
  const items = [...list].reverse().map((x) => {
    const li = el('li');
    li.dataset.session = x.session;
    li.dataset.to = x.to;
    li.dataset.reason = x.reason;
    const change = el('span', 'change');
    change.append(level(x.from), ' → ', level(x.to));
    const reason = el('span', 'reason', s.reasons[x.reason] || x.reason);
    reason.title = x.reason;
    li.append(el('span', 'at', clock(x.at)), code(short(x.session), x.session), change, reason, el('span', 'node', x.node || ''));
    return li;
  });
  $('transitions').replaceChildren(...items);
  $('transitions-empty').hidden = items.length > 0;
}

function drawDemo(demo) {
  const s = t(lang);
  const on = !!(demo && demo.demo);
  $('demo').hidden = !on;
  document.body.dataset.demo = on ? 'on' : 'off';
  if (!on) return;
  $('faults').replaceChildren(
    ...FAULTS.map((f) => {
      const active = !!demo.faults?.[f];
      const b = el('button', 'fault');
      b.type = 'button';
      b.dataset.fault = f;
      b.setAttribute('aria-pressed', String(active));
      b.append(el('span', 'label', s.faults[f]), el('span', 'sw', active ? s.on : s.off));
      b.addEventListener('click', () => setFault(f, !active));
      return b;
    }),
  );
}

async function setFault(fault, on) {
  try {
    await api('/ops/api/demo/faults', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ fault, on }),
    });
  } catch {
    $('status').textContent = t(lang).opsUnreachable;
  }
  poll();
}

async function clearFaults() {
  const faults = last.demo?.faults || {};
  await Promise.allSettled(FAULTS.filter((f) => faults[f]).map((f) => setFault(f, false)));
  poll();
}

function table(id, heads, rows, cells, decorate) {
  const tbl = $(id);
  const hr = el('tr');
  for (const hd of heads) hr.append(el('th', '', hd));
  tbl.tHead.replaceChildren(hr);
  tbl.tBodies[0].replaceChildren(
    ...rows.map((x) => {
      const tr = el('tr');
      for (const c of cells(x)) {
        const td = el('td');
        td.append(c);
        tr.append(td);
      }
      decorate(tr, x);
      return tr;
    }),
  );
  tbl.hidden = rows.length === 0;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function code(text, title) {
  const c = el('code', '', text);
  if (title) c.title = title;
  return c;
}

function level(l) {
  if (!l) return el('span', 'muted', '—');
  const e = el('span', 'lv', l);
  e.dataset.level = l || '';
  return e;
}

// limit shows the limit biting a session (empty when none).
function limit(name) {
  if (!name) return '';
  const e = el('span', 'limit', t(lang).limitNames[name] || name);
  e.dataset.limit = name;
  e.title = name;
  return e;
}

function short(id) {
  return String(id || '').slice(0, 8);
}

// clock formats a time (RFC 3339 string, unix ms or Date) as HH:MM:SS.
function clock(v) {
  if (v === undefined || v === null || v === '') return '';
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  return d.toLocaleTimeString(lang === 'zh' ? 'zh-CN' : 'en-GB', { hour12: false });
}

function setLang(l) {
  lang = l;
  applyStatic(document, l);
  document.title = t(l).opsTitle;
  document.body.dataset.lang = l;
  $('btn-lang').textContent = l === 'zh' ? 'English' : '中文';
  drawn = {};
  draw();
  drawFreshness();
}

setLang(lang);
$('btn-lang').addEventListener('click', () => setLang(lang === 'zh' ? 'en' : 'zh'));
$('btn-clear').addEventListener('click', clearFaults);
poll();
