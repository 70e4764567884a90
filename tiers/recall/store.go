package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/poise-dev/poise/coach"
)

// Decision rule. A template's score for an utterance is the mean of its
// three best wordings' BM25 scores (see lexical), normalised by the
// utterance's best possible score. The best template is a hit when the
// utterance asks something (coach.Asks: L3 answers questions only), its
// type allows the template's family (see family), and the verifier (see
// verify) takes it: a logistic model over the template's score, its lead
// over the best other template, the coverage of its best-covered wording,
// its topic evidence and how specific to it the utterance's most specific
// shared word is, fitted on the dev halves. A whole interviewer
// turn dilutes the score by its lead-in but not the coverage of the
// wording it asks; a short follow-up sharing a word with a long wording
// scores high but covers little of it; a technical question about an
// unbanked topic shares a template's frame but not its topic: the model
// weighs them together. A doubtful template is worse than the coach,
// because the candidate reads an answer to another question.
//
// A question typed as a follow-up on the candidate's project or as a
// statement that still asks is searched among the behavioural templates
// (the classifier calls many behavioural questions with context, "you
// said you'd like to be a staff engineer, what's your plan?", a
// follow-up), and the model knows a project follow-up for one, unless it
// asks about the candidate as a person (ruleFor).

// evidence is what the lexical matcher found for an utterance's best
// template: the decision rule's inputs.
type evidence struct {
	sim   float64 // the template's score
	lead  float64 // over the best other template
	cover float64 // coverage of its best-covered wording
	topic float64 // the rarest shared feature's idf, over the collection's highest
	spec  float64 // the most specific shared feature (see specificity)
}

// designMargins are the least lead of a hit for a design question, by
// either rule: Chinese design questions share their frame ("如何设计一个…系统？")
// and differ by one topic word, so an off-bank one ("如何设计一个电梯调度系统？")
// lands near a bank one ("如何设计一个分布式任务调度系统？") with a lead of about
// 0.02 (four such questions: 0.000 to 0.029), while a bank question's
// paraphrases mostly lead by 0.1 and more. A question the bank does not
// hold must get the coach's design scaffold, not another system's outline
// (session.TestCardsByTypeAtL3).
var designMargins = map[string]float64{LangZH: 0.035}

// refused reports whether a rule before either decision refuses the best
// template of an utterance of type t in script: a design question that
// does not lead by its margin (see designMargins).
func refused(script string, t coach.Type, ev evidence) bool {
	return t == coach.Design && ev.lead < designMargins[script]
}

// fixedMargins are the leads over the next template a set
// Config.Threshold asks for, per language.
var fixedMargins = map[string]float64{LangZH: 0.01, LangEN: 0.025}

// fixedTopicShare is the least topic evidence a technical template needs
// under a set Config.Threshold: the utterance must share with it a
// feature about as rare as a word of one or two templates' wordings (a
// Chinese character alone does not count). Technical questions share
// their frames ("X 和 Y 有什么区别", "how does X work"), so a question about an
// unbanked topic ("IPv4 和 IPv6 有什么区别？") can score and lead on the frame
// alone.
const fixedTopicShare = 0.62

// hit applies the decision rule to the best template of an utterance of
// type t in script.
func (s *Store) hit(script string, t coach.Type, ev evidence) bool {
	if refused(script, t, ev) {
		return false
	}
	if s.threshold == 0 {
		return verify(script, t, ev)
	}
	if t.Technical() && ev.topic < fixedTopicShare {
		return false
	}
	return ev.sim >= s.threshold && ev.lead >= fixedMargins[script]
}

// HighThreshold is about the highest score a question gets from the
// built-in matcher: its BM25 score runs about 0.1–0.4, and even the bank's
// canonical questions score over it 21 times in 640 (at most 0.65). A
// Threshold over it leaves almost every question without a template,
// which the server warns about at start.
const HighThreshold = 0.5

// perTemplate is how many of a template's best wordings its score
// averages: one lucky wording does not make a hit, and a template many
// wordings agree on ranks first (measured on heldout_dev.yaml: 95% of
// positives rank their template first, against 93% with the best wording
// alone and 89% with the embedder's cosine).
const perTemplate = 3

// Config configures template recall.
type Config struct {
	// Threshold is the similarity for a hit, in (0, 1]; 0 (the default)
	// means the calibrated verifier decides (see verify). A set one
	// replaces it: a hit then needs that score, a lead of 0.01 (zh) or
	// 0.025 (en) over the next template and, for a technical template, a
	// shared topic.
	Threshold float64 `yaml:"threshold"`
	// Embeddings is the optional embedding server; none by default.
	Embeddings EmbeddingsConfig `yaml:"embeddings"`
}

