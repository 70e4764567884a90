// coach.js is the browser's copy of the L4 coach (package coach on the
// server): the same scripts.json, the same rules, the same cards. The page
// runs it when the server has been unreachable for a while, so a typed
// question still gets a think countdown, the frame of its type and tips.
// Keep it in step with coach/detect.go, coach/coach.go and the rules of
// coach/classify.go; the browser tests compare the two card by card.
//
// What it covers: the question type comes from a port of coach.Classify:
// its rules over the lexicon served at /coach/types.json, and where the
// rules fall back on their default, its naive Bayes model, built from the
// training counts served in the same file. The rules alone would be right
// for 75% of the labelled test half against the model's 88%
// (coach.TestRulesAlone). Without the lexicon every question is coached as
// behavioural (STAR / CARL).

const SCRIPTS_URL = '/coach/scripts.json';
const CACHE_KEY = 'poise.coach.scripts.v1';
const LEXICON_URL = '/coach/types.json';
const LEXICON_KEY = 'poise.coach.types.v5';
// Bounds of a topic turn's last clause (coach/classify.go's topicWords, topicHan).
const TOPIC_WORDS = 8;
const TOPIC_HAN = 8;
// Words between a wh word and the aux and near subject after it (coach/detect.go's whGap).
const WH_GAP = 3;
const HAN = /\p{Script=Han}/u;

// loadScript fetches the scripts from the server and caches them in
// localStorage; when the fetch fails it falls back to the cached copy. It
// resolves to a Script, or null when neither is usable. It never rejects.
export async function loadScript(fetchFn = fetch, storage = safeStorage()) {
  const lexicon = await loadJSON(fetchFn, storage, LEXICON_URL, LEXICON_KEY, (f) => {
    if (!f || f.version !== 6 || !f.en || !f.zh) throw new Error('coach: types.json version must be 6');
    return f;
  });
  return loadJSON(fetchFn, storage, SCRIPTS_URL, CACHE_KEY, (f) => new Script(f, lexicon));
}

// loadJSON fetches url and caches it in storage under key; when the fetch
// fails it falls back to the cached copy. make turns the parsed file into
// what the caller wants and throws on a file it cannot use. It resolves to
// make's result, or null. It never rejects.
async function loadJSON(fetchFn, storage, url, key, make) {
  try {
    const resp = await fetchFn(url, { cache: 'no-cache' });
    if (resp.ok) {
      const text = await resp.text();
      const out = make(JSON.parse(text));
      storage?.setItem(key, text);
      return out;
    }
  } catch {
    // offline or a bad file: the cached copy below
  }
  try {
    const cached = storage?.getItem(key);
    return cached ? make(JSON.parse(cached)) : null;
  } catch {
    return null;
  }
}

function safeStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

// Script is a parsed scripts.json (schema on coach.Script in Go) with the
// classifier's lexicon (types.json; null: every question is behavioural).
// The constructor throws on a file it cannot use.
export class Script {
  constructor(f, lexicon = null) {
    if (!f || f.version !== 1) throw new Error('coach: scripts version must be 1');
    const d = f.detect || {};
    for (const k of ['question_marks', 'sentence_breaks', 'clause_breaks']) {
      if (typeof d[k] !== 'string' || d[k] === '') throw new Error(`coach: detect.${k} is missing`);
    }
    if (!(f.countdown_s > 0)) throw new Error('coach: countdown_s must be > 0');
    this.countdownS = f.countdown_s;
    this.defaultKey = f.default_framework;
    this.questionMarks = [...d.question_marks];
    this.sentenceBreaks = [...d.sentence_breaks];
    this.clauseBreaks = [...d.clause_breaks];
    const en = d.en || {};
    this.en = {
      fillers: phrases(en.fillers),
      starts: phrases(en.starts),
      notStarts: phrases(en.not_starts),
      contains: phrases(en.contains),
      wh: new Set(list(en.wh)),
      aux: new Set(list(en.aux)),
      subjects: new Set(list(en.subjects)),
      near: new Set(list(en.near_subjects)),
      restarts: new Set(list(en.restarts)),
    };
    const zh = d.zh || {};
    this.zh = {
      ignore: list(zh.ignore), markers: list(zh.markers), finalParticles: list(zh.final_particles),
      alternatives: list(zh.alternatives), altOpeners: list(zh.alternative_openers), aNotA: list(zh.a_not_a),
    };
    this.classify = list(f.classify).map((r) => ({
      type: r.type || 'behavioural', framework: r.framework, en: phrases(r.en), zh: list(r.zh),
    }));
    this.types = f.types || {};
    this.lexicon = lexicon ? parseLexicon(lexicon) : null;
    this.model = lexicon && lexicon.model ? new Bayes(lexicon.model) : null;
    this.untermedLead = lexicon ? Number(lexicon.untermed_lead) : 0;
    this.text = f.text || {};
    for (const lang of ['en', 'zh']) {
      const tx = this.text[lang];
      if (!tx || !tx.frameworks || !tx.frameworks.statement || !tx.frameworks[this.defaultKey]) {
        throw new Error(`coach: text.${lang} is incomplete`);
      }
    }
  }

