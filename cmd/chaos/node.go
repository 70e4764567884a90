package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// poiseConfig is the part of Poise's configuration (docs/config.md) the
// suite sets.
type poiseConfig struct {
	Node               string         `yaml:"node,omitempty"`
	RedisURL           string         `yaml:"redis_url,omitempty"`
	SLAms              int            `yaml:"sla_ms"`
	HeartbeatTimeoutMS int            `yaml:"heartbeat_timeout_ms"`
	ResumeWindowMS     int            `yaml:"resume_window_ms"`
	Limits             map[string]int `yaml:"limits"`
	Stream             struct {
		CoalesceMS *int `yaml:"coalesce_ms,omitempty"`
	} `yaml:"stream,omitempty"`
	Health struct {
		IntervalMS   int `yaml:"interval_ms"`
		RecoverAfter int `yaml:"recover_after"`
	} `yaml:"health"`
	L1 struct {
		HedgeAfterMS        int        `yaml:"hedge_after_ms"`
		FirstTokenTimeoutMS int        `yaml:"first_token_timeout_ms"`
		DownAfter           int        `yaml:"down_after"`
		DownWindowMS        int        `yaml:"down_window_ms"`
		Vendors             []endpoint `yaml:"vendors"`
	} `yaml:"l1"`
	L2  *l2Config `yaml:"l2,omitempty"`
	ASR struct {
		WhisperURLs []string `yaml:"whisper_urls"`
		Cloud       struct {
			BaseURL string `yaml:"base_url,omitempty"`
			APIKey  string `yaml:"api_key,omitempty"`
			Model   string `yaml:"model,omitempty"`
		} `yaml:"cloud"`
		RetryMs int `yaml:"retry_ms,omitempty"`
	} `yaml:"asr"`
}

