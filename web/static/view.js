// view.js draws the copilot's live view: the current turn (question, the
// answer streaming in, the coach card with its countdown ring), earlier
// turns, captions, the level chip and the status line. It only renders;
// copilot.js decides what happens.

import { t } from './i18n.js';

const MAX_CAPTIONS = 60; // caption lines kept on screen
const SIMULATED_MARK = '[simulated]'; // a simulator's caption (poise -demo): shown as a tag
const MAX_HISTORY = 40; // earlier turns kept on screen
const TICK_MS = 200; // countdown redraw period
const RING_R = 26; // countdown ring radius, px (viewBox units)
const SVG = 'http://www.w3.org/2000/svg';

// View renders into the copilot page's elements.
export class View {
  constructor(doc, lang) {
    this.doc = doc;
    this.lang = lang;
    this.el = (id) => doc.getElementById(id);
    this.turns = new Map(); // key → turn
    this.currentKey = null;
    this.captions = new Map(); // utt key → <li>
    this.ticker = 0;
  }

  setLang(lang) {
    this.lang = lang;
    for (const tag of this.el('captions').querySelectorAll('.sim-tag')) tag.replaceWith(this.simulatedTag());
    const cur = this.turns.get(this.currentKey);
    if (cur) this.drawCurrent(cur);
    const hist = this.el('history');
    hist.replaceChildren();
    for (const turn of this.turns.values()) {
      if (turn.key !== this.currentKey) hist.prepend(this.historyItem(turn));
    }
    this.trimHistory();
  }

  // turn returns the turn for key, creating it (and making it current) when
  // it is new. The previous current turn moves to "Earlier".
  turn(key, question) {
    let turn = this.turns.get(key);
    if (!turn) {
      turn = { key, question: question || '', answer: null, coach: null, local: false, pending: false };
      this.turns.set(key, turn);
      this.makeCurrent(turn);
    } else if (question && !turn.question) {
      turn.question = question;
    }
    return turn;
  }

  has(key) {
    return this.turns.has(key);
  }

  makeCurrent(turn) {
    const prev = this.turns.get(this.currentKey);
    if (prev && prev !== turn) {
      this.el('history').prepend(this.historyItem(prev));
      this.el('history-heading').hidden = false;
      this.trimHistory();
    }
    this.currentKey = turn.key;
    this.drawCurrent(turn);
  }

  // update redraws a turn after its state changed.
  update(turn) {
    if (turn.key === this.currentKey) {
      this.drawCurrent(turn);
      return;
    }
    const li = this.el('history').querySelector(`[data-key="${CSS.escape(turn.key)}"]`);
    if (li) li.replaceWith(this.historyItem(turn));
  }

  // appendAnswer adds streamed text to a turn without redrawing it.
  appendAnswer(turn, text) {
    turn.answer.text += text;
    if (turn.key !== this.currentKey) return;
    const box = this.el('current').querySelector('.answer-text');
    if (box) box.append(text);
    else this.drawCurrent(turn);
  }

  drawCurrent(turn) {
    const s = t(this.lang);
    const art = this.el('current');
    art.replaceChildren();
    art.dataset.key = turn.key;
    art.dataset.kind = turn.answer ? 'answer' : turn.coach ? 'coach' : 'pending';
    if (turn.question) art.append(h('p', 'question', turn.question));
    art.dataset.style = turn.style || '';
    if (turn.style && s.styleTags?.[turn.style]) art.append(h('p', 'style-tag', s.styleTags[turn.style]));
    if (turn.read) art.append(readCard(turn, s));
    if (turn.answer) art.append(this.answerCard(turn, s));
    if (turn.coach) art.append(this.coachCard(turn, s, !!turn.answer));
    if (!turn.answer && !turn.coach) art.append(thinking());
    if (turn.offerRetry) art.append(askAgain(turn, s));
    this.tick();
  }

  answerCard(turn, s) {
    const a = turn.answer;
    const card = h('section', 'answer');
    card.dataset.level = a.level || '';
    card.dataset.reason = a.reason || '';
    // A template (L3) reads in five seconds: the question it answers and
    // its outline first, the full answer below.
    if (a.matched) card.append(h('p', 'matched', s.answering + a.matched));
    const outline = a.outline || [];
    if (outline.length) {
      const ol = h('ol', 'outline');
      for (const line of outline) ol.append(h('li', '', line));
      card.append(ol);
      card.append(h('p', 'full-label', s.fullAnswer));
    }
    const text = h('div', outline.length ? 'answer-text full' : 'answer-text', a.text);
    card.append(text);
    if (a.reason === 'cut') card.append(h('p', 'aside', s.cut));
    if (a.note) card.append(h('p', 'note', a.note));
    const meta = h('p', 'meta');
    meta.append(h('span', 'level-tag', a.level || ''));
    if (a.source) meta.append(h('span', 'source', `${s.source}: ${a.source}`));
    if (a.via) meta.append(h('span', 'via', a.via === 'vision' ? s.viaVision : s.viaOCR));
    card.append(meta);
    return card;
  }

