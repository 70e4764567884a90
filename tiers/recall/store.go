package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/philippgille/chromem-go"
	"golang.org/x/sync/errgroup"
)

// DefaultThreshold is the similarity at or above which the best template
// is a hit.
//
// Calibration. The offline embedder's raw lexical cosine runs lower than a
// neural model's (a good paraphrase scores 0.4-0.8), so the embedder
// builds the scale into its vectors: one shared dimension says "this asks
// the candidate something", and with its share set to 0.66 (params.ask)
// the stored cosine is 0.66 + 0.34·(lexical cosine) for a question, lower
// for a statement, and below 0.71 for a technical knowledge question.
// 0.78 therefore means a lexical cosine of about 0.35 for a question. The
// share was chosen on development data only: every bank paraphrase held
// out of the index in turn (its own words treated as unknown), and the 61
// utterances of testdata/dev_negatives.yaml. At 0.78 that data gave 70% of
// held-out paraphrases hitting their template (of 71% ranked first at
// all) and 4.9% of development negatives hitting any; 0.76 let 6.6%
// through, 0.80 lost 3 points of hits. TestCalibration prints the whole
// table (go test -run Calibration -v ./tiers/recall/) and fails if it
// drifts; TestEval measures the independent evaluation set.
const DefaultThreshold = 0.78

// nearest is the number of documents a query reads: the nearest wording
// names the best template, and its similarity is that template's best.
const nearest = 1

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
//
// It takes about 47 ms of CPU for the 200-template bank (2,000 wordings;
// 59 ms wall on the shared two-core build machine, BenchmarkNewStore),
// spread over two goroutines, one per language, that it waits for.
// Decoding stored vectors (8 MB) would cost about as much, so nothing is
// cached on disk.
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
	emb, feats, err := newEmbedder(b)
	if err != nil {
		return nil, err
	}
	db := chromem.NewDB()
	cols := make([]*chromem.Collection, 2)
	var g errgroup.Group // one goroutine per language; Wait returns when both are done
	for i, lang := range []string{LangZH, LangEN} {
		col, err := db.GetOrCreateCollection("questions-"+lang, map[string]string{"embedder": emb.Version()}, emb.QueryFunc())
		if err != nil {
			return nil, fmt.Errorf("recall: store: %w", err)
		}
		cols[i] = col
		g.Go(func() error { return index(col, b, emb, feats, lang) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &Store{
		bank:      b,
		embed:     emb,
		cols:      map[string]*chromem.Collection{LangZH: cols[0], LangEN: cols[1]},
		threshold: th,
		metrics:   m,
	}, nil
}

// index adds every wording of b in lang to col, embedded up front so
// chromem stores our unit vectors as they are. It blocks until done.
func index(col *chromem.Collection, b *Bank, e *Embedder, feats wordingFeatures, lang string) error {
	ctx := context.Background()
	for _, q := range b.Questions {
		for i, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
			doc := chromem.Document{
				ID:        fmt.Sprintf("%s/%s/%d", q.ID, lang, i),
				Metadata:  map[string]string{"template": q.ID},
				Content:   w,
				Embedding: e.embedDocument(feats[w]),
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
// "mid" or "senior"; anything else means mid). Empty text is a miss. The
// lookup is counted in the metrics.
//
// Match blocks for the brute-force search (about a millisecond over the
// built-in bank on two cores) and returns an error only when ctx ends
// first.
func (s *Store) Match(ctx context.Context, text, lang, seniority string) (Match, error) {
	m, err := s.match(ctx, text, lang, seniority)
	if err != nil {
		return Match{}, err
	}
	s.metrics.observe(m.Hit, m.Similarity)
	return m, nil
}

// match is Match without the metrics.
func (s *Store) match(ctx context.Context, text, lang, seniority string) (Match, error) {
	if lang != LangZH {
		lang = defaultLang
	}
	var best Match
	if strings.TrimSpace(text) != "" {
		col := s.cols[scriptOf(text)]
		res, err := col.QueryEmbedding(ctx, s.embed.EmbedQuery(text), min(nearest, col.Count()), nil, nil)
		if err == nil {
			err = ctx.Err() // chromem stops early on cancel but returns what it has
		}
		if err != nil {
			return Match{}, fmt.Errorf("recall: match: %w", err)
		}
		if len(res) > 0 {
			best.Similarity = float64(res[0].Similarity)
			best.TemplateID = res[0].Metadata["template"]
		}
	}
	best.Hit = best.TemplateID != "" && best.Similarity >= s.threshold
	best.Similarity = math.Round(best.Similarity*similarityDigits) / similarityDigits
	if q := s.bank.Question(best.TemplateID); q != nil {
		best.Question = q.Wording(lang)
		if best.Hit {
			best.Answer = q.Answers.For(seniority).In(lang)
		}
	}
	return best, nil
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
		m, err := s.match(ctx, text, lang, Mid)
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
