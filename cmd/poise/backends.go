package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/recall"
)

// healthConfig is the health center's part of the engine's configuration
// (health.*, l1.down_*, l2.fail_*).
func healthConfig(c tiers.Config) health.Config {
	return health.Config{IntervalMS: c.Health.IntervalMS, RecoverAfter: c.Health.RecoverAfter,
		L1DownAfter: c.L1.DownAfter, L1DownWindowMS: c.L1.DownWindowMS,
		L2FailAfter: c.L2.FailAfter, L2FailWindowMS: c.L2.FailWindowMS}
}

// healthProbes lists what the health center probes: every L1 vendor
// (GET /models), the local model (a first token within l2.timeout_ms),
// the templates (templates, may have no Check: none), and every gateway
// endpoint not probed already, as a backend of no level, so that an open
// circuit closes again. An invalid gateway config adds no probes
// (validate reports it).
func healthProbes(c config, templates health.Probe, hc *http.Client) []health.Probe {
	engine := c.Engine.WithDefaults()
	var out []health.Probe
	for _, v := range engine.L1.Vendors {
		out = append(out, health.HTTPProbe(v.Name, level.L1, v.BaseURL, v.APIKey, hc))
	}
	if l2 := engine.L2; l2.BaseURL != "" {
		out = append(out, health.FirstTokenProbe(l2.Name, level.L2, l2.Endpoint(), time.Duration(l2.TimeoutMS)*time.Millisecond, hc))
	}
	if templates.Check != nil {
		out = append(out, templates)
	}
	probed := map[string]bool{}
	for _, p := range out {
		probed[p.Name] = true
	}
	eps, err := c.Gateway.Resolved()
	if err != nil {
		return out
	}
	for _, e := range eps {
		if !probed[e.Name] {
			out = append(out, health.HTTPProbe(e.Name, level.None, e.BaseURL, e.APIKey, hc))
		}
	}
	return out
}

// EmbeddingsBackend names the optional embedding server (l3.embeddings) in
// health records, metrics and the ops view.
const EmbeddingsBackend = "embeddings"

// embeddingsProbe probes the embedding server as a backend of no level:
// L3 never depends on it (the built-in matcher answers while it is down),
// and a passing probe lifts the store's backoff after a failed query.
// ok is false without an embedding server.
func embeddingsProbe(d *recall.Dense) (p health.Probe, ok bool) {
	if d == nil {
		return health.Probe{}, false
	}
	return health.Probe{Name: EmbeddingsBackend, Level: level.None, Check: d.Probe}, true
}

// checkSharedNames rejects a gateway endpoint named like an engine backend
// but pointing elsewhere: the name is the health record (and circuit) they
// would share.
func checkSharedNames(engine tiers.Config, gw gateway.Config) error {
	eps, err := gw.Resolved()
	if err != nil {
		return nil // reported by gateway validation
	}
	byName := map[string]string{}
	for _, e := range eps {
		byName[e.Name] = e.BaseURL
	}
	backends := engine.WithDefaults().L1.Vendors
	if engine.L2.BaseURL != "" {
		backends = append(backends, engine.WithDefaults().L2.Endpoint())
	}
	for _, b := range backends {
		if u, ok := byName[b.Name]; ok && strings.TrimRight(u, "/") != strings.TrimRight(b.BaseURL, "/") {
			return fmt.Errorf("tiers: config gateway: endpoint %q has the name of an engine backend with base_url %q; rename it or use the same base_url", b.Name, b.BaseURL)
		}
	}
	return nil
}