  coachCard(turn, s, secondary) {
    const c = turn.coach;
    const card = h('section', secondary ? 'coach secondary' : 'coach');
    card.dataset.kind = c.kind;
    if (turn.local) card.dataset.local = 'true';
    const head = h('div', 'coach-head');
    if (c.kind === 'question' && c.countdown_s > 0) {
      head.append(ring());
      head.append(h('p', 'think', s.thinkTime));
    }
    head.append(h('h3', 'framework', c.framework?.name || ''));
    if (turn.local) head.append(h('span', 'local-tag', s.localCard));
    card.append(head);
    const steps = h('ol', 'steps');
    for (const step of c.framework?.steps || []) steps.append(h('li', '', step));
    card.append(steps);
    const tips = c.tips || [];
    if (tips.length) {
      card.append(h('p', 'tips-label', c.kind === 'statement' ? s.followUps : s.tips));
      const ul = h('ul', 'tips');
      tips.forEach((tip, i) => {
        const li = h('li', i === 0 && c.kind === 'question' ? 'tip first' : 'tip', tip);
        ul.append(li);
      });
      card.append(ul);
    }
    if (c.kind === 'question' && c.countdown_s > 0) {
      const done = h('p', 'go');
      done.append(h('strong', '', s.countdownDone + ' '), tips[0] || '');
      done.hidden = true;
      card.append(done);
    }
    return card;
  }

  // tick redraws the current turn's countdown ring and keeps a timer
  // running while it counts.
  tick() {
    const turn = this.turns.get(this.currentKey);
    const art = this.el('current');
    const ringEl = art.querySelector('.ring');
    if (!turn || !turn.coach || !ringEl || !turn.countdownEnd) {
      this.stopTicker();
      return;
    }
    const total = turn.coach.countdown_s * 1000;
    const left = Math.max(0, turn.countdownEnd - Date.now());
    const circ = 2 * Math.PI * RING_R;
    ringEl.querySelector('.ring-fg').style.strokeDashoffset = String(circ * (1 - left / total));
    ringEl.querySelector('.ring-num').textContent = String(Math.ceil(left / 1000));
    const done = left === 0;
    art.classList.toggle('counted', done);
    const go = art.querySelector('.go');
    if (go) go.hidden = !done;
    if (done) {
      this.stopTicker();
    } else if (!this.ticker) {
      this.ticker = setInterval(() => this.tick(), TICK_MS);
    }
  }

  stopTicker() {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = 0;
  }

  historyItem(turn) {
    const s = t(this.lang);
    const li = h('li', 'turn past');
    li.dataset.key = turn.key;
    const det = h('details');
    const summary = h('summary', '', turn.question || (turn.coach ? turn.coach.framework?.name : '') || s.question);
    if (turn.answer?.reason === 'superseded') {
      // The answer stopped mid-sentence because a newer question came in:
      // say so, rather than leave half a sentence standing unmarked.
      li.dataset.reason = 'superseded';
      const tag = h('span', 'superseded-tag', s.superseded);
      tag.title = s.supersededHint;
      summary.append(tag);
    }
    det.append(summary);
    if (turn.answer) {
      det.append(h('div', 'answer-text', turn.answer.text));
      const meta = h('p', 'meta');
      meta.append(h('span', 'level-tag', turn.answer.level || ''));
      if (turn.answer.source) meta.append(h('span', 'source', `${s.source}: ${turn.answer.source}`));
      det.append(meta);
    }
    if (turn.coach) {
      const p = h('p', 'past-coach');
      p.append(h('strong', '', (turn.coach.framework?.name || '') + ' '), (turn.coach.framework?.steps || []).join(' · '));
      det.append(p);
    }
    li.append(det);
    if (turn.offerRetry) li.append(askAgain(turn, s));
    return li;
  }

  // trimHistory drops the oldest earlier turns beyond MAX_HISTORY, from the
  // page and from memory: a long interview stays light.
  trimHistory() {
    const hist = this.el('history');
    while (hist.children.length > MAX_HISTORY) {
      this.turns.delete(hist.lastElementChild.dataset.key);
      hist.lastElementChild.remove();
    }
  }