// Match is the best template for a question. On a miss TemplateID,
// Question, Similarity and Margin still describe the nearest template
// allowed, for diagnosis, but Answer and Outline are empty: a miss must not
// be shown as an answer.
type Match struct {
	Hit        bool       `json:"hit"`
	Similarity float64    `json:"similarity"` // of the template's nearest wording
	Margin     float64    `json:"margin"`     // over the best other template
	Type       coach.Type `json:"type"`       // of the utterance, by coach.Classify
	TemplateID string     `json:"template_id"`
	Question   string     `json:"question"` // the template's canonical question, in lang
	Outline    []string   `json:"outline"`  // the template's outline, in lang; hits only
	Answer     string     `json:"answer"`   // hits only
	Matcher    string     `json:"matcher"`  // "embeddings" when the embedding server decided, else "lexical"
}

// The matchers of Match.Matcher.
const (
	MatcherLexical    = "lexical"
	MatcherEmbeddings = "embeddings"
)

// Note returns L3's honest note in lang ("zh"; anything else gets en).
func Note(lang string) string {
	if lang == LangZH {
		return "基于通用模板生成，请结合自身经历调整。"
	}
	return "Based on a generic template — adapt it to your own experience."
}

// Store answers questions from the template bank. It is read-only after
// NewStore and safe for concurrent use.
type Store struct {
	bank      *Bank
	embed     *Embedder
	cols      map[string]*collection // by collectionKey(lang, kind)
	threshold float64                // Config.Threshold; 0: the verifier decides
	metrics   *Metrics
	dense     *Dense // nil without l3.embeddings
}

// Dense returns the store's embedding matcher, nil without one: the
// caller runs PrepareDense and probes it (cmd/poise).
func (s *Store) Dense() *Dense { return s.dense }

// PrepareDense prepares the embedding matcher's template vectors (see
// Dense.Prepare); nothing without one. It blocks like Prepare.
func (s *Store) PrepareDense(ctx context.Context) error {
	if s.dense == nil {
		return nil
	}
	return s.dense.Prepare(ctx, s.bank)
}

// collection is the wordings of one language and bank kind: the template
// of each (an index into Bank.Questions) and their lexical index.
type collection struct {
	template []int32
	lex      *lexical
}

// family returns the bank kind whose templates may answer an utterance of
// type t, and false when none may: a behavioural or logistics question
// gets a behavioural template, a knowledge question a technical one, a
// follow-up on the candidate's own project or a statement that asks a
// behavioural one (a technical outline for a question about the
// candidate's own system would mislead), and small talk none.
func family(t coach.Type) (kind string, ok bool) {
	switch {
	case t == coach.Behavioural || t == coach.Logistics || follow(t):
		return KindBehavioural, true
	case t.Technical():
		return KindTechnical, true
	}
	return "", false
}

// follow reports whether type t is a follow-up on the candidate's project
// or a statement that still asks.
func follow(t coach.Type) bool { return t == coach.Project || t == coach.Remark }

// ruleFor returns the type the decision rule takes for text of type t: a
// follow-up or statement that asks about the candidate as a person
// (coach.AboutThePerson: "那个项目做完以后，你的领导怎么评价你的") is decided as a
// behavioural question, not as a follow-up.
func ruleFor(t coach.Type, text string) coach.Type {
	if follow(t) && coach.AboutThePerson(text) {
		return coach.Behavioural
	}
	return t
}

func collectionKey(lang, kind string) string { return lang + "/" + kind }

// NewStore builds a Store on b's wordings (canonical and paraphrases),
// embedded offline and indexed, one inverted index per language and bank
// kind; each wording points at its template. The first Store of b builds
// that index and blocks meanwhile (BenchmarkNewStore measures it); later
// ones share it. m may be nil.
func NewStore(b *Bank, cfg Config, m *Metrics) (*Store, error) {
	if b == nil || b.Len() == 0 {
		return nil, errors.New("recall: store: empty bank")
	}
	if cfg.Threshold < 0 || cfg.Threshold > 1 {
		return nil, fmt.Errorf("recall: store: threshold %v outside (0, 1]", cfg.Threshold)
	}
	dense, err := NewDense(cfg.Embeddings)
	if err != nil {
		return nil, fmt.Errorf("recall: store: %w", err)
	}
	w, err := b.wordingIndex()
	if err != nil {
		return nil, err
	}
	return &Store{
		bank:      b,
		embed:     w.embed,
		cols:      w.cols,
		threshold: cfg.Threshold,
		metrics:   m,
		dense:     dense,
	}, nil
}

// wordingIndex is the offline embedder of a bank and its wordings'
// collections by collectionKey; read-only once built.
type wordingIndex struct {
	embed *Embedder
	cols  map[string]*collection
}

