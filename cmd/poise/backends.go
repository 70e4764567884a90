package main

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/ocr"
	"github.com/poise-dev/poise/tiers/recall"
	"github.com/poise-dev/poise/tiers/upstream"
)

// healthConfig is the health center's part of the engine's configuration
// (health.*, l1.down_*, l2.fail_*).
func healthConfig(c tiers.Config) health.Config {
	return health.Config{IntervalMS: c.Health.IntervalMS, RecoverAfter: c.Health.RecoverAfter,
		L1DownAfter: c.L1.DownAfter, L1DownWindowMS: c.L1.DownWindowMS,
		L2FailAfter: c.L2.FailAfter, L2FailWindowMS: c.L2.FailWindowMS}
}

// healthProbes lists what the health center probes: every L1 vendor and
// the local model (a one-token streamed completion within its first-token
// timeout, or GET /models for a vendor with probe: list), the templates
// (templates, may have no Check: none), every whisper server (a short
// silent WAV) and the cloud speech-to-text, the vision model (no level), and every gateway endpoint not
// probed already, as backends of no level. An invalid gateway config
// adds no gateway probes (validate reports it).
func healthProbes(c config, templates health.Probe, hc *http.Client) []health.Probe {
	engine := c.Engine.WithDefaults()
	var out []health.Probe
	for _, v := range engine.L1.Vendors {
		out = append(out, chatProbe(v, level.L1, engine.L1.FirstTokenTimeoutMS, hc))
	}
	if l2 := engine.L2; l2.BaseURL != "" {
		out = append(out, chatProbe(l2.Endpoint(), level.L2, l2.TimeoutMS, hc))
	}
	if v := engine.L1.Vision; v.BaseURL != "" {
		// The vision model has a circuit of its own and drives no level:
		// screenshots fall to OCR while it is down.
		out = append(out, chatProbe(v.Endpoint, level.None, v.FirstTokenMS, hc))
	}
	if templates.Check != nil {
		out = append(out, templates)
	}
	for _, u := range c.ASR.WhisperURLs {
		if pu, err := url.Parse(u); err == nil {
			out = append(out, health.WhisperProbe("whisper@"+pu.Host, u, hc))
		}
	}
	if cl := c.ASR.Cloud; cl.BaseURL != "" {
		out = append(out, health.TranscriptionProbe(asrCloudBackend, cl.BaseURL, cl.APIKey, cmp.Or(cl.Model, asrCloudModel), hc))
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
			out = append(out, chatProbe(e.Endpoint, level.None, e.FirstTokenTimeoutMS, hc))
		}
	}
	return out
}

// The captions' cloud backend as the asr package names it, and its
// default model.
const (
	asrCloudBackend = "cloud"
	asrCloudModel   = "gpt-4o-mini-transcribe"
)

// asrCircuits gives the captions' pool the health center's circuits of
// the whisper servers and the cloud speech-to-text (probed above under
// the pool's own names), and feeds them the pool's live results.
type asrCircuits struct{ h *health.Center }

func (c asrCircuits) BackendUp(backend string) bool { return c.h.BackendUp(backend) }

func (c asrCircuits) Report(backend string, ok bool, class string) {
	c.h.Report(backend, ok, upstream.Class(class))
}

// chatProbe is a chat endpoint's probe: a one-token completion, or the
// model list when the endpoint asks for it or names no model of its own
// (a gateway entry whose model is the client's, "{model}").
func chatProbe(e upstream.Endpoint, l level.Level, firstTokenMS int, hc *http.Client) health.Probe {
	if e.Probe == upstream.ProbeList || strings.Contains(e.Model, "{model}") {
		return health.ListProbe(e.Name, l, e.BaseURL, e.APIKey, hc)
	}
	return health.CompletionProbe(e.Name, l, e, time.Duration(firstTokenMS)*time.Millisecond, hc)
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
	if v := engine.WithDefaults().L1.Vision; v.BaseURL != "" {
		backends = append(backends, v.Endpoint)
	}
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

// ocrProbe checks OCR (a backend of no level: screenshots need the vision
// model while it is down); none when OCR is disabled.
func ocrProbe(c config, pool *ocr.Pool) []health.Probe {
	if c.OCR.Disabled {
		return nil
	}
	return []health.Probe{{Name: ocr.Backend, Level: level.None, Check: pool.Probe, Timeout: ocr.ProbeTimeout}}
}
