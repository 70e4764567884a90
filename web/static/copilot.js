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
//   status_fade_ms     how long "Reconnected…" stays before "Connected" (default 5000)

import { Connection } from './conn.js';
import { loadScript, fallbackCard } from './coach.js';
import { startCapture } from './audio.js';
import { applyStatic, chipFor, pickLang, t } from './i18n.js';
import { View, unmarked } from './view.js';
import { Record, download } from './record.js';
import { Cropper, captureOnce, encode, fileToCanvas, grabFrame, imageParts } from './shot.js';

const PROFILE_KEY = 'poise.profile.v1'; // localStorage: the candidate's profile
const SESSION_KEY = 'poise.session.v1'; // sessionStorage: {id, token} to resume after a reload
const AUTO_KEY = 'poise.autoAnswer.v1'; // localStorage: the auto-answer switch, "true" | "false"
const CLIENT_SLA_MS = 3000; // no answer nor coach this long after a question → the local coach
const STATUS_FADE_MS = 5000; // a "Reconnected…" status gives way to "Connected" after this
const STATUS_DIM_MS = 1000; // … dimming for its last second
const NARROW = '(max-width: 900px), (pointer: coarse)'; // phones and tablets: no keyboard hints
const FILE_PART = 40 * 1024; // bytes of a profile file per profile_file message (base64 fits a 64 KiB frame)
const FILE_MAX = 1024 * 1024; // the server's cap on a profile file
const FILE_BURST = 320 * 1024; // bytes sent at once before pacing (the server allows 512 KiB of text at once)
const FILE_PACE_MS = 400; // between later parts: about 100 KiB/s of base64, under the server's 128 KiB/s

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
  captures: {}, // source (tab | mic) → its running Capture
  audioSockets: {}, // source → the socket its audio_start was sent on
  record: new Record(), // what this page received, for the download
  pendingFiles: {}, // kind (resume | job) → a File chosen before the session started
  lastHeard: '', // the last final caption not the candidate's
  cropper: null, // the screenshot dialog (shot.js)
  seq: 0, // client question counter
  lastFinalCaption: '',
  slaTimers: new Map(), // turn key → timer
  limit: null, // {limit, hint, until, lang}: a limit biting now (the server's `limit` message)
  limitTimer: 0, // clears limit at its until
  notice: null, // {code, text}: why the server refused the last hello; shown until a welcome
  status: { key: '', args: [], kind: '', text: '' }, // the status line, as an i18n key: re-worded on a language change
  statusTimers: [], // fade a transient status
  autoAnswer: readAutoAnswer(),
  unseenCaptions: 0, // final captions that came while the captions panel was closed (narrow screens)
  captions: 'live', // the caption chain's state (the server's `captions` message): live | degraded | paused
};

function readAutoAnswer() {
  try {
    return localStorage.getItem(AUTO_KEY) !== 'false';
  } catch {
    return true;
  }
}

function saveAutoAnswer() {
  try {
    localStorage.setItem(AUTO_KEY, String(state.autoAnswer));
  } catch {
    // private mode: the switch lives for this page only
  }
}

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
    job: typeof p.job === 'string' ? p.job : '',
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
  $('job').value = state.profile.job;
}

function readForm() {
  const form = $('profile-form');
  return {
    lang: pickLang(form.elements.lang.value),
    seniority: form.elements.seniority.value || 'mid',
    role: $('role').value.trim(),
    resume: $('resume').value.trim(),
    job: $('job').value.trim(),
  };
}

function setLang(l) {
  state.profile.lang = l;
  applyStatic(document, l);
  document.title = strings().title;
  if (matchMedia(NARROW).matches) $('ask').placeholder = strings().askPlaceholderTouch;
  state.view?.setLang(l);
  state.view?.setCaptionsState(state.captions);
  renderChip();
  renderAudio();
  renderStart();
  renderStatus();
  body.dataset.lang = l;
}

// renderStart words the profile form's button: "Start" before the
// session, "Save" once it runs.
function renderStart() {
  $('btn-start').textContent = state.conn ? strings().save : strings().start;
}