  // isQuestion reports whether text asks the candidate something.
  isQuestion(text) {
    const t = normalize(text);
    if ([...t].some((r) => this.questionMarks.includes(r))) return true;
    for (const sentence of split(t, this.sentenceBreaks)) {
      if (this.zhQuestion(sentence)) return true;
      for (const clause of split(sentence, this.clauseBreaks)) {
        if (this.enQuestion(words(clause))) return true;
      }
    }
    return false;
  }

  // card returns the coach card for text in lang, shaped like the server's
  // `coach` message body: {kind, countdown_s, framework {name, steps}, tips,
  // question_type}, the type by typeOf.
  card(text, lang) {
    const tx = this.text[String(lang || '').toLowerCase().startsWith('zh') ? 'zh' : 'en'];
    const c = this.cues(text);
    if (!c.question) {
      return {
        kind: 'statement',
        countdown_s: 0,
        framework: cloneFramework(tx.frameworks.statement),
        tips: [...list(tx.statement_tips)],
        question_type: 'statement',
      };
    }
    let type = this.typeOf(text, c);
    let countdown = this.countdownS;
    if (this.types[type]) countdown = this.types[type].countdown_s;
    else type = 'behavioural';
    const qt = list(tx.question_tips);
    const own = list((tx.type_tips || {})[type]);
    return {
      kind: 'question',
      countdown_s: countdown,
      framework: cloneFramework(tx.frameworks[this.frameworkFor(text, type)]),
      tips: countdown === 0 && own.length ? [...own] : [qt[0], ...own, ...qt.slice(1)],
      question_type: type,
    };
  }

  // typeOf is coach.Classify for a question: the rules' type (of the part
  // askedCues reads), and where the rules fall back on their behavioural
  // default, the naive Bayes model's, which may not call small talk an
  // English question, nor concept a Chinese one without a technical term,
  // nor technical or logistics one that asks about the candidate as a
  // person, nor technical one without a technical term at odds under
  // untermed_lead.
  typeOf(text, c) {
    const a = this.askedCues(text, c);
    const r = this.classifyCues(a);
    if (r !== 'behavioural' || !this.model) return r;
    const { type, lead } = this.model.classify(tokens(a));
    const han = HAN.test(a.text);
    const technical = type === 'concept' || type === 'design' || type === 'coding';
    if ((type === 'smalltalk' && !han) || (type === 'concept' && han && !a.tech) ||
      (technical && (this.personal(a) || (!a.tech && lead < this.untermedLead))) ||
      (type === 'logistics' && this.personal(a))) return r;
    return type;
  }

  // personal is coach.personal: without a technical term, the words of
  // behavioural interviews.
  personal(c) {
    const L = this.lexicon;
    return !c.tech && (containsAnyPhrase(c.words, L.en.behavioural) || anySub(c.text, L.zh.behavioural));
  }

  frameworkFor(text, type) {
    const t = normalize(text);
    const w = words(t);
    for (const c of this.classify) {
      if (c.type === type && (containsAnyPhrase(w, c.en) || c.zh.some((s) => t.includes(s)))) return c.framework;
    }
    return this.types[type] ? this.types[type].framework : this.defaultKey;
  }

  // askedCues is coach.askedPart: the cues of the part of text after the
  // clause of its last small-talk cue when that part asks on its own, else
  // c, the cues of text itself ("Hi, can you hear me? Great, so tell me
  // about yourself").
  askedCues(text, c) {
    if (!this.lexicon || !this.smalltalkCue(c)) return c;
    const t = normalize(text);
    const end = this.lastCueEnd(t);
    if (end === 0) return c; // "how are you" alone
    let rest = t.slice(end);
    const breaks = [...this.sentenceBreaks, ...this.clauseBreaks, '?', '？'];
    const i = [...rest].findIndex((r) => breaks.includes(r));
    if (i >= 0) rest = [...rest].slice(i + 1).join(''); // the cue's own sentence ends first
    const rc = this.cues(rest);
    return this.asksOnItsOwn(rest, rc) ? rc : c;
  }

