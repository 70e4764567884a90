// copilot.js is the copilot page: the profile form, then the live view fed
// by the session's WebSocket, with the page's own coach when the server is
// out of reach. Query parameters (for tests and demos):
//   offline_after_ms   unreachable this long → local coach (default 60000)
//   ping_ms            heartbeat period (default 10000)
//   reconnect_max_ms   cap of the reconnect backoff (default 5000)
//   token              session token, when the server has auth.secret; the
//                      fragment (#token=…) is preferred: it never reaches
//                      server or proxy logs, nor a Referer
//   lang               zh | en, the first language shown

import { Connection } from './conn.js';
import { loadScript, fallbackCard } from './coach.js';
import { startCapture } from './audio.js';
import { applyStatic, chipFor, pickLang, t } from './i18n.js';
import { View } from './view.js';

const PROFILE_KEY = 'poise.profile.v1'; // localStorage: the candidate's profile
const SESSION_KEY = 'poise.session.v1'; // sessionStorage: {id, token} to resume after a reload
const CLIENT_SLA_MS = 3000; // no answer nor coach this long after a question → the local coach

const params = new URLSearchParams(location.search);
const fragment = new URLSearchParams(location.hash.slice(1));
const num = (k) => {
  const v = Number(params.get(k));
  return Number.isFinite(v) && v > 0 ? v : undefined;
};

const $ = (id) => document.getElementById(id);
const body = document.body;

const state = {
  profile: readProfile(),
  script: null, // the coach scripts, once loaded
  conn: null,
  view: null,
  serverLevel: '', // the session's level as the server last said
  serverChip: null,
  chipLang: '', // the profile language the server's chip was worded in
  sentLang: '', // the profile language the server knows
  localCoach: false, // the server is unreachable: coaching here
  capture: null,
  audioSocket: null, // the socket audio_start was sent on
  seq: 0, // client question counter
  lastFinalCaption: '',
  slaTimers: new Map(), // turn key → timer
  limit: null, // {limit, hint, until, lang}: a limit biting now (the server's `limit` message)
  limitTimer: 0, // clears limit at its until
  notice: null, // {code, text}: why the server refused the last hello; shown until a welcome
};

function readProfile() {
  let p = {};
  try {
    p = JSON.parse(localStorage.getItem(PROFILE_KEY) || '{}') || {};
  } catch {
    p = {};
  }
  const lang = pickLang(params.get('lang') || p.lang || navigator.language);
  return {
    lang,
    seniority: ['junior', 'mid', 'senior'].includes(p.seniority) ? p.seniority : 'mid',
    role: typeof p.role === 'string' ? p.role : '',
    resume: typeof p.resume === 'string' ? p.resume : '',
  };
}

function saveProfile() {
  try {
    localStorage.setItem(PROFILE_KEY, JSON.stringify(state.profile));
  } catch {
    // private mode: the profile lives for this page only
  }
}

function readSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    return s && s.id && s.token ? s : null;
  } catch {
    return null;
  }
}

function saveSession(s) {
  try {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  } catch {
    // no storage: a reload starts a new session
  }
}

const lang = () => state.profile.lang;
const strings = () => t(lang());

// --- profile form -----------------------------------------------------------

function fillForm() {
  const form = $('profile-form');
  form.elements.lang.value = state.profile.lang;
  form.elements.seniority.value = state.profile.seniority;
  $('role').value = state.profile.role;
  $('resume').value = state.profile.resume;
}

function readForm() {
  const form = $('profile-form');
  return {
    lang: pickLang(form.elements.lang.value),
    seniority: form.elements.seniority.value || 'mid',
    role: $('role').value.trim(),
    resume: $('resume').value.trim(),
  };
}

function setLang(l) {
  state.profile.lang = l;
  applyStatic(document, l);
  document.title = strings().title;
  state.view?.setLang(l);
  renderChip();
  body.dataset.lang = l;
}

function showView(name) {
  body.dataset.view = name;
  $('profile').hidden = name !== 'profile';
  $('live').hidden = name !== 'live';
  $('btn-start').textContent = state.conn ? strings().save : strings().start;
  if (name === 'live') $('ask').focus();
  else $('role').focus();
}