function showView(name) {
  body.dataset.view = name;
  $('profile').hidden = name !== 'profile';
  $('live').hidden = name !== 'live';
  renderStart();
  if (name === 'live') $('ask').focus();
  else $('role').focus();
}

// --- status line ----------------------------------------------------------------

// setStatus shows an i18n key (with args) in the status line, so a language
// change re-words it. kind 'audio' marks an audio problem: it gives way as
// soon as audio runs again (renderAudio), so the line never contradicts
// the header. fade: a transient message that gives way to "Connected".
function setStatus(key, { args = [], kind = '', fade = false, text = '' } = {}) {
  for (const id of state.statusTimers) clearTimeout(id);
  state.statusTimers = [];
  state.status = { key, args, kind, text, dim: false };
  if (fade) {
    const ms = num('status_fade_ms') || STATUS_FADE_MS;
    const mine = state.status;
    state.statusTimers.push(
      setTimeout(() => {
        mine.dim = true;
        if (state.status === mine) renderStatus();
      }, Math.max(0, ms - STATUS_DIM_MS)),
      setTimeout(() => {
        if (state.status === mine && body.dataset.conn === 'open') setStatus('statusConnected');
      }, ms),
    );
  }
  renderStatus();
}

function renderStatus() {
  if (!state.view) return;
  const st = state.status;
  const s = strings();
  let text = st.text;
  if (st.key === 'notice') text = s.notices[st.args[0]] || st.text || st.args[0];
  else if (typeof s[st.key] === 'function') text = s[st.key](...st.args);
  else if (typeof s[st.key] === 'string') text = s[st.key];
  state.view.setStatus(text, st.dim);
  body.dataset.status = st.key;
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
      const h = { profile: state.profile, auto_answer: state.autoAnswer };
      const tok = fragment.get('token') || params.get('token');
      if (tok) h.token = tok;
      state.sentLang = state.profile.lang;
      return h;
    },
    onWelcome,
    onMessage,
    onState,
    onNotice: (code, message, reason) => {
      // Quietly, in the status line: never a popup or a banner. A refused
      // hello (too many sessions…) stays there while the page retries.
      body.dataset.notice = code || '';
      if (!state.conn.established) state.notice = { code, message }; // a refused hello
      if (code === 'bad_file' && state.reading) fileStatus(state.reading.kind, strings().fileBad(state.reading.name, reason), 'error');
      if (code === 'too_large' && state.reading) fileStatus(state.reading.kind, strings().fileTooLarge(state.reading.name), 'error');
      setStatus('notice', { args: [code], text: message || code });
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
  if (!state.record.levels.length) state.record.level({ level: w.level }, true);
  setLevel(w.level, w.chip);
  for (const [kind, file] of Object.entries(state.pendingFiles)) uploadFile(kind, file);
  state.pendingFiles = {};
  setCaptions('live'); // the server says so after the welcome when they are not
  if (info.resumed && state.sentLang !== state.profile.lang) {
    state.conn.send({ type: 'profile', profile: state.profile });
  }
  state.sentLang = state.profile.lang;
  for (const source of Object.keys(state.captures)) announceAudio(source);
  if (info.wasOffline || info.hadFailures) setStatus(info.newSession ? 'statusNewSession' : 'statusResumed', { fade: true });
  else setStatus('statusConnected');
  offerUnsent();
  syncDebug();
}

