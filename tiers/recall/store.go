package recall

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/philippgille/chromem-go"
)

// DefaultThreshold is the cosine similarity at or above which the best
// template is a hit.
//
// Calibration: the offline embedder's similarities were measured on two
// sets the embedder was not built from: the bank's own paraphrases, each
// queried with itself left out of the index (leave-one-out), and the
// negative half of testdata/eval.yaml. See TestCalibration
// (go test -run Calibration -v ./tiers/recall/) for the printed table.
const DefaultThreshold = 0.78

const (
	maxResults       = 8 // documents read per query; the best template is among them
	maxSentenceViews = 3 // sentences from the end of an utterance queried on their own
)

// Config configures template recall.
type Config struct {
	Threshold float64 `yaml:"threshold"` // similarity for a hit, in (0, 1]; 0 means DefaultThreshold (0.78)
}

// Match is the best template for a question. On a miss TemplateID,
// Question and Similarity still describe the nearest template, for
// diagnosis, but Answer is empty: a miss must not be shown as an answer.
type Match struct {
	Hit        bool    `json:"hit"`
	Similarity float64 `json:"similarity"`
	TemplateID string  `json:"template_id"`
	Question   string  `json:"question"`
	Answer     string  `json:"answer"`
}

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
	cols      map[string]*chromem.Collection // by the language of the wordings
	threshold float64
	metrics   *Metrics
}

// NewStore embeds every wording of b (canonical and paraphrases) with the
// offline embedder and indexes them in one in-memory chromem-go collection
// per language; each document points at its template. m may be nil.
func NewStore(b *Bank, cfg Config, m *Metrics) (*Store, error) {
	if b == nil || b.Len() == 0 {
		return nil, errors.New("recall: store: empty bank")
	}
	th := cfg.Threshold
	if th == 0 {
		th = DefaultThreshold
	}
	if th < 0 || th > 1 {
		return nil, fmt.Errorf("recall: store: threshold %v outside (0, 1]", cfg.Threshold)
	}
	emb, err := NewEmbedder(b)
	if err != nil {
		return nil, err
	}
	s := &Store{bank: b, embed: emb, cols: make(map[string]*chromem.Collection), threshold: th, metrics: m}
	db := chromem.NewDB()
	for _, lang := range []string{LangZH, LangEN} {
		col, err := db.GetOrCreateCollection("questions-"+lang, map[string]string{"embedder": emb.Version()}, emb.Func())
		if err != nil {
			return nil, fmt.Errorf("recall: store: %w", err)
		}
		if err := s.index(col, lang); err != nil {
			return nil, err
		}
		s.cols[lang] = col
	}
	return s, nil
}

// index adds every wording in lang to col, embedded up front so chromem
// stores our unit vectors as they are.
func (s *Store) index(col *chromem.Collection, lang string) error {
	ctx := context.Background()
	for _, q := range s.bank.Questions {
		wordings := append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...)
		for i, w := range wordings {
			doc := chromem.Document{
				ID:        fmt.Sprintf("%s/%s/%d", q.ID, lang, i),
				Metadata:  map[string]string{"template": q.ID},
				Content:   w,
				Embedding: s.embed.Embed(w),
			}
			if err := col.AddDocument(ctx, doc); err != nil {
				return fmt.Errorf("recall: store: index %s: %w", doc.ID, err)
			}
		}
	}
	return nil
}

// Match finds the template nearest to text. The wordings searched are
// those in the script of text (a Chinese question may come up in an English
// session and the other way round); the question and answer returned are in
// lang ("zh" or "en"; anything else means en) at seniority ("junior",
// "mid" or "senior"; anything else means mid). Empty text is a miss.
//
// An utterance is queried whole and, when it has several sentences, each
// of its last sentences on its own, because spoken questions often follow
// an acknowledgement ("OK, thanks. So why ..."); the best similarity wins.
// Match blocks for the brute-force search (well under a millisecond on the
// built-in bank) and returns an error only when ctx ends first.
func (s *Store) Match(ctx context.Context, text, lang, seniority string) (Match, error) {
	if lang != LangZH {
		lang = defaultLang
	}
	var best Match
	col := s.cols[scriptOf(text)]
	for _, view := range queryViews(text) {
		n := min(maxResults, col.Count())
		res, err := col.QueryEmbedding(ctx, s.embed.Embed(view), n, nil, nil)
		if err == nil {
			err = ctx.Err() // chromem stops early on cancel but returns what it has
		}
		if err != nil {
			return Match{}, fmt.Errorf("recall: match: %w", err)
		}
		if len(res) > 0 && float64(res[0].Similarity) > best.Similarity {
			best.Similarity = float64(res[0].Similarity)
			best.TemplateID = res[0].Metadata["template"]
		}
	}
	best.Hit = best.TemplateID != "" && best.Similarity >= s.threshold
	if q := s.bank.Question(best.TemplateID); q != nil {
		best.Question = q.Wording(lang)
		if best.Hit {
			best.Answer = q.Answers.For(seniority).In(lang)
		}
	}
	s.metrics.observe(best.Hit, best.Similarity)
	return best, nil
}

// Probe checks that the store still recalls: the first template's first
// paraphrase, in each language, must hit that template.
func (s *Store) Probe(ctx context.Context) error {
	q := s.bank.Questions[0]
	for _, lang := range []string{LangZH, LangEN} {
		m, err := s.Match(ctx, q.Paraphrases.In(lang)[0], lang, Mid)
		if err != nil {
			return fmt.Errorf("recall: probe: %w", err)
		}
		if !m.Hit || m.TemplateID != q.ID {
			return fmt.Errorf("recall: probe: %s paraphrase of %s matched %q at %.3f", lang, q.ID, m.TemplateID, m.Similarity)
		}
	}
	return nil
}

// scriptOf returns "zh" when text has at least as many Chinese characters
// as Latin words, else "en".
func scriptOf(text string) string {
	han, words := 0, 0
	for _, seg := range splitSegments(normalizeText(text)) {
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

// queryViews returns text itself and, when it has several sentences, each
// of its last maxSentenceViews sentences, trimmed; empty text has none.
func queryViews(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	sentences := splitSentences(text)
	views := []string{text}
	if len(sentences) < 2 {
		return views
	}
	for i := len(sentences) - 1; i >= 0 && i >= len(sentences)-maxSentenceViews; i-- {
		views = append(views, sentences[i])
	}
	return views
}

// splitSentences cuts text after each run of sentence-ending punctuation
// and drops empty pieces.
func splitSentences(text string) []string {
	var out []string
	start := 0
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if !isSentenceEnd(rs[i]) {
			continue
		}
		for i+1 < len(rs) && isSentenceEnd(rs[i+1]) {
			i++
		}
		if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}
