package tiers

import (
	"maps"
	"slices"
)

// WithGatewayProbes makes the health center probe the endpoints of gc's
// chains (GET {base_url}/models, like the vendors) as backends of no level
// (default: none), so that an endpoint whose circuit opened is closed
// again after health.recover_after consecutive passing probes. An
// endpoint named like an L1 vendor or the local model is that backend, and
// is probed once. An invalid gc adds no probes (NewGateway reports it).
func WithGatewayProbes(gc GatewayConfig) HealthOption {
	return func(h *Health) { h.gw = gc }
}

// gatewayProbes returns an HTTP probe per gateway endpoint that the
// health center does not probe already. Called by NewHealth.
func (h *Health) gatewayProbes() []Probe {
	if !h.gw.Enabled() {
		return nil
	}
	plan, err := h.gw.plan()
	if err != nil {
		return nil
	}
	eps := map[string]GatewayEndpoint{}
	for _, chain := range plan.chains {
		for _, e := range chain {
			eps[e.Name] = e
		}
	}
	var out []Probe
	for _, name := range slices.Sorted(maps.Keys(eps)) {
		if _, probed := h.backends[name]; probed {
			continue
		}
		e := eps[name]
		out = append(out, HTTPProbe(name, NoLevel, e.BaseURL, e.APIKey, h.hc))
	}
	return out
}
