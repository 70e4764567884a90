// record.js keeps the interview record as the page received it — the final
// captions with their speakers, every question with its answer, level and
// source, the level changes — and turns it into Markdown or JSON for the
// candidate to download. It lives in this page only: nothing is sent or
// stored anywhere.

import { unmarked } from './view.js';

// Record is one session's record, fed by copilot.js from the messages it
// applies (each once, in order). Times are when the page received them.
export class Record {
  constructor() {
    this.startedAt = Date.now();
    this.captions = []; // {at, speaker, stream, text}
    this.turns = new Map(); // question id → {id, at, question, level, source, note, style, of, answer, end, coach}
    this.levels = []; // {at, from, to, reason}
  }

  caption(m) {
    if (!m.final || !m.text) return;
    const said = unmarked(m.text); // a simulator's mark becomes a flag, as the page shows it
    this.captions.push({ at: Date.now(), speaker: m.speaker || '', stream: m.stream || '', text: said.text, simulated: said.simulated });
  }

  level(m, first) {
    if (first) this.levels.push({ at: Date.now(), from: '', to: m.level, reason: 'start' });
    else this.levels.push({ at: Date.now(), from: m.from || '', to: m.level, reason: m.reason || '' });
  }

  turn(id, question) {
    let t = this.turns.get(id);
    if (!t) {
      t = { id, at: Date.now(), question: question || '', level: '', source: '', note: '', style: '', of: '', answer: '', end: '', coach: null };
      this.turns.set(id, t);
    } else if (question && !t.question) t.question = question;
    return t;
  }

  answerStart(m) {
    const t = this.turn(m.id, m.question);
    Object.assign(t, { level: m.level || '', source: m.source || '', note: m.note || '', style: m.style || '', of: m.of || '', answer: '', end: '' });
  }

  answerDelta(m) {
    const t = this.turns.get(m.id);
    if (t) t.answer += m.text || '';
  }

  answerEnd(m) {
    const t = this.turns.get(m.id);
    if (t) t.end = m.reason || '';
  }

  coach(m, question) {
    const t = this.turn(m.id, question);
    t.coach = { kind: m.kind, framework: m.framework?.name || '', steps: m.framework?.steps || [], tips: m.tips || [] };
    if (!t.level) t.level = 'L4';
  }

  // json is the record as a plain object (the JSON download).
  json(session) {
    return {
      session: session || '',
      started_at: new Date(this.startedAt).toISOString(),
      exported_at: new Date().toISOString(),
      captions: this.captions.map((c) => ({ ...c, at: new Date(c.at).toISOString() })),
      questions: [...this.turns.values()].map((t) => ({ ...t, at: new Date(t.at).toISOString() })),
      levels: this.levels.map((l) => ({ ...l, at: new Date(l.at).toISOString() })),
    };
  }

  // markdown is the record for reading (the Markdown download), worded in
  // the page's language by s (i18n strings).
  markdown(session, s) {
    const r = this.json(session);
    const time = (iso) => iso.slice(11, 19);
    const who = (c) => (c.speaker === 'candidate' ? s.speakerYou : c.speaker === 'interviewer' ? s.speakerInterviewer : s.speakerUnknown);
    const out = [`# ${s.recordTitle}`, '', `${s.recordStarted}: ${r.started_at}`, ''];
    out.push(`## ${s.recordLevels}`, '');
    for (const l of r.levels) out.push(`- ${time(l.at)} ${l.from ? `${l.from} → ` : ''}${l.to} (${l.reason})`);
    out.push('', `## ${s.recordQuestions}`, '');
    r.questions.forEach((q, i) => {
      out.push(`### ${i + 1}. ${q.question || s.question}`, '');
      const tags = [q.level, q.source && `${s.source}: ${q.source}`, q.style && `${s.recordStyle}: ${q.style}`, q.end].filter(Boolean);
      out.push(`*${time(q.at)} · ${tags.join(' · ')}*`, '');
      if (q.answer) out.push(q.answer, '');
      if (q.note) out.push(`> ${q.note}`, '');
      if (q.coach) out.push(`**${q.coach.framework}**: ${q.coach.steps.join(' → ')}`, '');
    });
    out.push(`## ${s.recordCaptions}`, '');
    for (const c of r.captions) out.push(`- ${time(c.at)} **${who(c)}**: ${c.text}${c.simulated ? " _(simulated)_" : ""}`);
    out.push('');
    return out.join('\n');
  }
}

// download saves text as a file named name, through a temporary link.
export function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
