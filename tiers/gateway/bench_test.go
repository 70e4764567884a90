package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// benchReply is a short answer: 48 words, so 48 content chunks.
const benchReply = "Situation: our checkout timed out during a sale. Task: I owned the fix. " +
	"Action: I profiled the database calls, added a read-through cache with a short expiry, " +
	"rolled it out behind a flag to one region, then everywhere. Result: p99 latency fell by " +
	"sixty percent and the sale went on."

// benchPaths is vendorsim without token delays, reached directly and
// through a gateway whose one chain points at it, both over real HTTP.
type benchPaths struct {
	direct, gateway openai.Client
	simURL, gwURL   string
}

func newBenchPaths(b *testing.B) benchPaths { return newPacedPaths(b, -1, benchReply) }

// newPacedPaths is benchPaths with vendorsim pacing its chunks delay apart
// (-1: no delay) and answering reply.
func newPacedPaths(b *testing.B, delay time.Duration, reply string) benchPaths {
	b.Helper()
	simURL := pacedUpstream(b, delay, reply)
	cfg := Config{Keys: []string{"k"}, Chains: map[string][]Endpoint{
		"m": {{Endpoint: upstream.Endpoint{Name: "sim", BaseURL: simURL + "/v1", Model: "m"}}},
	}}
	h := health.New(health.Config{}, endpointProbes(b, cfg), zerolog.Nop(), nil)
	gw, err := New(cfg, HealthCircuits(h), zerolog.Nop(), NewMetrics(nil, nil))
	if err != nil {
		b.Fatal(err)
	}
	gwSrv := httptest.NewServer(gw)
	b.Cleanup(func() { gwSrv.Close(); gw.Close() })
	return benchPaths{
		direct:  newGatewayClient(simURL, "k"),
		gateway: newGatewayClient(gwSrv.URL, "k"),
		simURL:  simURL,
		gwURL:   gwSrv.URL,
	}
}

// pacedUpstream returns the URL of a vendorsim pacing reply's chunks
// delay apart: in this process, or, when POISE_BENCH_UPSTREAM names one,
// a vendorsim process started by hand (`vendorsim -token-delay 5ms`, its
// -token-delay then sets the pace), so that the simulator's timers do not
// share the gateway's process and, with taskset, its CPU.
func pacedUpstream(b *testing.B, delay time.Duration, reply string) string {
	b.Helper()
	if u := os.Getenv("POISE_BENCH_UPSTREAM"); u != "" {
		body, _ := json.Marshal(vendorsim.ReplyCommand{Model: "m", Text: reply})
		resp, err := http.Post(u+"/_sim/reply", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatalf("POISE_BENCH_UPSTREAM: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			b.Fatalf("POISE_BENCH_UPSTREAM: setting the reply: %s", resp.Status)
		}
		return u
	}
	sim := vendorsim.New(vendorsim.Options{TokenDelay: delay})
	sim.SetReply("m", reply)
	simSrv := httptest.NewServer(sim)
	b.Cleanup(func() { sim.Close(); simSrv.Close() })
	return simSrv.URL
}

// streamOnce streams one answer and returns its first-token and total
// latency.
func streamOnce(ctx context.Context, b *testing.B, c openai.Client) (ttft, total time.Duration) {
	start := time.Now()
	st := c.Chat.Completions.NewStreaming(ctx, chatParams("m"))
	defer st.Close()
	n := 0
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			if n == 0 {
				ttft = time.Since(start)
			}
			n++
		}
	}
	if err := st.Err(); err != nil || n == 0 {
		b.Fatalf("stream: %v after %d chunks", err, n)
	}
	return ttft, time.Since(start)
}

// BenchmarkGatewayLatency streams whole answers one at a time, each
// iteration one directly from vendorsim and one through the gateway (in
// alternating order, so both paths see the same machine), and reports the
// p50 and p99 of the time to the first token and to the end of the stream
// on each path, and the gateway's added latency: the difference of the
// percentiles. Run with -benchtime=1000x for 1,000 requests on each path.
func BenchmarkGatewayLatency(b *testing.B) { benchLatency(b, newBenchPaths(b)) }

// BenchmarkGatewayLatencyPaced is BenchmarkGatewayLatency against an
// upstream that paces a 60-chunk answer 5 ms apart, as a model streams:
// what the relay adds to the whole stream is then what it adds per chunk
// (read buffering, rewriting, flushing), not the simulator's speed.
func BenchmarkGatewayLatencyPaced(b *testing.B) {
	benchLatency(b, newPacedPaths(b, 5*time.Millisecond, sixtyWords))
}