  // asksOnItsOwn is coach.asksOnItsOwn: rest, with its cues c, asks, and is
  // a request or a question the rules give a type other than their
  // behavioural default.
  asksOnItsOwn(rest, c) {
    const L = this.lexicon;
    if (!c.question) return false;
    if (containsAnyPhrase(this.stripFillers(words(rest)), L.en.request) || anySub(rest, L.zh.request)) return true;
    return this.classifyCues(c) !== 'behavioural';
  }

  // lastCueEnd is coach.lastCueEnd: the index in t just after its last
  // small-talk cue (a Chinese one anywhere, an English phrase between word
  // boundaries), 0 when there is none.
  lastCueEnd(t) {
    const L = this.lexicon;
    let end = 0;
    for (const cue of list(L.zh.smalltalk)) {
      const i = t.lastIndexOf(cue);
      if (i >= 0) end = Math.max(end, i + cue.length);
    }
    const edge = (i) => i < 0 || i >= t.length || !/[a-z0-9']/.test(t[i]);
    for (const cue of L.en.smalltalk.map((p) => p.join(' '))) {
      for (let hay = t; ;) {
        const i = hay.lastIndexOf(cue);
        if (i < 0) break;
        if (edge(i - 1) && edge(i + cue.length)) {
          end = Math.max(end, i + cue.length);
          break;
        }
        hay = hay.slice(0, i + cue.length - 1);
      }
    }
    return end;
  }

  // smalltalkCue is the small-talk rule of coach/classify.go.
  smalltalkCue(c) {
    const L = this.lexicon;
    return (c.question && containsAnyPhrase(c.words, L.en.smalltalk)) ||
      this.stripFillers(c.words).join(' ') === 'how are you' || anySub(c.text, L.zh.smalltalk);
  }

  // cues is coach.newCues: the text prepared for the type rules. Without a
  // lexicon only question is known.
  cues(text) {
    const t = normalize(text);
    const w = words(t);
    const c = { text: t, words: w, question: this.isQuestion(text), tech: false, self: false, address: false };
    const L = this.lexicon;
    if (!L) return c;
    c.tech = containsAnyPhrase(w, L.en.tech) || anySub(t, L.zh.tech);
    c.self = containsAnyPhrase(w, L.en.self) || anySub(t, L.zh.self);
    c.address = containsAnyPhrase(w, L.en.address) || anySub(t, L.zh.address);
    if (!c.question) c.question = hasAnyPrefix(this.stripFillers(w), L.en.request) || anySub(t, L.zh.request) || this.topicAsk(t);
    c.text = t.split('有什么是').join('有 '); // "有什么是简历上没写的？" asks no definition
    return c;
  }

  // topicAsk is coach.topicAsk: the turn's last clause names a technical
  // topic and nothing more ("ACID", "0-1 背包"), so it asks about it.
  topicAsk(t) {
    const L = this.lexicon;
    let last = '';
    for (const sentence of split(t, this.sentenceBreaks)) {
      for (const clause of split(sentence, this.clauseBreaks)) if (clause.trim() !== '') last = clause;
    }
    const w = this.stripFillers(words(last));
    const han = [...last].filter((r) => HAN.test(r)).length;
    if (w.length + han === 0 || w.length > TOPIC_WORDS || han > TOPIC_HAN) return false;
    if (containsAnyPhrase(w, L.en.topic_ack) || anySub(last, L.zh.topic_ack)) return false;
    return containsAnyPhrase(w, L.en.tech) || containsAnyPhrase(w, L.en.coding) || containsAnyPhrase(w, L.en.design) ||
      containsAnyPhrase(w, L.en.topic_cue) || anySub(last, L.zh.tech) || anySub(last, L.zh.coding) ||
      anySub(last, L.zh.design) || anySub(last, L.zh.topic_cue);
  }

  // classifyCues applies the rules of coach/classify.go (typeRules), in
  // order; the first that fires names the type.
  classifyCues(c) {
    const L = this.lexicon;
    if (!L) return c.question ? 'behavioural' : 'statement';
    const en = (k) => containsAnyPhrase(c.words, L.en[k]);
    const zh = (k) => anySub(c.text, L.zh[k]);
    const rules = [
      ['smalltalk', () => this.smalltalkCue(c)],
      ['logistics', () => en('logistics') || zh('logistics')],
      ['concept', () => en('concept_first') || (zh('concept_first') && !zh('project'))],
      ['coding', () => en('coding') || zh('coding')],
      ['design', () => en('design') || zh('design')],
      ['project', () => en('project') || (c.tech && en('project_tech')) || zh('project') || (c.tech && zh('project_tech'))],
      ['concept', () => !c.self && (
        (en('concept') && (c.tech || !c.address)) || (c.tech && (c.question || en('concept_weak'))) ||
        (zh('concept') && (c.tech || !c.address)) || (c.tech && (c.question || zh('concept_weak'))))],
    ];
    for (const [type, fires] of rules) if (fires()) return type;
    return c.question ? 'behavioural' : 'statement';
  }

  zhQuestion(sentence) {
    for (const ig of this.zh.ignore) sentence = sentence.split(ig).join(' ');
    if (this.zh.markers.some((m) => sentence.includes(m))) return true;
    const end = trimRightNonAlnum(sentence);
    if (this.zh.finalParticles.some((p) => end.endsWith(p))) return true;
    return this.zhAlternative(sentence) || this.zhANotA(sentence);
  }

  // zhAlternative is coach.Script.zhAlternative: "还是" after an opener ("是", "喜欢").
  zhAlternative(sentence) {
    return this.zh.alternatives.some((a) => {
      const i = sentence.indexOf(a);
      return i > 0 && this.zh.altOpeners.some((o) => sentence.slice(0, i).includes(o));
    });
  }

  // zhANotA is coach.Script.zhANotA: "冷不冷", "去没去".
  zhANotA(sentence) {
    const r = [...sentence];
    for (let i = 1; i + 1 < r.length; i++) {
      if (r[i - 1] === r[i + 1] && r[i - 1] !== r[i] && /\p{Script=Han}/u.test(r[i - 1]) && this.zh.aNotA.includes(r[i])) return true;
    }
    return false;
  }

  enQuestion(w) {
    const m = this.en;
    w = this.stripFillers(w);
    if (w.length === 0) return false;
    if (!hasAnyPrefix(w, m.notStarts) && (m.wh.has(w[0]) || hasAnyPrefix(w, m.starts))) return true;
    if (this.inverted(w)) return true;
    for (let i = 0; i < w.length; i++) {
      if (m.wh.has(w[i]) && this.invertedNear(w.slice(i + 1))) return true;
      if (m.restarts.has(w[i]) && this.asksNear(w.slice(i + 1))) return true;
    }
    return containsAnyPhrase(w, m.contains);
  }

  inverted(w) {
    return w.length >= 2 && this.en.aux.has(w[0]) && this.en.subjects.has(w[1]);
  }

  // invertedNear is coach.enMatcher.invertedNear: "role do you", "good are you".
  invertedNear(w) {
    if (this.inverted(w)) return true;
    for (let gap = 1; gap <= WH_GAP && gap < w.length; gap++) {
      if (this.asksNear(w.slice(gap))) return true;
    }
    return false;
  }

  asksNear(w) {
    return w.length >= 2 && this.en.aux.has(w[0]) && this.en.near.has(w[1]);
  }

  stripFillers(w) {
    for (;;) {
      let n = 0;
      for (const f of this.en.fillers) {
        if (f.length > n && hasPrefix(w, f)) n = f.length;
      }
      if (n === 0) return w;
      w = w.slice(n);
    }
  }
}

// Bayes is coach's naive Bayes model, built as coach.model builds it from
// the training counts of a types.json (m: {types, docs, totals, tokens:
// {token: [type index, count, …]}, alpha}).
class Bayes {
  constructor(m) {
    this.types = list(m.types);
    const docs = list(m.docs).reduce((a, b) => a + b, 0);
    const v = Object.keys(m.tokens || {}).length;
    this.prior = this.types.map((_, i) => Math.log(m.docs[i] / docs));
    this.unk = this.types.map((_, i) => Math.log(m.alpha / (m.totals[i] + m.alpha * v)));
    this.logp = new Map();
    for (const [tok, pairs] of Object.entries(m.tokens || {})) {
      const row = [...this.unk];
      for (let k = 0; k + 1 < pairs.length; k += 2) {
        row[pairs[k]] = Math.log((pairs[k + 1] + m.alpha) / (m.totals[pairs[k]] + m.alpha * v));
      }
      this.logp.set(tok, row);
    }
    this.behavioural = Math.max(0, this.types.indexOf('behavioural'));
  }

