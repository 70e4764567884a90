package recall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/philippgille/chromem-go"
)

// EmbeddingsConfig configures the optional embedding server (l3.embeddings):
// an OpenAI-compatible /v1/embeddings such as llama.cpp's server with
// --embedding or Hugging Face text-embeddings-inference. Without base_url
// L3 uses the built-in lexical matcher only; with it, the server's dense
// vectors (in chromem-go) decide while the server answers, and the
// built-in matcher whenever it does not, so L3 never depends on it.
type EmbeddingsConfig struct {
	BaseURL string `yaml:"base_url"` // e.g. http://tei:80/v1; empty (default): no embedding server
	Model   string `yaml:"model"`    // the model name sent with each request; required with base_url
	APIKey  string `yaml:"api_key"`  // optional bearer key; never logged
	// CacheDir keeps the template vectors, one file per model and bank
	// version, so they are computed once per model; default
	// <user cache dir>/poise/embeddings.
	CacheDir  string  `yaml:"cache_dir"`
	TimeoutMS int     `yaml:"timeout_ms"` // one question's embedding; default 300
	Threshold float64 `yaml:"threshold"`  // cosine of a hit, in (0, 1]; default 0.8 (calibrate per model)
	Margin    float64 `yaml:"margin"`     // lead over the best other template; default 0.02
}

// Defaults of EmbeddingsConfig.
const (
	defaultEmbedTimeoutMS = 300
	defaultDenseThreshold = 0.8
	defaultDenseMargin    = 0.02
	embedBatch            = 64              // wordings per request when preparing
	denseResults          = 30              // nearest wordings read per question
	denseBackoff          = 5 * time.Second // a failed query skips the server this long (the probe clears it)
)

// Validate reports the first unusable field of c.
func (c EmbeddingsConfig) Validate() error {
	switch {
	case c.BaseURL == "":
		return nil
	case c.Model == "":
		return errors.New("l3.embeddings.model: required with base_url")
	case c.TimeoutMS < 0:
		return errors.New("l3.embeddings.timeout_ms: must be >= 0")
	case c.Threshold < 0 || c.Threshold > 1:
		return errors.New("l3.embeddings.threshold: must be within (0, 1] (0 means 0.8)")
	case c.Margin < 0 || c.Margin > 1:
		return errors.New("l3.embeddings.margin: must be within [0, 1] (0 means 0.02)")
	}
	return nil
}

// Dense matches questions by an embedding server's vectors. Prepare loads
// or computes the template vectors; until it has, and for denseBackoff
// after a failed query, nearest reports unavailable and the store uses
// its lexical matcher. Safe for concurrent use.
type Dense struct {
	cfg       EmbeddingsConfig
	client    openai.Client
	index     atomic.Pointer[denseIndex]
	downUntil atomic.Int64 // unix nanoseconds
	now       func() time.Time
}

// denseIndex is the prepared vectors: one chromem collection per language
// and bank kind, each document's metadata naming its template's index.
type denseIndex struct {
	cols map[string]*chromem.Collection
}

// NewDense returns the embedding matcher of cfg, or nil without base_url.
// It does no I/O.
func NewDense(cfg EmbeddingsConfig) (*Dense, error) {
	if cfg.BaseURL == "" {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TimeoutMS == 0 {
		cfg.TimeoutMS = defaultEmbedTimeoutMS
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = defaultDenseThreshold
	}
	if cfg.Margin == 0 {
		cfg.Margin = defaultDenseMargin
	}
	if cfg.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cfg.CacheDir = filepath.Join(dir, "poise", "embeddings")
	}
	opts := []option.RequestOption{option.WithBaseURL(cfg.BaseURL), option.WithMaxRetries(0)}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &Dense{cfg: cfg, client: openai.NewClient(opts...), now: time.Now}, nil
}

// Ready reports whether the template vectors are prepared.
func (d *Dense) Ready() bool { return d != nil && d.index.Load() != nil }

// Prepare makes the template vectors of b: from the cache file of this
// model and bank when there is one, else from the server (in batches),
// then writes the cache. It blocks until done or ctx ends; the caller
// owns the goroutine it runs on. On an error the store keeps its lexical
// matcher; Prepare may be called again.
func (d *Dense) Prepare(ctx context.Context, b *Bank) error {
	texts := wordingsOf(b)
	path := d.cachePath(texts)
	vecs := readVectors(path)
	var missing []string
	for _, t := range texts {
		if _, ok := vecs[t]; !ok {
			missing = append(missing, t)
		}
	}
	for i := 0; i < len(missing); i += embedBatch {
		batch := missing[i:min(i+embedBatch, len(missing))]
		got, err := d.embed(ctx, batch)
		if err != nil {
			return fmt.Errorf("recall: embeddings: prepare: %w", err)
		}
		for j, t := range batch {
			vecs[t] = got[j]
		}
	}
	if len(missing) > 0 {
		if err := writeVectors(path, vecs); err != nil {
			return fmt.Errorf("recall: embeddings: cache: %w", err)
		}
	}
	idx, err := buildDense(ctx, b, vecs)
	if err != nil {
		return err
	}
	d.index.Store(idx)
	return nil
}

// wordingsOf lists every wording of b, in both languages.
func wordingsOf(b *Bank) []string {
	var out []string
	for _, q := range b.Questions {
		for _, lang := range []string{LangZH, LangEN} {
			out = append(out, q.Wording(lang))
			out = append(out, q.Paraphrases.In(lang)...)
		}
	}
	return out
}