function onState(st, detail) {
  body.dataset.conn = st;
  $('btn-takeover').hidden = st !== 'replaced';
  const notice = () => setStatus('notice', { args: [state.notice.code], text: state.notice.message || state.notice.code });
  switch (st) {
    case 'connecting':
      if (state.notice) notice();
      else if (!state.serverLevel) setStatus('statusConnecting');
      break;
    case 'waiting':
      if (state.notice) notice();
      else if (detail.delayMs >= 1500) setStatus('statusReconnectIn', { args: [Math.round(detail.delayMs / 1000)] });
      else setStatus('statusReconnecting');
      break;
    case 'offline':
      if (!state.localCoach) {
        state.localCoach = true;
        body.dataset.mode = 'local-coach';
        renderChip();
      }
      if (state.notice) notice();
      else setStatus('statusOffline');
      break;
    case 'replaced':
      setStatus('statusReplaced');
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
      state.record.level(m);
      setLevel(m.level, m.chip);
      break;
    case 'profile_file':
      onProfileFile(m);
      break;
    case 'limit':
      setLimit(m);
      break;
    case 'captions':
      setCaptions(m.state);
      break;
    case 'caption':
      v.caption(`${state.conn.session.id}:${m.utt_id}`, m.text, m.final, speakerLabel(m.speaker));
      state.record.caption(m);
      if (m.final) {
        if (m.speaker !== 'candidate') state.lastHeard = unmarked(m.text).text;
        if (m.speaker !== 'candidate') state.lastFinalCaption = unmarked(m.text).text;
        if (body.dataset.captions !== 'open') state.unseenCaptions++;
        renderCaptionsToggle();
      }
      break;
    case 'answer_start': {
      if (!v.has(keyFor(m.id))) showCaptions(false); // a new answer: back to it on a narrow screen
      const turn = v.turn(keyFor(m.id), m.question);
      settle(turn);
      turn.answer = { level: m.level, source: m.source || '', note: m.note || '', via: m.via || '', text: '', reason: '',
        matched: m.matched || '', outline: Array.isArray(m.outline) ? m.outline : [], type: m.question_type || '' };
      turn.style = m.style || '';
      v.update(turn);
      state.record.answerStart(m);
      body.dataset.answerStyle = turn.style;
      break;
    }
    case 'answer_delta': {
      const turn = v.has(keyFor(m.id)) ? v.turn(keyFor(m.id)) : null;
      if (turn && turn.answer) v.appendAnswer(turn, m.text);
      state.record.answerDelta(m);
      break;
    }
    case 'answer_end': {
      const turn = v.has(keyFor(m.id)) ? v.turn(keyFor(m.id)) : null;
      if (turn && turn.answer) {
        turn.answer.reason = m.reason;
        v.update(turn);
      }
      state.record.answerEnd(m);
      break;
    }
    case 'screenshot_text': {
      const turn = v.has(keyFor(m.id)) ? v.turn(keyFor(m.id)) : null;
      if (turn) {
        turn.read = m.text;
        v.update(turn);
      }
      break;
    }
    case 'coach': {
      const key = keyFor(m.id);
      const turn = v.turn(key, v.has(key) ? '' : state.lastFinalCaption);
      settle(turn);
      const card = { kind: m.kind, countdown_s: m.countdown_s, framework: m.framework, tips: m.tips, question_type: m.question_type || '' };
      const fresh = !turn.coach || turn.local;
      turn.coach = card;
      turn.local = false;
      state.record.coach(m, turn.question);
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
  showCaptions(false);
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
    turn.unsent = true; // the server never saw it: offered again after the reconnect
    coachLocally(turn);
  }
  syncDebug();
}

// --- screenshot questions ------------------------------------------------------

// captureQuestion takes the current frame of the shared tab (or asks for
// a screen to share, for one frame) and opens the cropper.
async function captureQuestion() {
  try {
    const track = state.captures.tab?.video;
    const canvas = track && track.readyState === 'live' ? await grabFrame(track) : await captureOnce();
    state.cropper.open(canvas);
  } catch {
    setStatus('shotFailed');
  }
}

async function openImageFile(file) {
  if (!file || !file.type.startsWith('image/')) return false;
  try {
    state.cropper.open(await fileToCanvas(file));
  } catch {
    setStatus('shotFailed');
  }
  return true;
}

function onPaste(ev) {
  if (body.dataset.view !== 'live') return;
  const item = [...(ev.clipboardData?.items || [])].find((it) => it.kind === 'file' && it.type.startsWith('image/'));
  if (!item) return; // text pastes into the question box as usual
  ev.preventDefault();
  openImageFile(item.getAsFile());
}

function onDrop(ev) {
  const file = [...(ev.dataTransfer?.files || [])].find((f) => f.type.startsWith('image/'));
  if (!file || body.dataset.view !== 'live') return;
  ev.preventDefault();
  openImageFile(file);
}

// sendShot encodes the (cropped) screenshot within the protocol's caps
// and sends it as one question.
async function sendShot(canvas, box) {
  let img;
  try {
    img = await encode(canvas, box);
  } catch {
    setStatus('shotFailed');
    return;
  }
  const id = `c-${Date.now().toString(36)}-${++state.seq}`;
  showCaptions(false);
  const turn = state.view.turn(id, strings().screenshotQuestion);
  turn.shot = true;
  body.dataset.shotBytes = String(img.bytes.length);
  body.dataset.shotFormat = img.format;
  if (state.localCoach || !state.conn) {
    coachLocally(turn);
    return;
  }
  for (const part of imageParts(id, img.format, img.bytes)) {
    if (!state.conn.send(part)) {
      coachLocally(turn);
      return;
    }
  }
  turn.pending = true;
  state.slaTimers.set(
    id,
    setTimeout(() => {
      state.slaTimers.delete(id);
      if (turn.pending && !turn.answer && !turn.coach) coachLocally(turn);
    }, CLIENT_SLA_MS),
  );
  syncDebug();
}

function onAskRead(ev) {
  const b = ev.target.closest('.ask-read');
  if (!b) return;
  const ta = b.parentElement.querySelector('.read-text');
  if (ta && ta.value.trim()) ask(ta.value);
}

// offerUnsent offers, after a welcome, every question typed while the
// server was unreachable (and coached here) to be asked again. Offered,
// not sent: the interview has moved on, and the candidate decides.
function offerUnsent() {
  for (const turn of state.view.turns.values()) {
    if (turn.unsent && !turn.answer && !turn.offerRetry) {
      turn.offerRetry = true;
      state.view.update(turn);
    }
  }
}

function onAskAgain(ev) {
  const b = ev.target.closest('.ask-again');
  if (!b) return;
  const turn = state.view.turns.get(b.dataset.key);
  if (!turn) return;
  turn.offerRetry = false;
  turn.unsent = false;
  state.view.update(turn);
  ask(turn.question);
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

// The page may hear two streams at once: the shared tab (the interviewer)
// and the microphone (the candidate, while the tab runs). With one stream
// its frames go as they are; with two, each frame starts with its stream's
// tag byte ('t' or 'm'), which makes its length odd.
const TAGS = { tab: 0x74, mic: 0x6d };

async function startAudio(source) {
  stopAudio(false, source);
  let cap;
  try {
    cap = await startCapture(source, (buf) => sendFrame(source, buf));
  } catch (e) {
    const reason = e && e.reason;
    setStatus(reason === 'no-tab-audio' ? 'statusNoTabAudio' : reason === 'unsupported' ? 'statusAudioUnsupported' : 'statusAudioDenied', { kind: 'audio' });
    return;
  }
  state.captures[source] = cap;
  cap.onEnded = () => stopAudio(true, source);
  announceAudio(source);
  renderAudio();
}

function announceAudio(source) {
  const c = state.captures[source];
  if (!c || !state.conn) return;
  if (state.conn.send({ type: 'audio_start', sample_rate: 16000, encoding: 'pcm_s16le', source })) {
    state.audioSockets[source] = state.conn.ws;
  }
}

function sendFrame(source, buf) {
  if (!state.conn) return;
  if (state.audioSockets[source] !== state.conn.ws) announceAudio(source);
  if (state.audioSockets[source] !== state.conn.ws) return;
  if (Object.keys(state.captures).length < 2) {
    state.conn.sendBinary(buf);
    return;
  }
  const tagged = new Uint8Array(buf.byteLength + 1);
  tagged[0] = TAGS[source];
  tagged.set(new Uint8Array(buf), 1);
  state.conn.sendBinary(tagged.buffer);
}

// stopAudio stops one source's capture, or every one when source is unset.
function stopAudio(tell, source) {
  const sources = source ? [source] : Object.keys(state.captures);
  let stopped = false;
  for (const src of sources) {
    const c = state.captures[src];
    if (!c) continue;
    c.stop();
    delete state.captures[src];
    if (state.conn && state.audioSockets[src] === state.conn.ws) state.conn.send({ type: 'audio_stop', source: src });
    delete state.audioSockets[src];
    stopped = true;
  }
  if (!stopped) return;
  if (tell) setStatus('statusAudioStopped', { kind: 'audio' });
  renderAudio();
}

// renderAudio shows the audio state in the header; it is the one source
// of truth: an audio problem in the status line gives way while audio runs.
function renderAudio() {
  const sources = Object.keys(state.captures).sort((a, b) => (a === 'tab' ? -1 : b === 'tab' ? 1 : 0));
  const any = sources.length > 0;
  $('btn-tab').hidden = !!state.captures.tab;
  $('btn-mic').hidden = !!state.captures.mic;
  $('btn-stop').hidden = !any;
  body.dataset.audio = sources.join('+');
  const s = strings();
  const stop = $('btn-stop-text');
  stop.replaceChildren();
  if (any) {
    const long = document.createElement('span');
    long.className = 'long';
    const listening = state.captions === 'paused' ? s.captionsPausedShort : sources.map((src) => (src === 'tab' ? s.listeningTab : s.listeningMic)).join(' + ');
    long.textContent = `${listening} · ${s.stopAudio}`;
    const short = document.createElement('span');
    short.className = 'short';
    short.textContent = s.stopAudio;
    stop.append(long, short);
    stop.title = long.textContent;
  } else {
    stop.textContent = s.stopAudio;
  }
  if (any && state.status.kind === 'audio') setStatus(body.dataset.conn === 'open' ? 'statusConnected' : '');
}

function speakerLabel(speaker) {
  const s = strings();
  return speaker === 'candidate' ? s.speakerYou : speaker === 'interviewer' ? s.speakerInterviewer : '';
}

// --- profile files ------------------------------------------------------------

// onFilePicked reads a chosen résumé or job file: on the server (PDF, DOCX,
// TXT, Markdown → text, in 40 KiB parts), or, before the session starts,
// once it has (a TXT or Markdown file is read here at once).
async function onFilePicked(kind, input) {
  const file = input.files && input.files[0];
  input.value = '';
  if (!file) return;
  if (file.size > FILE_MAX) {
    fileStatus(kind, strings().fileTooLarge(file.name), 'error');
    return;
  }
  if (/\.(txt|md|markdown)$/i.test(file.name) && !state.conn) {
    $(kind).value = (await file.text()).slice(0, 8000);
    fileStatus(kind, strings().fileRead(file.name, $(kind).value.length), 'read');
    return;
  }
  if (!state.conn || !state.conn.established) {
    state.pendingFiles[kind] = file;
    fileStatus(kind, strings().fileWaiting(file.name), 'waiting');
    return;
  }
  uploadFile(kind, file);
}

async function uploadFile(kind, file) {
  fileStatus(kind, strings().fileReading(file.name), 'reading');
  state.reading = { kind, name: file.name };
  const bytes = new Uint8Array(await file.arrayBuffer());
  let sent = 0;
  for (let part = 0; sent < bytes.length || part === 0; part++) {
    const chunk = bytes.subarray(sent, sent + FILE_PART);
    const msg = { type: 'profile_file', kind, name: file.name, part, size: bytes.length, last: sent + chunk.length >= bytes.length, data: base64(chunk) };
    if (!state.conn.send(msg)) return;
    sent += chunk.length;
    if (sent > FILE_BURST && sent < bytes.length) await new Promise((r) => setTimeout(r, FILE_PACE_MS));
  }
}

function base64(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

// onProfileFile puts the text the server read into the profile form.
function onProfileFile(m) {
  const kind = m.kind === 'job' ? 'job' : 'resume';
  $(kind).value = m.text.slice(0, 8000);
  state.profile[kind] = $(kind).value;
  saveProfile();
  state.facts = m.facts || {};
  body.dataset.facts = JSON.stringify(state.facts);
  fileStatus(kind, strings().fileRead(m.name, m.text.length), 'read');
}

function fileStatus(kind, text, st) {
  const el = $(`${kind}-file-status`);
  el.textContent = text;
  el.dataset.state = st;
  body.dataset[`${kind}File`] = st;
}

// --- answer controls, review and record ---------------------------------------------

// control sends an answer control (answer_now, regenerate, shorter,
// deeper) or review; the server answers like a question, or says in an
// error why it cannot.
function control(type) {
  if (!state.conn || state.localCoach) return;
  if (type === 'answer_now' && !state.lastHeard) {
    setStatus('notice', { args: ['no_question'] });
    return;
  }
  if (!state.conn.send({ type })) state.conn.reconnectNow();
}

function saveRecord(kind) {
  const id = state.conn?.session?.id || 'session';
  const stamp = new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-');
  if (kind === 'json') download(`poise-${stamp}.json`, 'application/json', JSON.stringify(state.record.json(id), null, 2));
  else download(`poise-${stamp}.md`, 'text/markdown', state.record.markdown(id, strings()));
}

// --- auto-answer and captions -------------------------------------------------

function renderAutoAnswer() {
  $('auto-answer').checked = state.autoAnswer;
  body.dataset.autoAnswer = String(state.autoAnswer);
}

function onAutoAnswer() {
  state.autoAnswer = $('auto-answer').checked;
  saveAutoAnswer();
  renderAutoAnswer();
  state.conn?.send({ type: 'profile', profile: state.profile, auto_answer: state.autoAnswer });
}

// setCaptions follows the caption chain's state: a quiet line by the
// captions and, when paused, the header's audio button says so instead of
// "Listening…". Independent of the level; never an error.
function setCaptions(st) {
  state.captions = ['live', 'degraded', 'paused'].includes(st) ? st : 'live';
  body.dataset.captionsState = state.captions;
  state.view.setCaptionsState(state.captions);
  renderAudio();
}

// showCaptions opens or closes the captions panel of narrow screens (wide
// ones show it beside the answer all the time).
function showCaptions(open) {
  body.dataset.captions = open ? 'open' : '';
  if (open) state.unseenCaptions = 0;
  renderCaptionsToggle();
}

function renderCaptionsToggle() {
  const open = body.dataset.captions === 'open';
  $('btn-captions').setAttribute('aria-pressed', String(open));
  $('captions-badge').hidden = open || state.unseenCaptions === 0;
  $('captions-badge').textContent = String(state.unseenCaptions);
}

// --- keyboard, debug, start -------------------------------------------------

// CONTROL_KEYS are the answer controls' hotkeys, with Alt: N answer now,
// G regenerate, S shorter, M more depth (Alt+D is the browser's address
// bar).
const CONTROL_KEYS = { KeyN: 'answer_now', KeyG: 'regenerate', KeyS: 'shorter', KeyM: 'deeper' };

function onKey(ev) {
  const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement;
  if (ev.altKey && ev.code === 'KeyR' && body.dataset.view === 'live') {
    ev.preventDefault();
    resetAI();
  } else if (ev.altKey && CONTROL_KEYS[ev.code] && body.dataset.view === 'live') {
    ev.preventDefault();
    control(CONTROL_KEYS[ev.code]);
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
  renderAutoAnswer();
  $('auto-answer').addEventListener('change', onAutoAnswer);
  $('btn-captions').addEventListener('click', () => showCaptions(body.dataset.captions !== 'open'));
  $('live').addEventListener('click', onAskAgain);
  $('live').addEventListener('click', onAskRead);
  state.cropper = new Cropper(document, sendShot);
  $('btn-shot').addEventListener('click', captureQuestion);
  document.addEventListener('paste', onPaste);
  document.addEventListener('dragover', (ev) => {
    if (body.dataset.view === 'live' && [...(ev.dataTransfer?.items || [])].some((it) => it.kind === 'file')) ev.preventDefault();
  });
  document.addEventListener('drop', onDrop);
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
  $('resume-file').addEventListener('change', (ev) => onFilePicked('resume', ev.target));
  $('job-file').addEventListener('change', (ev) => onFilePicked('job', ev.target));
  for (const [id, type] of [['btn-answer-now', 'answer_now'], ['btn-regenerate', 'regenerate'], ['btn-shorter', 'shorter'], ['btn-deeper', 'deeper'], ['btn-review', 'review']]) {
    $(id).addEventListener('click', () => control(type));
  }
  $('btn-record-md').addEventListener('click', () => saveRecord('md'));
  $('btn-record-json').addEventListener('click', () => saveRecord('json'));
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