  // classify returns the most probable type of the tokens and its log-odds
  // over behavioural (coach.bayes.classify).
  classify(toks) {
    const scores = [...this.prior];
    for (const tok of toks) {
      const row = this.logp.get(tok) || this.unk;
      for (let i = 0; i < row.length; i++) scores[i] += row[i];
    }
    let best = 0;
    for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
    return { type: this.types[best], lead: scores[best] - scores[this.behavioural] };
  }
}

// tokens is coach.tokens, from an utterance's cues: English words and word
// bigrams, Chinese characters and character bigrams, and the cues as
// pseudo-words, in coach.tokens' order.
function tokens(c) {
  const out = [];
  let prev = '^';
  for (const w of c.words) {
    out.push(w, `${prev}_${w}`);
    prev = w;
  }
  let run = [];
  const flush = () => {
    for (let i = 0; i < run.length; i++) {
      out.push(run[i]);
      if (i + 1 < run.length) out.push(run[i] + run[i + 1]);
    }
    run = [];
  };
  for (const r of c.text) {
    const cp = r.codePointAt(0);
    if (cp >= 0x4e00 && cp <= 0x9fff) run.push(r);
    else flush();
  }
  flush();
  for (const [name, on] of [['#q', c.question], ['#tech', c.tech], ['#self', c.self], ['#you', c.address]]) {
    if (on) out.push(name, name, name);
  }
  return out;
}

// parseLexicon splits the English phrases of a types.json into words.
function parseLexicon(f) {
  const out = { en: {}, zh: {} };
  for (const [k, v] of Object.entries(f.en)) out.en[k] = phrases(v);
  for (const [k, v] of Object.entries(f.zh)) out.zh[k] = list(v);
  return out;
}

function anySub(s, subs) {
  return list(subs).some((sub) => s.includes(sub));
}

function list(v) {
  return Array.isArray(v) ? v : [];
}

function cloneFramework(f) {
  return { name: f.name, steps: [...list(f.steps)] };
}

// normalize lower-cases text and folds typographic apostrophes to '.
function normalize(text) {
  return String(text ?? '').toLowerCase().replace(/[’‘]/g, "'");
}

// split cuts s at every code point in breaks, dropping empty pieces.
function split(s, breaks) {
  const out = [];
  let cur = '';
  for (const r of s) {
    if (breaks.includes(r)) {
      if (cur) out.push(cur);
      cur = '';
    } else {
      cur += r;
    }
  }
  if (cur) out.push(cur);
  return out;
}

// words returns the English words of a lower-case string: runs of a-z, 0-9
// and ', with ' trimmed from both ends.
export function words(s) {
  const out = [];
  for (const f of s.split(/[^a-z0-9']+/)) {
    const w = f.replace(/^'+|'+$/g, '');
    if (w) out.push(w);
  }
  return out;
}

const alnum = /[\p{L}\p{N}]/u;

function trimRightNonAlnum(s) {
  const cps = [...s];
  let n = cps.length;
  while (n > 0 && !alnum.test(cps[n - 1])) n--;
  return cps.slice(0, n).join('');
}

function phrases(l) {
  return list(l).map(words);
}

function hasPrefix(w, p) {
  if (p.length === 0 || w.length < p.length) return false;
  for (let i = 0; i < p.length; i++) if (w[i] !== p[i]) return false;
  return true;
}

function hasAnyPrefix(w, ps) {
  return ps.some((p) => hasPrefix(w, p));
}

function containsAnyPhrase(w, ps) {
  for (let i = 0; i < w.length; i++) {
    if (hasAnyPrefix(w.slice(i), ps)) return true;
  }
  return false;
}

// fallbackCard is shown when no scripts could be loaded at all (the page
// never reached the server and has no cached copy): still never blank.
export function fallbackCard(lang) {
  if (String(lang).startsWith('zh')) {
    return {
      kind: 'question',
      countdown_s: 8,
      framework: { name: 'STAR', steps: ['情境：一句话交代背景', '任务：你的目标或职责', '行动：你本人做了什么', '结果：结果如何，尽量带数字'] },
      tips: ['重复问题的最后几个字，给自己争取思考时间', '先用一句话给出结论，再展开细节'],
      question_type: 'behavioural',
    };
  }
  return {
    kind: 'question',
    countdown_s: 8,
    framework: { name: 'STAR', steps: ['Situation: set the scene in one sentence', 'Task: your goal', 'Action: what you did yourself', 'Result: the outcome, with a number if you have one'] },
    tips: ['Repeat the last words of the question to buy time', 'Open with a one-sentence headline, then the details'],
    question_type: 'behavioural',
  };
}
