package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// scrape GETs a server's /metrics (loopback, so no ops token) and returns
// its sample lines.
func scrape(t *testing.T, addr string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// metricValue sums the samples of name (with any labels) in lines.
func metricValue(lines []string, name string) float64 {
	var sum float64
	for _, l := range lines {
		series, val, ok := strings.Cut(l, " ")
		if !ok || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		v, _ := strconv.ParseFloat(val, 64)
		sum += v
	}
	return sum
}

// hasSeries reports whether a sample of series (name{labels}, exactly as
// exposed, or a name prefix ending in "{") is in lines.
func hasSeries(lines []string, series string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, series) {
			return true
		}
	}
	return false
}

// TestMetricsNames scrapes a running server's /metrics after a session
// answered a question and lost its heartbeat: every metric of docs/ops.md
// is there (with the labels it names), beside the Go and process
// collectors, and no user-visible error was counted.
func TestMetricsNames(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "heartbeat_timeout_ms: 1500\n")
	addr := startServer(t, noEnv, "-demo", "-config", cfg)
	c := dialWS(t, addr)
	c.hello(nil)
	c.send(map[string]any{"type": "question", "text": "Tell me about yourself."})
	var ended, lost bool // the heartbeat may be lost while the answer streams
	c.readUntil(func(m wsMsg) bool {
		ended = ended || m.Type == "answer_end"
		lost = lost || (m.Type == "level" && m.Reason == "heartbeat_lost")
		return ended && lost
	})
	lines := scrape(t, addr)
	for _, series := range []string{
		`poise_fallback_level_active_users{level="L4"} 1`,
		`poise_fallback_transition_total{from="L1",reason="heartbeat_lost",to="L4"} 1`,
		`poise_template_lookups_total{result="hit"}`,
		`poise_template_lookups_total{result="miss"}`,
		`poise_template_similarity_bucket{`,
		`poise_e2e_user_visible_errors_total 0`,
		`poise_answer_first_content_seconds_bucket{level="L1",`,
		`poise_backend_requests_total{backend="vendor-a",class=`,
		`poise_backend_up{backend="vendor-a"} 1`,
		`poise_backend_up{backend="local"} 1`,
		`poise_caption_latency_seconds_bucket{`,
		`poise_store_writes_dropped_total 0`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !hasSeries(lines, series) {
			t.Errorf("/metrics has no %s", series)
		}
	}
}