// wordingIndex returns b's wording index, built on the first call (it
// blocks meanwhile) and shared by every later Store of b.
func (b *Bank) wordingIndex() (*wordingIndex, error) {
	b.wordingsOnce.Do(func() { b.wordings, b.wordingsErr = newWordingIndex(b) })
	return b.wordings, b.wordingsErr
}

// newWordingIndex extracts the features of every wording of b with the
// offline embedder and indexes them, one collection per language and kind.
func newWordingIndex(b *Bank) (*wordingIndex, error) {
	emb, feats, err := newEmbedder(b)
	if err != nil {
		return nil, err
	}
	cols := make(map[string]*collection)
	for _, lang := range []string{LangZH, LangEN} {
		for _, kind := range []string{KindBehavioural, KindTechnical} {
			cols[collectionKey(lang, kind)] = index(b, emb, feats, lang, kind)
		}
	}
	return &wordingIndex{embed: emb, cols: cols}, nil
}

// index builds the collection of every wording in lang of b's templates
// of kind.
func index(b *Bank, e *Embedder, feats wordingFeatures, lang, kind string) *collection {
	c := &collection{}
	var docs []map[uint64]featureCount
	for i, q := range b.Questions {
		if q.Kind != kind {
			continue
		}
		for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
			c.template = append(c.template, int32(i))
			docs = append(docs, feats[w])
		}
	}
	c.lex = newLexical(docs, e.p.kind)
	return c
}

// Match finds the template for text. It classifies text (coach.Classify),
// searches the wordings of the templates its type allows (see family) in
// the script of text (a Chinese question may come up in an English session
// and the other way round), and applies the decision rule (see hit). The
// question, outline and answer returned are in lang
// ("zh" or "en"; anything else means en) at seniority ("junior", "mid" or
// "senior"; anything else means mid; technical templates have one answer).
// Empty text is a miss. The lookup is counted in the metrics.
//
// Match reads only the postings of the utterance's features
// (BenchmarkMatch: well under 5 ms at p99) and returns an error only when
// ctx has ended.
func (s *Store) Match(ctx context.Context, text, lang, seniority string) (Match, error) {
	m, err := s.match(ctx, text, lang, seniority, s.dense)
	if err != nil {
		return Match{}, err
	}
	s.metrics.observe(m.Hit, m.Similarity)
	return m, nil
}

// match is Match without the metrics, with dense as the embedding matcher
// (nil: the lexical one only).
func (s *Store) match(ctx context.Context, text, lang, seniority string, dense *Dense) (Match, error) {
	if lang != LangZH {
		lang = defaultLang
	}
	best := Match{Type: coach.Classify(text, lang), Matcher: MatcherLexical}
	kind, ok := family(best.Type)
	if strings.TrimSpace(text) == "" || !ok || !coach.Asks(text) {
		return best, nil
	}
	script := scriptOf(text)
	if err := ctx.Err(); err != nil {
		return Match{}, fmt.Errorf("recall: match: %w", err)
	}
	var id string
	var sim, margin float64
	ok = false
	rule := ruleFor(best.Type, text)
	if !follow(rule) { // the embedding server's rule is calibrated on the question types only
		id, sim, margin, ok = dense.nearestOr(ctx, s.bank, text, script, kind)
	}
	if ok {
		best.Matcher = MatcherEmbeddings
		best.Hit = id != "" && dense.hit(sim, margin)
	} else {
		var ev evidence
		id, ev = s.nearest(s.cols[collectionKey(script, kind)], text)
		sim, margin = ev.sim, ev.lead
		best.Hit = id != "" && s.hit(script, rule, ev)
	}
	best.TemplateID = id
	best.Similarity = math.Round(sim*similarityDigits) / similarityDigits
	best.Margin = math.Round(margin*similarityDigits) / similarityDigits
	if q := s.bank.Question(id); q != nil {
		best.Question = q.Wording(lang)
		if best.Hit {
			best.Outline = slices.Clone(q.Outline.In(lang))
			best.Answer = q.AnswerFor(seniority).In(lang)
		}
	}
	return best, nil
}

