package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
	"golang.org/x/sync/errgroup"
)

// idleReport is the server's memory per idle session.
type idleReport struct {
	Sessions   int     `json:"sessions"`
	HeapKiB    float64 `json:"heap_kib"`
	RSSKiB     float64 `json:"rss_kib"`
	Goroutines float64 `json:"goroutines"`
}

// idleSettle is how long idle sessions sit before the memory is read.
const idleSettle = 3 * time.Second

// idleMemory opens count idle sessions (heartbeats only) on n and reads
// the growth of its heap, RSS and goroutines per session.
func idleMemory(ctx context.Context, n *node, count int) (idleReport, error) {
	if err := n.scrape(ctx); err != nil {
		return idleReport{}, err
	}
	heap0, rss0, g0 := n.metric("go_memstats_heap_inuse_bytes"), n.metric("process_resident_memory_bytes"), n.metric("go_goroutines")
	r, err := load.Start(ctx, load.Config{Servers: []string{n.url}, Sessions: count, Profiles: []load.Profile{{Name: "idle"}},
		Duration: idleSettle + time.Second, Dialers: 64})
	if err != nil {
		return idleReport{}, err
	}
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
	}
	err = n.scrape(ctx)
	res := r.Wait()
	if err != nil {
		return idleReport{}, err
	}
	k := float64(res.Opened)
	return idleReport{Sessions: res.Opened,
		HeapKiB:    (n.metric("go_memstats_heap_inuse_bytes") - heap0) / k / 1024,
		RSSKiB:     (n.metric("process_resident_memory_bytes") - rss0) / k / 1024,
		Goroutines: (n.metric("go_goroutines") - g0) / k}, nil
}

// overheadReport compares question → answer_start through Poise with a
// direct streaming request to the vendor it answered from.
type overheadReport struct {
	Questions   int     `json:"questions"`
	PoiseP50    float64 `json:"poise_p50_ms"`
	PoiseP99    float64 `json:"poise_p99_ms"`
	DirectCalls int     `json:"direct_calls"`
	DirectP50   float64 `json:"direct_p50_ms"`
	DirectP99   float64 `json:"direct_p99_ms"`
}

// overhead measures, at light load, the L1 answers' answer_start latency
// through n and the first-content latency of direct calls to vendorURL.
func (s *suite) overhead(ctx context.Context, n *node, vendorURL string) (overheadReport, error) {
	p := typist
	p.QuestionGap = 2 * time.Second
	res, err := load.Measure(ctx, load.Config{Servers: []string{n.url}, Sessions: 4, Profiles: []load.Profile{p},
		Duration: overheadFor, Seed: s.seed, SLA: suiteSLAms * time.Millisecond})
	if err != nil {
		return overheadReport{}, err
	}
	var via []float64
	for _, q := range res.Questions {
		if q.Level == "L1" && q.Source == simVendorA && q.AnswerMS >= 0 {
			via = append(via, q.AnswerMS)
		}
	}
	direct, err := directFirstChunks(ctx, vendorURL)
	if err != nil {
		return overheadReport{}, err
	}
	if len(via) == 0 {
		return overheadReport{}, fmt.Errorf("no question was answered by %s at L1", simVendorA)
	}
	return overheadReport{Questions: len(via), PoiseP50: load.Percentile(via, 50), PoiseP99: load.Percentile(via, 99),
		DirectCalls: len(direct), DirectP50: load.Percentile(direct, 50), DirectP99: load.Percentile(direct, 99)}, nil
}

// directFirstChunks makes directCalls streaming calls to base, a few at
// a time, and returns their first-content latencies in ms.
func directFirstChunks(ctx context.Context, base string) ([]float64, error) {
	qs := load.DefaultQuestions["en"]
	out := make([]float64, directCalls)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(directParallel)
	for i := range directCalls {
		g.Go(func() error {
			d, err := firstChunk(ctx, base, qs[i%len(qs)])
			out[i] = ms(d)
			return err
		})
	}
	return out, g.Wait()
}

// firstChunk sends one streaming chat completion to base and returns the
// time until the first chunk with content.
func firstChunk(ctx context.Context, base, question string) (time.Duration, error) {
	body, _ := json.Marshal(map[string]any{"model": modelA, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": question}}})
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer chaos")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(data), &chunk) == nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			return time.Since(start), nil
		}
	}
	return 0, fmt.Errorf("chaos: direct call to %s: no content (status %s)", base, resp.Status)
}

// ms is d in milliseconds, to a tenth.
func ms(d time.Duration) float64 { return float64(d.Microseconds()/100) / 10 }