  // caption shows a partial (faint) or final (solid) caption line; label
  // names its speaker ("You", "Interviewer"), shown before the text by the
  // stylesheet so that the line's text stays what was heard; a simulated
  // line carries a small "simulated" tag instead of its mark.
  caption(key, text, final, label) {
    const list = this.el('captions');
    let li = this.captions.get(key);
    if (!li) {
      li = h('li', 'caption');
      li.dataset.key = key;
      this.captions.set(key, li);
      list.append(li);
      while (list.children.length > MAX_CAPTIONS) {
        const old = list.firstElementChild;
        this.captions.delete(old.dataset.key);
        old.remove();
      }
    }
    const said = unmarked(text);
    li.replaceChildren();
    li.dataset.text = said.text;
    li.dataset.simulated = String(said.simulated);
    if (said.simulated) li.append(this.simulatedTag());
    li.append(this.doc.createTextNode(said.text));
    if (label) li.dataset.label = label;
    li.classList.toggle('partial', !final);
    li.classList.toggle('final', !!final);
    this.el('captions-empty').hidden = true;
    list.scrollTop = list.scrollHeight;
  }

  simulatedTag() {
    const s = t(this.lang);
    const tag = h('span', 'sim-tag', s.simulated);
    tag.title = s.simulatedHint;
    return tag;
  }

  // setCaptionsState shows the caption chain's state next to the captions:
  // nothing when live, else a quiet line (never an error).
  setCaptionsState(state) {
    const s = t(this.lang);
    const el = this.el('captions-state');
    const text = state === 'paused' ? s.captionsPaused : state === 'degraded' ? s.captionsDegraded : '';
    el.hidden = !text;
    el.textContent = text;
    el.dataset.state = state;
    this.el('btn-captions').title = text;
  }

  // setChip shows a chip ({text, hint, kind}: kind 'limit' for a limit
  // that bites, else a level's) or hides it (null, L1).
  setChip(chip) {
    const el = this.el('chip');
    el.hidden = !chip;
    el.dataset.kind = chip ? chip.kind || 'level' : '';
    this.el('chip-text').textContent = chip ? chip.text : '';
    this.el('chip-hint').textContent = chip ? chip.hint : '';
    el.title = '';
  }

  // setStatus shows the status line; a fading one dims (it is about to
  // give way to the steady state).
  setStatus(text, fading) {
    const el = this.el('status');
    el.textContent = text || '';
    el.classList.toggle('fading', !!fading);
  }
}

// unmarked splits a caption's simulator mark off its text.
export function unmarked(text) {
  const s = String(text || '');
  if (!s.startsWith(SIMULATED_MARK)) return { simulated: false, text: s };
  return { simulated: true, text: s.slice(SIMULATED_MARK.length).trim() };
}

// h makes an element with a class and optional text.
function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = text;
  return el;
}

// askAgain is the offer to send a question the server never saw (typed
// while it was unreachable) now that it is back; copilot.js handles the
// click. Never sent on its own.
function askAgain(turn, s) {
  const b = h('button', 'quiet ask-again', s.askAgain);
  b.type = 'button';
  b.dataset.key = turn.key;
  b.title = s.askAgainHint;
  return b;
}

// readCard shows the text OCR read from a screenshot question, editable,
// with a button to ask it again as corrected; copilot.js handles the click.
function readCard(turn, s) {
  const box = h('section', 'read');
  box.append(h('p', 'read-label', s.readFromShot));
  const ta = h('textarea', 'read-text');
  ta.value = turn.read;
  ta.rows = Math.min(8, turn.read.split('\n').length + 1);
  ta.maxLength = 2000;
  ta.setAttribute('aria-label', s.readFromShot);
  ta.dataset.key = turn.key;
  const b = h('button', 'quiet ask-read', s.askRead);
  b.type = 'button';
  b.dataset.key = turn.key;
  box.append(ta, b);
  return box;
}

function thinking() {
  const p = h('p', 'thinking');
  p.setAttribute('aria-hidden', 'true');
  for (let i = 0; i < 3; i++) p.append(h('span', 'dot-anim'));
  return p;
}

function ring() {
  const wrap = h('div', 'ring');
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 64 64');
  svg.setAttribute('aria-hidden', 'true');
  const circ = 2 * Math.PI * RING_R;
  for (const cls of ['ring-bg', 'ring-fg']) {
    const c = document.createElementNS(SVG, 'circle');
    c.setAttribute('cx', '32');
    c.setAttribute('cy', '32');
    c.setAttribute('r', String(RING_R));
    c.setAttribute('class', cls);
    c.setAttribute('stroke-dasharray', String(circ));
    svg.append(c);
  }
  wrap.append(svg, h('span', 'ring-num', ''));
  return wrap;
}