func benchLatency(b *testing.B, p benchPaths) {
	ctx := context.Background()
	for range 20 { // warm the connection pools
		streamOnce(ctx, b, p.direct)
		streamOnce(ctx, b, p.gateway)
	}
	var direct, gateway latencies
	var paired []time.Duration // each iteration's gateway total minus its direct total
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i%2 == 0 {
			direct.add(streamOnce(ctx, b, p.direct))
			gateway.add(streamOnce(ctx, b, p.gateway))
		} else {
			gateway.add(streamOnce(ctx, b, p.gateway))
			direct.add(streamOnce(ctx, b, p.direct))
		}
		paired = append(paired, gateway.total[i]-direct.total[i])
		i++
	}
	// The median of the paired differences: what the gateway adds to one
	// stream against the direct stream run beside it, which the machine's
	// other load moves far less than the percentiles of either path.
	slices.Sort(paired)
	b.ReportMetric(ms3(paired[len(paired)/2]), "added-paired-p50-ms")
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		d, g := direct.at(q.q), gateway.at(q.q)
		b.ReportMetric(ms3(d.total), "direct-"+q.name+"-ms")
		b.ReportMetric(ms3(g.total), "gw-"+q.name+"-ms")
		b.ReportMetric(ms3(g.total-d.total), "added-"+q.name+"-ms")
		b.ReportMetric(ms3(g.ttft-d.ttft), "added-ttft-"+q.name+"-ms")
	}
}

// latencies collects first-token and total latencies of one path.
type latencies struct{ ttft, total []time.Duration }

func (l *latencies) add(ttft, total time.Duration) {
	l.ttft, l.total = append(l.ttft, ttft), append(l.total, total)
}

// at returns the q-quantile of each.
func (l *latencies) at(q float64) struct{ ttft, total time.Duration } {
	pick := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	return struct{ ttft, total time.Duration }{pick(l.ttft), pick(l.total)}
}

func ms3(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkGatewayThroughput streams answers from 32 concurrent clients
// (16 per core), directly from vendorsim and through the gateway, and
// reports requests per second. The clients read the SSE body without
// parsing it (checking only that it ends with [DONE]), so that the cores
// go to the simulator and the gateway; they still share the machine, so
// the gateway figure is a lower bound for a gateway on its own.
func BenchmarkGatewayThroughput(b *testing.B) {
	p := newBenchPaths(b)
	body, err := json.Marshal(map[string]any{"model": "m", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": "Tell me about a time you fixed a production outage."}}})
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	for _, path := range []struct{ name, url string }{{"direct", p.simURL}, {"gateway", p.gwURL}} {
		b.Run(path.name, func(b *testing.B) {
			b.SetParallelism(16)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := rawStream(hc, path.url, body); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// rawStream posts body to url's chat completions and reads the stream to
// its end.
func rawStream(hc *http.Client, url string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(all, []byte("data: [DONE]\n\n")) {
		return fmt.Errorf("status %d, body ends %q", resp.StatusCode, all[max(0, len(all)-40):])
	}
	return nil
}

// BenchmarkGatewayLatencyDrift streams the paced 60-chunk answer directly
// and through the gateway, pair by pair, and reports the median of the
// paired differences at the first content chunk, the 30th and the last
// event: whether the gateway's added time is one hop's (the same at every
// chunk) or grows along the stream (the simulator's pacing slowed by the
// CPU the relay takes on the same cores, chunk after chunk).
func BenchmarkGatewayLatencyDrift(b *testing.B) {
	p := newPacedPaths(b, 5*time.Millisecond, sixtyWords)
	ctx := context.Background()
	for range 10 { // warm the connection pools
		streamTimes(ctx, b, p.direct)
		streamTimes(ctx, b, p.gateway)
	}
	at := map[string][]time.Duration{}
	for b.Loop() {
		d, g := streamTimes(ctx, b, p.direct), streamTimes(ctx, b, p.gateway)
		if len(d) != len(g) || len(d) < 31 {
			b.Fatalf("%d events direct, %d through the gateway", len(d), len(g))
		}
		for name, i := range map[string]int{"chunk1": 0, "chunk30": 29, "last": len(d) - 1} {
			at[name] = append(at[name], g[i]-d[i])
		}
	}
	for name, ds := range at {
		slices.Sort(ds)
		b.ReportMetric(ms3(ds[len(ds)/2]), "added-"+name+"-ms")
	}
}

// streamTimes streams one answer and returns the time of each content or
// finish chunk, and of the stream's end.
func streamTimes(ctx context.Context, b *testing.B, c openai.Client) []time.Duration {
	start := time.Now()
	st := c.Chat.Completions.NewStreaming(ctx, chatParams("m"))
	defer st.Close()
	var ts []time.Duration
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 && (ch.Choices[0].Delta.Content != "" || ch.Choices[0].FinishReason != "") {
			ts = append(ts, time.Since(start))
		}
	}
	if err := st.Err(); err != nil {
		b.Fatalf("stream: %v", err)
	}
	return append(ts, time.Since(start))
}
