// conn.js keeps the copilot page's WebSocket to /ws alive: hello and resume,
// sequence tracking (nothing applied twice, gaps counted), pings, reconnects
// with jittered, capped backoff, and the "unreachable for a while" signal
// that switches the page to its own coach.

// Close codes the server uses besides the standard ones (session/conn.go).
const CLOSE_REPLACED = 4001; // a newer connection resumed this session
const CLOSE_ENDED = 4002; // the session ended; start a new one

// Handshake error codes after which a resume cannot work; the connection
// then starts a fresh session on the same socket.
const RESUME_FAILED = new Set(['unknown_session', 'bad_resume_token', 'resume_gap']);

// Handshake error codes that no retry can cure: the server closes the
// socket (1008) and the connection stops instead of reconnecting. A new
// token means a new page load.
const REFUSED = new Set(['unauthorized']);

export const DEFAULTS = Object.freeze({
  pingMs: 10000, // heartbeat: the server drops a silent session to L4 after 60 s
  offlineAfterMs: 60000, // unreachable this long → local coach
  reconnectMinMs: 300, // first retry delay before jitter
  reconnectMaxMs: 5000, // cap of the retry delay
});

// Connection is one copilot session's link to the server. It owns its
// WebSocket and timers; stop() ends all of them. Callbacks:
//   onWelcome(welcome, {resumed, newSession})  after each successful hello
//   onMessage(msg)                             each sequenced message, once, in order
//   onState(state, detail)                     'connecting' | 'open' | 'waiting' | 'offline' | 'replaced' | 'refused'
//   onNotice(code, message, reason)            a server error message (for the status line)
export class Connection {
  constructor(opts) {
    this.url = opts.url;
    this.hello = opts.hello; // () => hello fields {profile, token}
    this.cfg = { ...DEFAULTS, ...clean(opts.config) };
    this.onWelcome = opts.onWelcome || (() => {});
    this.onMessage = opts.onMessage || (() => {});
    this.onState = opts.onState || (() => {});
    this.onNotice = opts.onNotice || (() => {});
    this.random = opts.random || Math.random;
    this.session = opts.session || null; // {id, token} of the session to resume
    this.lastSeq = 0; // highest seq applied in this session's stream
    this.gaps = 0; // messages the stream skipped (should stay 0)
    this.duplicates = 0; // replayed messages ignored because already applied
    this.rewinds = 0; // resumes whose server stream was behind this page
    this.ws = null;
    this.established = false; // welcome received on the current socket
    this.attempt = 0; // failed connects since the last welcome
    this.offline = false; // unreachable for offlineAfterMs
    this.stopped = false;
    this.timers = { retry: 0, offline: 0, ping: 0, watchdog: 0 };
    this.onBrowserOnline = () => this.reconnectNow();
  }

  // start opens the first connection; the offline clock runs from now, so
  // a page that never reaches the server still coaches after the delay.
  start() {
    window.addEventListener('online', this.onBrowserOnline);
    this.armOffline();
    this.connect();
  }

