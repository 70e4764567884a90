package tiers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxProbeBody bounds how much of a probe's answer is read and dropped.
const maxProbeBody = 64 << 10 // bytes

// Probe is one backend's health check. Check returns nil when the backend
// is healthy; it must return when ctx is done.
type Probe struct {
	Name  string // the backend name, as the engine reports it
	Level Level  // L1, L2 or L3; NoLevel for a backend of no level (a gateway endpoint)
	Check func(ctx context.Context) error
}

// HTTPProbe checks an OpenAI-compatible server with GET {baseURL}/models,
// which OpenAI, Azure's v1 API, vLLM, llama.cpp and vendorsim all serve.
// Any 2xx passes.
func HTTPProbe(name string, level Level, baseURL, apiKey string, hc *http.Client) Probe {
	url := strings.TrimRight(baseURL, "/") + "/models"
	return Probe{Name: name, Level: level, Check: func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProbeBody)) // reuse the connection
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("tiers: probe %s: status %d", name, resp.StatusCode)
		}
		return nil
	}}
}

// configProbes returns HTTP probes for cfg's L1 vendors and its local model.
func configProbes(cfg Config, hc *http.Client) []Probe {
	var out []Probe
	for _, v := range cfg.L1.Vendors {
		out = append(out, HTTPProbe(v.Name, L1, v.BaseURL, v.APIKey, hc))
	}
	if cfg.L2.BaseURL != "" {
		out = append(out, HTTPProbe(cfg.L2.Name, L2, cfg.L2.BaseURL, cfg.L2.APIKey, hc))
	}
	return out
}
