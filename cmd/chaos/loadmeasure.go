package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/poise-dev/poise/cmd/loadgen/load"
	"golang.org/x/sync/errgroup"
)

// idleReport is the server's memory per idle session, and how long a
// resume takes while it holds them.
type idleReport struct {
	Asked      int     `json:"asked"`
	Sessions   int     `json:"sessions"`              // opened
	DialFailed string  `json:"dial_failed,omitempty"` // the first dial failure, if any
	HeapKiB    float64 `json:"heap_kib"`
	RSSKiB     float64 `json:"rss_kib"`
	// HeapGCKiB and RSSGCKiB are read again after settleCollections
	// forced collections: what an idle node settles to once the
	// handshakes' garbage is collected and the stacks have shrunk, as the
	// runtime's periodic collections do within minutes.
	HeapGCKiB  float64 `json:"heap_gc_kib"`
	RSSGCKiB   float64 `json:"rss_gc_kib"`
	StackKiB   float64 `json:"stack_kib"` // goroutine stacks, after the collection
	Goroutines float64 `json:"goroutines"`
	NoFile     uint64  `json:"nofile"` // this process's RLIMIT_NOFILE
	// Resumes sessions dropped their socket at once and resumed with
	// their last_seq; Resumed of them got their session back.
	Resumes   int     `json:"resumes"`
	Resumed   int     `json:"resumed"`
	ResumeP50 float64 `json:"resume_p50_ms"` // from the drop to the welcome
	ResumeP99 float64 `json:"resume_p99_ms"`
	ResumeMax float64 `json:"resume_max_ms"`
	Lost      int     `json:"lost"`
	Doubled   int     `json:"doubled"`
}

// Idle measurement timings.
const (
	idleSettle        = 3 * time.Second // idle sessions sit this long before the memory is read
	collectFor        = 5 * time.Second // bounds the forced collections and the second reading
	settleCollections = 3               // forced collections before the second reading
	resumeFor         = 5 * time.Second // the dropped sessions resume within this
	resumes           = 100             // sessions dropped at once
)

// idleMemory opens count idle sessions (heartbeats only) on n and reads
// the growth of its heap, RSS and goroutines per session over a baseline
// taken after forced collections; then resumes of them drop their socket
// at once and resume.
func idleMemory(ctx context.Context, n *node, count int, profile string) (idleReport, error) {
	nofile, err := raiseNoFile(uint64(count) + 1024)
	if err != nil {
		return idleReport{}, err
	}
	if err := n.collect(ctx, ""); err != nil { // the baseline without start-up's garbage
		return idleReport{}, err
	}
	heap0, rss0, g0 := n.metric("go_memstats_heap_inuse_bytes"), n.metric("process_resident_memory_bytes"), n.metric("go_goroutines")
	stack0 := n.metric("go_memstats_stack_inuse_bytes")
	r, err := load.Start(ctx, load.Config{Servers: []string{n.url}, Sessions: count, Profiles: []load.Profile{{Name: "idle"}},
		Duration: idleSettle + collectFor + resumeFor, Dialers: loadDialers})
	if err != nil {
		return idleReport{}, err
	}
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
	}
	err = n.scrape(ctx)
	heap1, rss1 := n.metric("go_memstats_heap_inuse_bytes"), n.metric("process_resident_memory_bytes")
	if err == nil {
		err = n.collect(ctx, profile)
	}
	opened := r.Opened()
	drop := make([]int, 0, resumes)
	for i := range min(resumes, opened) {
		drop = append(drop, i*opened/min(resumes, opened)) // spread over the sessions
	}
	r.Drop(drop...)
	res := r.Wait()
	if err != nil {
		return idleReport{}, err
	}
	k := float64(res.Opened)
	rep := idleReport{Asked: count, Sessions: res.Opened, NoFile: nofile,
		HeapKiB:    (heap1 - heap0) / k / 1024,
		RSSKiB:     (rss1 - rss0) / k / 1024,
		HeapGCKiB:  (n.metric("go_memstats_heap_inuse_bytes") - heap0) / k / 1024,
		RSSGCKiB:   (n.metric("process_resident_memory_bytes") - rss0) / k / 1024,
		StackKiB:   (n.metric("go_memstats_stack_inuse_bytes") - stack0) / k / 1024,
		Goroutines: (n.metric("go_goroutines") - g0) / k,
		Lost:       res.Lost, Doubled: res.Doubled}
	if len(res.DialFailures) > 0 {
		rep.DialFailed = res.DialFailures[0]
	}
	var took []float64
	for _, rc := range res.Reconnects {
		rep.Resumes++
		if rc.Resumed {
			rep.Resumed++
		}
		if rc.BackMS >= 0 {
			took = append(took, rc.BackMS-rc.LostMS)
		}
	}
	rep.ResumeP50, rep.ResumeP99, rep.ResumeMax = load.Percentile(took, 50), load.Percentile(took, 99), load.Percentile(took, 100)
	return rep, nil // a resume that failed shows in Resumes and Resumed
}

func (i idleReport) markdown() string {
	return fmt.Sprintf("**Idle sessions** (%d sessions sending only heartbeats, on one node, measured %.0f s after they opened, from the server's `/metrics`): per session %.1f KiB of Go heap, %.1f KiB of RSS, %.2f goroutines; after %d forced collections %.1f KiB of heap, %.1f KiB of RSS, of which %.1f KiB goroutine stacks. **Resume at that count**: %d sessions dropped their socket at once and resumed with their `last_seq` (%d got their session back): p50 %.0f ms, p99 %.0f ms, max %.0f ms from the drop to the `welcome`; %d lost, %d doubled messages.\n\n",
		i.Sessions, idleSettle.Seconds(), i.HeapKiB, i.RSSKiB, i.Goroutines, settleCollections, i.HeapGCKiB, i.RSSGCKiB, i.StackKiB, i.Resumes, i.Resumed, i.ResumeP50, i.ResumeP99, i.ResumeMax, i.Lost, i.Doubled)
}

// raiseNoFile makes sure this process may hold need files, raising its
// soft RLIMIT_NOFILE up to the hard one, and returns the limit. (Poise,
// a Go program too, raises its own soft limit to the hard one at start;
// it inherits the same hard limit.)
func raiseNoFile(need uint64) (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < need && rl.Max > rl.Cur {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
	}
	if rl.Cur < need {
		return rl.Cur, fmt.Errorf("chaos: %d open files allowed, the idle measurement needs %d: raise the hard limit (ulimit -Hn) or lower -idle", rl.Cur, need)
	}
	return rl.Cur, nil
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