function onProfileSubmit(ev) {
  ev.preventDefault();
  state.profile = readForm();
  saveProfile();
  setLang(state.profile.lang);
  if (!state.conn) {
    connect(null);
  } else if (state.conn.send({ type: 'profile', profile: state.profile })) {
    state.sentLang = state.profile.lang;
  }
  showView('live');
}

// --- connection ---------------------------------------------------------------

function connect(session) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  state.conn = new Connection({
    url: `${proto}//${location.host}/ws`,
    session,
    config: { pingMs: num('ping_ms'), offlineAfterMs: num('offline_after_ms'), reconnectMaxMs: num('reconnect_max_ms') },
    hello: () => {
      const h = { profile: state.profile };
      const tok = fragment.get('token') || params.get('token');
      if (tok) h.token = tok;
      state.sentLang = state.profile.lang;
      return h;
    },
    onWelcome,
    onMessage,
    onState,
    onNotice: (code, message) => {
      // Quietly, in the status line: never a popup or a banner. A refused
      // hello (too many sessions…) stays there while the page retries.
      body.dataset.notice = code || '';
      const text = strings().notices[code] || message || code;
      if (!state.conn.established) state.notice = { code, text }; // a refused hello
      state.view.setStatus(text);
    },
  });
  state.conn.start();
}

function onWelcome(w, info) {
  state.notice = null;
  body.dataset.notice = '';
  saveSession(state.conn.session);
  body.dataset.session = w.session_id;
  state.localCoach = false;
  body.dataset.mode = 'server';
  setLevel(w.level, w.chip);
  if (info.resumed && state.sentLang !== state.profile.lang) {
    state.conn.send({ type: 'profile', profile: state.profile });
  }
  state.sentLang = state.profile.lang;
  if (state.capture) announceAudio();
  const s = strings();
  if (info.wasOffline || info.hadFailures) state.view.setStatus(info.newSession ? s.statusNewSession : s.statusResumed);
  else state.view.setStatus(s.statusConnected);
  syncDebug();
}

function onState(st, detail) {
  body.dataset.conn = st;
  const s = strings();
  $('btn-takeover').hidden = st !== 'replaced';
  switch (st) {
    case 'connecting':
      if (state.notice) state.view.setStatus(state.notice.text);
      else if (!state.serverLevel) state.view.setStatus(s.statusConnecting);
      break;
    case 'waiting':
      if (state.notice) state.view.setStatus(state.notice.text);
      else state.view.setStatus(detail.delayMs >= 1500 ? s.statusReconnectIn(Math.round(detail.delayMs / 1000)) : s.statusReconnecting);
      break;
    case 'offline':
      if (!state.localCoach) {
        state.localCoach = true;
        body.dataset.mode = 'local-coach';
        renderChip();
      }
      state.view.setStatus(state.notice ? state.notice.text : s.statusOffline);
      break;
    case 'replaced':
      state.view.setStatus(s.statusReplaced);
      break;
  }
  syncDebug();
}

function setLevel(level, chip) {
  if (level !== state.serverLevel) clearLimit(); // a level change ends the limit's chip
  state.serverLevel = level;
  state.serverChip = chip || null;
  state.chipLang = state.sentLang;
  body.dataset.level = level;
  // The last few levels, oldest first: lets anyone (and the tests) see a
  // visit to a level that the stream passed through quickly.
  const trail = (body.dataset.levelTrail || '').split(',').filter(Boolean);
  if (trail[trail.length - 1] !== level) trail.push(level);
  body.dataset.levelTrail = trail.slice(-12).join(',');
  renderChip();
}

// setLimit shows a limit that started to bite (the server's `limit`
// message) in the chip, even at L1, until it lifts or the level changes.
// A replayed limit that has already lifted is ignored.
function setLimit(m) {
  const until = Number(m.until) || 0;
  if (until && until <= Date.now()) return;
  clearLimit();
  state.limit = { limit: m.limit, hint: m.hint || '', until, lang: state.sentLang };
  body.dataset.limit = m.limit || '';
  if (until) state.limitTimer = setTimeout(() => clearLimit(true), until - Date.now());
  renderChip();
}