type endpoint struct {
	Name    string `yaml:"name"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
	Model   string `yaml:"model"`
	Prefill bool   `yaml:"prefill"`
	StallMS int    `yaml:"stall_ms,omitempty"`
}

type l2Config struct {
	Name         string `yaml:"name"`
	BaseURL      string `yaml:"base_url"`
	Model        string `yaml:"model"`
	TimeoutMS    int    `yaml:"timeout_ms"`
	FailAfter    int    `yaml:"fail_after"`
	FailWindowMS int    `yaml:"fail_window_ms"`
	StallMS      int    `yaml:"stall_ms,omitempty"`
	Prefill      bool   `yaml:"prefill"`
}

// Timings of the suite's servers: small health intervals and windows, so
// that a degradation and a recovery both show within seconds.
const (
	suiteSLAms          = 1500
	suiteHealthMS       = 500   // probe period
	suiteRecoverAfter   = 3     // passing probes to climb a level
	suiteDownWindowMS   = 10000 // L1 all-down events and L2 failures count this long
	suiteStallMS        = 1000  // silence after a first token that is a stall
	suiteResumeWindowMS = 30000
)

// baseConfig points a node at the simulators with the suite's timings.
func baseConfig(sims map[string]*sim) poiseConfig {
	var c poiseConfig
	c.SLAms = suiteSLAms
	c.HeartbeatTimeoutMS = 60000
	c.ResumeWindowMS = suiteResumeWindowMS
	c.Limits = map[string]int{"questions_per_minute": 0, "sessions_per_subject": 0, "audio_seconds_per_hour": 0}
	c.Health.IntervalMS = suiteHealthMS
	c.Health.RecoverAfter = suiteRecoverAfter
	c.L1.HedgeAfterMS = 800
	c.L1.FirstTokenTimeoutMS = 1200
	c.L1.DownAfter = 3
	c.L1.DownWindowMS = suiteDownWindowMS
	c.L1.Vendors = []endpoint{
		{Name: simVendorA, BaseURL: sims[simVendorA].url + "/v1", APIKey: "chaos", Model: modelA, Prefill: true, StallMS: suiteStallMS},
		{Name: simVendorB, BaseURL: sims[simVendorB].url + "/v1", APIKey: "chaos", Model: modelB, Prefill: true, StallMS: suiteStallMS},
	}
	c.L2 = &l2Config{Name: simLocal, BaseURL: sims[simLocal].url + "/v1", Model: modelLocal, TimeoutMS: 2000,
		FailAfter: 5, FailWindowMS: suiteDownWindowMS, StallMS: suiteStallMS, Prefill: true}
	c.ASR.WhisperURLs = []string{sims[simWhisper].url}
	for name, s := range sims { // a load rig may run a pool of whisper servers
		if name != simWhisper && strings.HasPrefix(name, simWhisper) {
			c.ASR.WhisperURLs = append(c.ASR.WhisperURLs, s.url)
		}
	}
	if stt, ok := sims[simSTT]; ok {
		c.ASR.Cloud.BaseURL, c.ASR.Cloud.APIKey, c.ASR.Cloud.Model = stt.url+"/v1", "chaos", modelSTT
	}
	c.ASR.RetryMs = 1000
	return c
}

// node is a running poise process.
type node struct {
	name string
	p    *proc
	url  string
	// metrics is the last scrape of /metrics, kept so that a killed
	// node's counters are still known.
	metrics map[string]float64
}

// startNode writes cfg and starts poise serve on a free port; extra
// flags (e.g. -demo) are appended. It returns when every backend has been
// probed: up, except those named in down, which must have failed.
func startNode(ctx context.Context, b bins, dir, name string, cfg poiseConfig, down []string, extra ...string) (*node, error) {
	cfg.Node = name
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"serve", "-config", path, "-addr", "127.0.0.1:0"}, extra...)
	p, addr, err := startProc(ctx, dir, name, b.poise, args, func(line string) (string, bool) {
		var first struct {
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &first) != nil || first.Addr == "" {
			return "", false
		}
		return first.Addr, true
	})
	if err != nil {
		return nil, err
	}
	n := &node{name: name, p: p, url: "http://" + addr}
	if err := n.waitReady(ctx, down); err != nil {
		p.kill()
		return nil, err
	}
	return n, nil
}

// waitReady waits until every backend's circuit is closed, and those in
// down have failed a probe, so that sessions start at the level the rig
// means. (A circuit starts closed and counts passes only while half-open,
// so a closed one is ready.)
func (n *node) waitReady(ctx context.Context, down []string) error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		var bs []struct {
			Name  string `json:"name"`
			State string `json:"state"`
			Fail  int    `json:"consecutive_fail"`
		}
		if err := call(ctx, http.MethodGet, n.url+"/ops/api/backends", nil, &bs); err == nil && len(bs) > 0 {
			ready := true
			for _, b := range bs {
				if slices.Contains(down, b.Name) {
					ready = ready && b.Fail > 0
				} else {
					ready = ready && b.State == "up"
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("chaos: %s: backends not probed as expected within %v (down: %v)", n.name, startTimeout, down)
}

// scrape reads the node's /metrics into n.metrics (series name with its
// labels → value).
func (n *node) scrape(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	resp, err := n.get(ctx, "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	n.metrics = m
	return nil
}

// metric sums the scraped series whose name (before any labels) is name.
func (n *node) metric(name string) float64 {
	var sum float64
	for k, v := range n.metrics {
		if k == name || strings.HasPrefix(k, name+"{") {
			sum += v
		}
	}
	return sum
}

// profileCPU starts fetching n's CPU profile over the next span (whole
// seconds, at least one) into dir/name, from its ops-guarded profiler
// (the suite's nodes run without an ops token, so the host may read it).
// With dir empty it does nothing. The returned wait blocks until the
// profile is written or has failed, bounded by span and httpTimeout.
func (n *node) profileCPU(ctx context.Context, dir, name string, span time.Duration) (wait func() error) {
	if dir == "" {
		return func() error { return nil }
	}
	secs := max(int(span/time.Second), 1)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+httpTimeout)
		defer cancel()
		done <- n.fetchTo(ctx, fmt.Sprintf("/ops/debug/pprof/profile?seconds=%d", secs), filepath.Join(dir, name))
	}()
	return func() error { return <-done }
}

// get GETs path (with its query) on n; the caller closes the body.
func (n *node) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chaos: %s %s: %w", n.name, path, err)
	}
	return resp, nil
}

// fetchTo writes the body of a GET of path on n to file.
func (n *node) fetchTo(ctx context.Context, path, file string) error {
	resp, err := n.get(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("chaos: %s %s: %s", n.name, path, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// collect forces settleCollections garbage collections on n through its
// heap profiler (gc=1), keeping the last profile as dir/heap-idle.pprof
// when dir is set, then reads n's metrics again; bounded by collectFor.
// Each collection also halves the goroutine stacks that use under a
// quarter of theirs, as the periodic collections of an idle node do within
// minutes.
func (n *node) collect(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, collectFor)
	defer cancel()
	path := os.DevNull
	if dir != "" {
		path = filepath.Join(dir, "heap-idle.pprof")
	}
	for range settleCollections {
		if err := n.fetchTo(ctx, "/ops/debug/pprof/heap?gc=1", path); err != nil {
			return err
		}
	}
	return n.scrape(ctx)
}
