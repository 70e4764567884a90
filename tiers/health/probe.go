package health

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/upstream"
)

// listTimeout bounds the model listing of a FirstTokenProbe.
const listTimeout = time.Second

// maxProbeBody bounds how much of a probe's answer is read and dropped.
const maxProbeBody = 64 << 10 // bytes

// Probe is one backend's health check. Check returns nil when the backend
// is healthy; it must return when ctx is done.
type Probe struct {
	Name  string      // the backend name, as the engine reports it
	Level level.Level // L1, L2 or L3; level.None for a backend of no level (a gateway endpoint)
	Check func(ctx context.Context) error
	// Timeout bounds one check when it is longer than the default: half
	// the probe interval, at most maxProbeTimeout.
	Timeout time.Duration
}

// HTTPProbe checks an OpenAI-compatible server with GET {baseURL}/models,
// which OpenAI, Azure's v1 API, vLLM, llama.cpp and vendorsim all serve.
// Any 2xx passes.
func HTTPProbe(name string, lvl level.Level, baseURL, apiKey string, hc *http.Client) Probe {
	url := strings.TrimRight(baseURL, "/") + "/models"
	return Probe{Name: name, Level: lvl, Check: func(ctx context.Context) error {
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

// FirstTokenProbe checks an OpenAI-compatible model server the way the
// engine uses it: GET {baseURL}/models must pass (as HTTPProbe), and then a
// one-token streamed completion must send its first chunk within
// firstToken. A local model that lists its models but answers too slowly
// therefore fails its probe, so a level taken down by live timeouts does
// not climb back, only to time out again, while it stays slow.
func FirstTokenProbe(name string, lvl level.Level, ep upstream.Endpoint, firstToken time.Duration, hc *http.Client) Probe {
	list := HTTPProbe(name, lvl, ep.BaseURL, ep.APIKey, hc)
	url := strings.TrimRight(ep.BaseURL, "/") + "/chat/completions"
	body, _ := json.Marshal(map[string]any{"model": ep.Model, "stream": true, "max_tokens": 1,
		"messages": []map[string]string{{"role": "user", "content": "Reply with OK."}}})
	return Probe{Name: name, Level: lvl, Timeout: firstToken + listTimeout, Check: func(ctx context.Context) error {
		lctx, lcancel := context.WithTimeout(ctx, listTimeout)
		defer lcancel()
		if err := list.Check(lctx); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, firstToken)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("tiers: probe %s: %w", name, err)
		}
		req.Header.Set("Content-Type", "application/json")
		if ep.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+ep.APIKey)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("tiers: probe %s: first token: %w", name, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("tiers: probe %s: completion status %d", name, resp.StatusCode)
		}
		line, err := bufio.NewReader(io.LimitReader(resp.Body, maxProbeBody)).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "data:") {
			return fmt.Errorf("tiers: probe %s: no first chunk within %v: %v", name, firstToken, err)
		}
		return nil
	}}
}
