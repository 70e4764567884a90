package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// BenchmarkGatewayMemory sends eight parallel chat requests of nearly the
// largest body (maxGatewayBody) through the gateway, to an upstream that
// discards them and streams a short answer, and reports the growth of the
// process's peak RSS (VmHWM) over the run: what max_inflight_mb bounds.
func BenchmarkGatewayMemory(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chunkJSON("Hello", "")+chunkJSON("", "stop")+"data: [DONE]\n\n")
	}))
	defer up.Close()
	cfg := Config{Keys: []string{"k"}, Chains: map[string][]Endpoint{"m": {{Endpoint: upstream.Endpoint{Name: "up", BaseURL: up.URL + "/v1", Model: "m"}}}}}
	gw, err := New(cfg, nil, zerolog.Nop(), nil)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer func() { srv.Close(); gw.Close() }()
	content := strings.Repeat("x", maxGatewayBody-4096)
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": content}}})
	content = ""
	runtime.GC()
	debug.FreeOSMemory()
	start := peakRSS(b)
	for b.Loop() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer k")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(peakRSS(b)-start)/(1<<20), "peak-rss-growth-MiB")
	b.ReportMetric(float64(len(body))/(1<<20), "body-MiB")
}

// chunkJSON is one SSE chunk event with content and finish.
func chunkJSON(content, finish string) string {
	f := "null"
	if finish != "" {
		f = strconv.Quote(finish)
	}
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` +
		strconv.Quote(content) + `},"finish_reason":` + f + "}]}\n\n"
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B) int64 {
	b.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Skip("no VmHWM")
	return 0
}
