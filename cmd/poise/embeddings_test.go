package main

import (
	"net/http/httptest"
	"testing"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/recall"
)

// TestEmbeddingsProbe: the embedding server is probed over the wire as a
// backend of no level, so its outage never lowers a session's level.
func TestEmbeddingsProbe(t *testing.T) {
	t.Parallel()
	if _, ok := embeddingsProbe(nil); ok {
		t.Fatal("a probe without an embedding server")
	}
	sim := vendorsim.New(vendorsim.Options{TokenDelay: -1})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	d, err := recall.NewDense(recall.EmbeddingsConfig{BaseURL: srv.URL + "/v1", Model: "embed", CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := embeddingsProbe(d)
	if !ok || p.Name != EmbeddingsBackend || p.Level != level.None {
		t.Fatalf("probe %+v, want %q of no level", p, EmbeddingsBackend)
	}
	if err := p.Check(t.Context()); err != nil {
		t.Fatalf("probe against a healthy server: %v", err)
	}
	sim.SetFault("embed", vendorsim.Fault{Status: 503})
	if err := p.Check(t.Context()); err == nil {
		t.Fatal("probe passed against a failing server")
	}
	if n := sim.Counters("embed").Requests; n != 2 {
		t.Errorf("the server got %d requests, want 2", n)
	}
}