// nearest returns the best template of c for text (see perTemplate) and
// the evidence for it: its score, its lead over the best other template
// (the score itself when no other template shares a feature), the
// coverage of its best-covered wording, its topic evidence and its
// specificity. A text
// sharing no feature with c gives no template.
func (s *Store) nearest(c *collection, text string) (id string, ev evidence) {
	n := len(c.template)
	buf := make([]float64, 3*n) // one allocation for the three accumulators
	acc, cov, rare := buf[:n], buf[n:2*n], buf[2*n:]
	fs := s.embed.features(text)
	best, touched := c.lex.score(fs, acc, cov, rare, nil)
	if len(touched) == 0 || best == 0 {
		return "", evidence{}
	}
	top := templateTop{}
	for _, d := range touched {
		top.keep(c.template[d], acc[d]/best)
	}
	first, sim, second := top.best()
	ev = evidence{sim: sim, lead: sim - second}
	for _, d := range touched {
		if c.template[d] == first {
			ev.cover = max(ev.cover, c.lex.coverage(d, cov[d]))
			ev.topic = max(ev.topic, rare[d]/c.lex.maxIDF)
		}
	}
	ev.spec = c.specificity(fs, first)
	return s.bank.Questions[first].ID, ev
}

// templateTop holds each template's perTemplate best scores, largest
// first; both matchers rank templates by their mean, a missing score
// counting 0.
type templateTop map[int32]*bestScores

// bestScores are one template's n best scores, largest first.
type bestScores struct {
	v [perTemplate]float64
	n int
}

// keep adds one wording's score v to template t's best scores.
func (top templateTop) keep(t int32, v float64) {
	k := top[t]
	if k == nil {
		k = new(bestScores)
		top[t] = k
	}
	if k.n < perTemplate {
		k.v[k.n] = v
		k.n++
	} else if v <= k.v[perTemplate-1] {
		return
	} else {
		k.v[perTemplate-1] = v
	}
	for i := k.n - 1; i > 0 && k.v[i] > k.v[i-1]; i-- { // back into descending order
		k.v[i], k.v[i-1] = k.v[i-1], k.v[i]
	}
}

// best returns the template whose best scores have the highest mean (a
// tie goes to the lower template), that mean and the next template's;
// first is -1 when top is empty.
func (top templateTop) best() (first int32, sim, second float64) {
	first = -1
	for t, k := range top {
		var sum float64
		for _, v := range k.v[:k.n] {
			sum += v
		}
		switch score := sum / perTemplate; {
		case first < 0 || score > sim || score == sim && t < first:
			if first >= 0 {
				second = sim
			}
			first, sim = t, score
		case score > second:
			second = score
		}
	}
	return first, sim, second
}

// similarityDigits rounds reported similarities to four decimals; the hit
// decision uses the exact value.
const similarityDigits = 1e4

// Probe checks that the store still recalls, without counting a lookup: a
// wording of the first template (its first paraphrase, else its canonical
// wording), in each language, must hit that template. It blocks like Match.
func (s *Store) Probe(ctx context.Context) error {
	q := s.bank.Questions[0]
	for _, lang := range []string{LangZH, LangEN} {
		text := q.Wording(lang)
		if ps := q.Paraphrases.In(lang); len(ps) > 0 {
			text = ps[0]
		}
		m, err := s.match(ctx, text, lang, Mid, nil) // the built-in matcher: L3 never depends on the embedding server
		if err != nil {
			return fmt.Errorf("recall: probe: %w", err)
		}
		if !m.Hit || m.TemplateID != q.ID {
			return fmt.Errorf("recall: probe: %s wording of %s matched %q at %.3f", lang, q.ID, m.TemplateID, m.Similarity)
		}
	}
	return nil
}

// scriptOf returns "zh" when text has at least as many Chinese characters
// as Latin words, else "en".
func scriptOf(text string) string { return scriptOfNormalized(normalizeText(text)) }

// scriptOfNormalized is scriptOf for text already normalized.
func scriptOfNormalized(normalized string) string {
	han, words := 0, 0
	for _, seg := range splitSegments(normalized) {
		if seg.han {
			han += len([]rune(seg.text))
		} else {
			words += len(seg.words)
		}
	}
	if han > 0 && han >= words {
		return LangZH
	}
	return LangEN
}

// specificity is the most specific feature that fs shares with template
// t: over the non-character features of fs that t's wordings have, the
// largest share of a feature's wordings that are t's, times its idf over
// the collection's highest. Near 1 for a topic word only t's wordings use
// ("哈希表"), low for a frame many templates share ("是怎么实现的") however
// rare it is among all wordings, which the topic evidence cannot tell
// apart. It reads the postings of fs's features again, after score.
func (c *collection) specificity(fs map[uint64]featureCount, t int32) float64 {
	var spec float64
	for h, f := range fs {
		if f.kind == kindChar {
			continue
		}
		ps := c.lex.postings[h]
		var own int
		for _, p := range ps {
			if c.template[p.doc] == t {
				own++
			}
		}
		if own > 0 {
			spec = max(spec, float64(own)/float64(len(ps))*c.lex.idf[h]/c.lex.maxIDF)
		}
	}
	return spec
}