function clearLimit(render) {
  if (state.limitTimer) clearTimeout(state.limitTimer);
  state.limitTimer = 0;
  state.limit = null;
  body.dataset.limit = '';
  if (render) renderChip();
}

// renderChip shows the local coach chip while coaching offline, else a
// limit that bites (lite-mode text, the limit's hint), else the server's
// chip for its level (re-worded from the local table when the candidate
// has switched language since).
function renderChip() {
  if (!state.view) return;
  let chip = null;
  if (state.localCoach) chip = chipFor('L4', lang());
  else if (state.limit) {
    const s = strings();
    const hint = state.limit.lang === lang() && state.limit.hint ? state.limit.hint : s.limitHints[state.limit.limit] || state.limit.hint;
    chip = { text: s.limitChip, hint, kind: 'limit' };
  } else if (state.serverLevel && state.serverLevel !== 'L1') {
    chip = state.serverChip && state.chipLang === lang() ? state.serverChip : chipFor(state.serverLevel, lang());
  }
  state.view.setChip(chip);
}

function keyFor(id) {
  return id.startsWith('c-') ? id : `${state.conn.session?.id || ''}:${id}`;
}

function onMessage(m) {
  const v = state.view;
  switch (m.type) {
    case 'level':
      setLevel(m.level, m.chip);
      break;
    case 'limit':
      setLimit(m);
      break;
    case 'caption':
      v.caption(`${state.conn.session.id}:${m.utt_id}`, m.text, m.final);
      if (m.final) state.lastFinalCaption = m.text;
      break;
    case 'answer_start': {
      const turn = v.turn(keyFor(m.id), m.question);
      settle(turn);
      turn.answer = { level: m.level, source: m.source || '', note: m.note || '', text: '', reason: '' };
      v.update(turn);
      break;
    }
    case 'answer_delta': {
      const turn = v.has(keyFor(m.id)) ? v.turn(keyFor(m.id)) : null;
      if (turn && turn.answer) v.appendAnswer(turn, m.text);
      break;
    }
    case 'answer_end': {
      const turn = v.has(keyFor(m.id)) ? v.turn(keyFor(m.id)) : null;
      if (turn && turn.answer) {
        turn.answer.reason = m.reason;
        v.update(turn);
      }
      break;
    }
    case 'coach': {
      const key = keyFor(m.id);
      const turn = v.turn(key, v.has(key) ? '' : state.lastFinalCaption);
      settle(turn);
      const card = { kind: m.kind, countdown_s: m.countdown_s, framework: m.framework, tips: m.tips };
      const fresh = !turn.coach || turn.local;
      turn.coach = card;
      turn.local = false;
      if (fresh) turn.countdownEnd = card.kind === 'question' && card.countdown_s > 0 ? Date.now() + card.countdown_s * 1000 : 0;
      v.update(turn);
      break;
    }
  }
  syncDebug();
}

// settle stops a turn's client-side SLA timer: content arrived.
function settle(turn) {
  turn.pending = false;
  const id = state.slaTimers.get(turn.key);
  if (id) clearTimeout(id);
  state.slaTimers.delete(turn.key);
}

// --- questions --------------------------------------------------------------

function ask(text) {
  text = text.trim();
  if (!text) return;
  const id = `c-${Date.now().toString(36)}-${++state.seq}`;
  const turn = state.view.turn(id, text);
  if (!state.localCoach && state.conn && state.conn.send({ type: 'question', id, text })) {
    turn.pending = true;
    state.slaTimers.set(
      id,
      setTimeout(() => {
        state.slaTimers.delete(id);
        if (turn.pending && !turn.answer && !turn.coach) coachLocally(turn);
      }, CLIENT_SLA_MS),
    );
  } else {
    coachLocally(turn);
  }
  syncDebug();
}

// coachLocally gives a turn the page's own coach card: never blank.
function coachLocally(turn) {
  turn.pending = false;
  turn.coach = state.script ? state.script.card(turn.question, lang()) : fallbackCard(lang());
  turn.local = true;
  turn.countdownEnd = turn.coach.kind === 'question' ? Date.now() + turn.coach.countdown_s * 1000 : 0;
  state.view.update(turn);
}

