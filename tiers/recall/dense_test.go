package recall

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

const embedModel = "embed-model"

// embedServer is vendorsim's /v1/embeddings behind a real HTTP server.
func embedServer(t *testing.T) (*vendorsim.Server, string) {
	t.Helper()
	sim := vendorsim.New(vendorsim.Options{TokenDelay: -1})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	return sim, srv.URL + "/v1"
}

// TestDenseOverTheWire prepares the template vectors from the simulated
// embedding server, matches a bank wording by them, reuses the cache file
// without asking the server again, and falls back to the built-in matcher
// while the server fails.
func TestDenseOverTheWire(t *testing.T) {
	sim, url := embedServer(t)
	dir := t.TempDir()
	cfg := Config{Embeddings: EmbeddingsConfig{BaseURL: url, Model: embedModel, CacheDir: dir, TimeoutMS: 2000, Threshold: 0.5}} // the simulator's bag-of-words vectors, calibrated like any model
	s := fixtureStore(t, cfg, nil)
	if s.Dense().Ready() {
		t.Fatal("ready before Prepare")
	}
	q := s.bank.Questions[0]
	text := q.Wording(LangEN)

	// Before Prepare: the built-in matcher.
	m, err := s.Match(t.Context(), text, LangEN, Mid)
	if err != nil || m.Matcher != MatcherLexical {
		t.Fatalf("before Prepare: matcher %q, err %v; want lexical", m.Matcher, err)
	}
	if err := s.Dense().Prepare(t.Context(), s.bank); err != nil {
		t.Fatal(err)
	}
	prepared := sim.Counters(embedModel).Requests
	if prepared == 0 {
		t.Fatal("Prepare asked the server nothing")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.gob"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}

	m, err = s.Match(t.Context(), text, LangEN, Mid)
	if err != nil || m.Matcher != MatcherEmbeddings || !m.Hit || m.TemplateID != q.ID || m.Answer == "" {
		t.Fatalf("with the server: %+v, err %v; want an embeddings hit on %s", m, err, q.ID)
	}

	// A second store on the same cache computes nothing.
	s2 := fixtureStore(t, cfg, nil)
	if err := s2.Dense().Prepare(t.Context(), s2.bank); err != nil {
		t.Fatal(err)
	}
	if n := sim.Counters(embedModel).Requests; n != prepared+1 { // the one query above
		t.Fatalf("the server got %d requests after the cached Prepare, want %d", n, prepared+1)
	}

	// The server fails: the built-in matcher answers, and goes on
	// answering through the backoff without waiting for the server.
	sim.SetFault(embedModel, vendorsim.Fault{Status: 503})
	m, err = s.Match(t.Context(), text, LangEN, Mid)
	if err != nil || m.Matcher != MatcherLexical || !m.Hit || m.TemplateID != q.ID {
		t.Fatalf("server failing: %+v, err %v; want a lexical hit on %s", m, err, q.ID)
	}
	failed := sim.Counters(embedModel).Requests
	if _, err := s.Match(t.Context(), text, LangEN, Mid); err != nil {
		t.Fatal(err)
	}
	if n := sim.Counters(embedModel).Requests; n != failed {
		t.Errorf("during the backoff the server got %d more requests", n-failed)
	}
	// The probe clears the backoff once the server answers again.
	sim.ClearFaults()
	if err := s.Dense().Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Match(t.Context(), text, LangEN, Mid); m.Matcher != MatcherEmbeddings {
		t.Errorf("after a passing probe: matcher %q", m.Matcher)
	}
	// The template probe never uses the embedding server.
	sim.SetFault(embedModel, vendorsim.Fault{NoAnswer: true})
	if err := s.Probe(t.Context()); err != nil {
		t.Errorf("template probe with the server hanging: %v", err)
	}
}

func TestDenseConfig(t *testing.T) {
	for _, c := range []EmbeddingsConfig{
		{BaseURL: "http://x/v1"}, {BaseURL: "http://x/v1", Model: "m", Threshold: 2}, {BaseURL: "http://x/v1", Model: "m", TimeoutMS: -1},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	d, err := NewDense(EmbeddingsConfig{})
	if d != nil || err != nil {
		t.Errorf("no base_url: %v, %v; want none", d, err)
	}
	d, err = NewDense(EmbeddingsConfig{BaseURL: "http://x/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if dir, _ := os.UserCacheDir(); dir != "" && filepath.Dir(filepath.Dir(d.cfg.CacheDir)) != dir {
		t.Errorf("default cache dir %q is not under %q", d.cfg.CacheDir, dir)
	}
}