func buildDense(ctx context.Context, b *Bank, vecs map[string][]float32) (*denseIndex, error) {
	db := chromem.NewDB()
	idx := &denseIndex{cols: map[string]*chromem.Collection{}}
	for _, lang := range []string{LangZH, LangEN} {
		for _, kind := range []string{KindBehavioural, KindTechnical} {
			key := collectionKey(lang, kind)
			col, err := db.GetOrCreateCollection(key, nil, noEmbedding)
			if err != nil {
				return nil, fmt.Errorf("recall: embeddings: %w", err)
			}
			var docs []chromem.Document
			for i, q := range b.Questions {
				if q.Kind != kind {
					continue
				}
				for _, w := range append([]string{q.Wording(lang)}, q.Paraphrases.In(lang)...) {
					docs = append(docs, chromem.Document{ID: strconv.Itoa(len(docs)), Embedding: vecs[w],
						Metadata: map[string]string{"t": strconv.Itoa(i)}})
				}
			}
			if len(docs) > 0 {
				if err := col.AddDocuments(ctx, docs, 2); err != nil {
					return nil, fmt.Errorf("recall: embeddings: %w", err)
				}
			}
			idx.cols[key] = col
		}
	}
	return idx, nil
}

// noEmbedding stands in for chromem's embedding function: every vector is
// supplied, and a nil function would fall back to a hosted default.
func noEmbedding(context.Context, string) ([]float32, error) {
	return nil, errors.New("recall: embeddings are supplied, never computed by chromem")
}

// nearest returns the template of b the server's vectors put nearest to
// text among the collection of script and kind, its score (the mean of
// its perTemplate best cosines) and its lead over the best other
// template; ok false when the server or the vectors are unavailable (the
// caller falls back). It blocks for at most timeout_ms.
func (d *Dense) nearest(ctx context.Context, b *Bank, text, script, kind string) (id string, sim, margin float64, ok bool) {
	idx := d.index.Load()
	if idx == nil || d.now().UnixNano() < d.downUntil.Load() {
		return "", 0, 0, false
	}
	col := idx.cols[collectionKey(script, kind)]
	if col == nil || col.Count() == 0 {
		return "", 0, 0, true
	}
	qctx, cancel := context.WithTimeout(ctx, time.Duration(d.cfg.TimeoutMS)*time.Millisecond)
	defer cancel()
	v, err := d.embed(qctx, []string{text})
	if err != nil {
		if ctx.Err() == nil {
			d.downUntil.Store(d.now().Add(denseBackoff).UnixNano())
		}
		return "", 0, 0, false
	}
	res, err := col.QueryEmbedding(qctx, v[0], min(denseResults, col.Count()), nil, nil)
	if err != nil {
		return "", 0, 0, false
	}
	top := templateTop{}
	for _, r := range res {
		t, _ := strconv.Atoi(r.Metadata["t"])
		top.keep(int32(t), float64(r.Similarity))
	}
	first, sim, second := top.best()
	if first < 0 {
		return "", 0, 0, true
	}
	return b.Questions[first].ID, sim, sim - second, true
}

// nearestOr is nearest on a nil Dense too (unavailable).
func (d *Dense) nearestOr(ctx context.Context, b *Bank, text, script, kind string) (string, float64, float64, bool) {
	if d == nil {
		return "", 0, 0, false
	}
	return d.nearest(ctx, b, text, script, kind)
}

// hit applies the dense decision rule.
func (d *Dense) hit(sim, margin float64) bool {
	return sim >= d.cfg.Threshold && margin >= d.cfg.Margin
}

// Probe checks that the server embeds; a success lifts the backoff of a
// failed query. It blocks until the server answers or ctx ends.
func (d *Dense) Probe(ctx context.Context) error {
	if _, err := d.embed(ctx, []string{"ping"}); err != nil {
		return err
	}
	d.downUntil.Store(0)
	return nil
}

// embed asks the server for the unit vectors of texts, in order.
func (d *Dense) embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := d.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: d.cfg.Model, Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
	})
	if err != nil {
		return nil, fmt.Errorf("recall: embeddings: %w", err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("recall: embeddings: %d vectors for %d texts", len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, e := range resp.Data {
		if e.Index < 0 || int(e.Index) >= len(out) || len(e.Embedding) == 0 {
			return nil, errors.New("recall: embeddings: a vector out of order or empty")
		}
		out[e.Index] = unit(e.Embedding)
	}
	return out, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// cachePath names the cache file of this model and these wordings: a
// changed bank or another model never reads stale vectors.
func (d *Dense) cachePath(texts []string) string {
	h := sha256.New()
	h.Write([]byte(d.cfg.Model))
	for _, t := range texts {
		h.Write([]byte{0})
		h.Write([]byte(t))
	}
	name := unsafeName.ReplaceAllString(d.cfg.Model, "_") + "-" + hex.EncodeToString(h.Sum(nil))[:16] + ".gob"
	return filepath.Join(d.cfg.CacheDir, name)
}

// readVectors reads a cache file; a missing or unreadable one is empty.
func readVectors(path string) map[string][]float32 {
	vecs := map[string][]float32{}
	if data, err := os.ReadFile(path); err == nil {
		if gob.NewDecoder(bytes.NewReader(data)).Decode(&vecs) != nil {
			return map[string][]float32{}
		}
	}
	return vecs
}

// writeVectors writes a cache file whole (a temporary file renamed).
func writeVectors(path string, vecs map[string][]float32) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(vecs); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