function resetAI() {
  if (!state.conn) return;
  if (!state.conn.send({ type: 'reset_ai' })) state.conn.reconnectNow();
}

// --- audio ------------------------------------------------------------------

async function startAudio(source) {
  stopAudio(false);
  let cap;
  try {
    cap = await startCapture(source, sendFrame);
  } catch (e) {
    const s = strings();
    const reason = e && e.reason;
    state.view.setStatus(reason === 'no-tab-audio' ? s.statusNoTabAudio : reason === 'unsupported' ? s.statusAudioUnsupported : s.statusAudioDenied);
    return;
  }
  state.capture = cap;
  cap.onEnded = () => stopAudio(true);
  announceAudio();
  renderAudio();
}

function announceAudio() {
  const c = state.capture;
  if (!c || !state.conn) return;
  if (state.conn.send({ type: 'audio_start', sample_rate: 16000, encoding: 'pcm_s16le', source: c.source })) {
    state.audioSocket = state.conn.ws;
  }
}

function sendFrame(buf) {
  if (!state.conn) return;
  if (state.audioSocket !== state.conn.ws) announceAudio();
  if (state.audioSocket === state.conn.ws) state.conn.sendBinary(buf);
}

function stopAudio(tell) {
  const c = state.capture;
  if (!c) return;
  c.stop();
  state.capture = null;
  if (state.conn && state.audioSocket === state.conn.ws) state.conn.send({ type: 'audio_stop' });
  state.audioSocket = null;
  if (tell) state.view.setStatus(strings().statusAudioStopped);
  renderAudio();
}

function renderAudio() {
  const c = state.capture;
  $('btn-tab').hidden = !!c;
  $('btn-mic').hidden = !!c;
  $('btn-stop').hidden = !c;
  body.dataset.audio = c ? c.source : '';
  const s = strings();
  $('btn-stop-text').textContent = c ? `${c.source === 'tab' ? s.listeningTab : s.listeningMic} · ${s.stopAudio}` : s.stopAudio;
}

// --- keyboard, debug, start -------------------------------------------------

function onKey(ev) {
  const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement;
  if (ev.altKey && ev.code === 'KeyR' && body.dataset.view === 'live') {
    ev.preventDefault();
    resetAI();
  } else if (ev.key === '/' && !typing && body.dataset.view === 'live') {
    ev.preventDefault();
    $('ask').focus();
  } else if (ev.key === 'Escape' && ev.target === $('ask')) {
    $('ask').value = '';
    $('ask').blur();
  }
}

// syncDebug mirrors the stream's bookkeeping on <body> for tests and for
// anyone looking at the page with devtools.
function syncDebug() {
  const c = state.conn;
  if (!c) return;
  body.dataset.lastSeq = String(c.lastSeq);
  body.dataset.gaps = String(c.gaps);
  body.dataset.duplicates = String(c.duplicates);
}

function main() {
  state.view = new View(document, lang());
  fillForm();
  setLang(lang());
  $('profile-form').addEventListener('submit', onProfileSubmit);
  $('profile-form').addEventListener('change', (ev) => {
    if (ev.target.name === 'lang') setLang(pickLang(ev.target.value));
  });
  $('ask-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ask($('ask').value);
    $('ask').value = '';
  });
  $('btn-reset').addEventListener('click', resetAI);
  $('btn-profile').addEventListener('click', () => {
    fillForm();
    showView('profile');
  });
  $('btn-tab').addEventListener('click', () => startAudio('tab'));
  $('btn-mic').addEventListener('click', () => startAudio('mic'));
  $('btn-stop').addEventListener('click', () => stopAudio(true));
  $('btn-takeover').addEventListener('click', () => state.conn?.takeOver());
  document.addEventListener('keydown', onKey);
  window.addEventListener('pagehide', () => stopAudio(false));
  loadScript().then((s) => {
    state.script = s;
    body.dataset.scripts = s ? 'loaded' : 'missing';
  });
  const saved = readSession();
  if (saved && localStorage.getItem(PROFILE_KEY)) {
    connect(saved); // a reload: resume and replay the session from its start
    showView('live');
  } else {
    showView('profile');
  }
}

main();