  // stop closes the socket and cancels every timer; nothing reconnects.
  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.onBrowserOnline);
    for (const k of Object.keys(this.timers)) this.clear(k);
    if (this.ws) this.ws.close(1000, 'page closed');
  }

  // send sends a client message when a session is attached and reports
  // whether it did.
  send(msg) {
    if (!this.established || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  // sendBinary sends one audio frame when a session is attached.
  sendBinary(buf) {
    if (!this.established || this.ws.readyState !== WebSocket.OPEN) return false;
    // A backlog over 1 MiB means the link is stalling: drop audio rather
    // than queue seconds of it.
    if (this.ws.bufferedAmount > 1 << 20) return false;
    this.ws.send(buf);
    return true;
  }

  // reconnectNow skips the remaining backoff (the candidate pressed a
  // button, or the browser came back online).
  reconnectNow() {
    if (this.stopped || this.established || (this.ws && this.ws.readyState === WebSocket.CONNECTING)) return;
    this.clear('retry');
    this.attempt = 0;
    this.connect();
  }

  // takeOver reconnects after another window took the session (4001).
  takeOver() {
    this.stopped = false;
    this.reconnectNow();
  }

  connect() {
    if (this.stopped) return;
    this.onState(this.offline ? 'offline' : 'connecting', {});
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.established = false;
    this.resuming = false;
    ws.onopen = () => this.sendHello(ws);
    ws.onmessage = (ev) => this.receive(ws, ev);
    ws.onclose = (ev) => this.closed(ws, ev);
    ws.onerror = () => {}; // onclose follows and handles it; nothing to show
  }

  sendHello(ws) {
    const msg = { type: 'hello', v: 1, ...this.hello() };
    if (this.session) {
      msg.resume = { session_id: this.session.id, token: this.session.token, last_seq: this.lastSeq };
      this.resuming = true;
    } else {
      this.resuming = false;
    }
    ws.send(JSON.stringify(msg));
  }

  receive(ws, ev) {
    if (ws !== this.ws || typeof ev.data !== 'string') return;
    let msg;
    try {
      msg = JSON.parse(ev.data);
    } catch {
      return;
    }
    this.feedWatchdog();
    if (!this.established) {
      this.handshake(ws, msg);
      return;
    }
    const seq = Number(msg.seq) || 0;
    if (seq === 0) {
      if (msg.type === 'error') this.onNotice(msg.code, msg.message, msg.reason);
      return;
    }
    if (seq <= this.lastSeq) {
      this.duplicates++;
      return;
    }
    if (seq > this.lastSeq + 1) this.gaps += seq - this.lastSeq - 1;
    this.lastSeq = seq;
    if (msg.type === 'error') this.onNotice(msg.code, msg.message, msg.reason);
    this.onMessage(msg);
  }

  handshake(ws, msg) {
    if (msg.type === 'error') {
      if (this.resuming && RESUME_FAILED.has(msg.code)) {
        this.session = null; // gone (server restarted, window passed): start afresh
        this.sendHello(ws);
        return;
      }
      if (REFUSED.has(msg.code)) {
        this.refuse(ws, msg);
        return;
      }
      // Refused (too many sessions, a bad token…): say so quietly, close,
      // and try again after the backoff like any other failed connect.
      this.onNotice(msg.code, msg.message, msg.reason);
      ws.close(4000, 'hello refused');
      return;
    }
    if (msg.type !== 'welcome') return;
    const newSession = !this.session || this.session.id !== msg.session_id;
    if (newSession) {
      this.lastSeq = 0;
      this.gaps = 0;
    } else if (Number(msg.last_seq) < this.lastSeq) {
      // The server's stream is behind what was applied here (it restored
      // the session from older shared state): its next messages reuse seqs
      // this page already saw and must not be dropped as duplicates.
      this.lastSeq = Number(msg.last_seq);
      this.rewinds++;
    }
    this.session = { id: msg.session_id, token: msg.resume_token };
    this.established = true;
    const wasOffline = this.offline;
    const hadFailures = this.attempt > 0;
    this.attempt = 0;
    this.offline = false;
    this.clear('offline');
    this.clear('retry');
    this.startPing(ws);
    this.onWelcome(msg, { resumed: !!msg.resumed && !newSession, newSession, wasOffline, hadFailures });
    this.onState('open', { resumed: !!msg.resumed && !newSession, newSession, wasOffline });
  }

  // refuse stops for good after a refusal no retry can cure (a missing,
  // forged or expired token): no reconnect loop, no offline switch; the
  // notice goes to the quiet status line.
  refuse(ws, msg) {
    this.stopped = true;
    window.removeEventListener('online', this.onBrowserOnline);
    for (const k of Object.keys(this.timers)) this.clear(k);
    this.onNotice(msg.code, msg.message, msg.reason);
    this.onState('refused', { code: msg.code });
    ws.close(1000, 'refused');
  }

  closed(ws, ev) {
    if (ws !== this.ws) return;
    const wasEstablished = this.established;
    this.established = false;
    this.clear('ping');
    this.clear('watchdog');
    if (this.stopped) return;
    if (ev.code === CLOSE_REPLACED) {
      this.stopped = true;
      this.clear('offline');
      this.onState('replaced', {});
      return;
    }
    if (ev.code === CLOSE_ENDED) this.session = null;
    if (wasEstablished) this.armOffline();
    this.scheduleRetry();
  }

  // scheduleRetry waits min(max, min·2^attempt) scaled by a random factor in
  // [0.5, 1) — "equal jitter", so a restarted server is not hit by every
  // page at the same instant — then connects again.
  scheduleRetry() {
    const { reconnectMinMs, reconnectMaxMs } = this.cfg;
    const base = Math.min(reconnectMaxMs, reconnectMinMs * 2 ** Math.min(this.attempt, 16));
    const delay = Math.round(base * (0.5 + this.random() / 2));
    this.attempt++;
    this.onState(this.offline ? 'offline' : 'waiting', { delayMs: delay });
    this.clear('retry');
    this.timers.retry = setTimeout(() => this.connect(), delay);
  }

  // armOffline starts the unreachable clock unless it already runs.
  armOffline() {
    if (this.timers.offline || this.offline) return;
    this.timers.offline = setTimeout(() => {
      this.timers.offline = 0;
      if (this.established) return;
      this.offline = true;
      this.onState('offline', {});
    }, this.cfg.offlineAfterMs);
  }

  startPing(ws) {
    this.clear('ping');
    this.timers.ping = setInterval(() => {
      if (ws === this.ws && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ type: 'ping', t: Date.now() }));
      }
    }, this.cfg.pingMs);
    this.feedWatchdog();
  }

  // feedWatchdog closes a socket that has heard nothing (not even a pong)
  // for a few ping periods: a half-open link never reports itself.
  feedWatchdog() {
    this.clear('watchdog');
    const ws = this.ws;
    this.timers.watchdog = setTimeout(() => {
      if (ws === this.ws && ws.readyState === WebSocket.OPEN) ws.close(4000, 'no reply to pings');
    }, this.cfg.pingMs * 3 + 5000);
  }

  clear(name) {
    const id = this.timers[name];
    if (id) {
      clearTimeout(id);
      clearInterval(id);
      this.timers[name] = 0;
    }
  }
}

// clean drops undefined, non-numeric and non-positive settings so that the
// defaults apply.
function clean(cfg) {
  const out = {};
  for (const [k, v] of Object.entries(cfg || {})) {
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) out[k] = v;
  }
  return out;
}
