package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// opsClient reads a server's /metrics and ops API and switches demo faults.
type opsClient struct {
	base string
	http *http.Client
}

func newOpsClient(base string) *opsClient {
	return &opsClient{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: 30 * time.Second}}
}

type memory struct{ rss, heap, goroutines float64 }

// memory reads the process collector's resident memory and the Go heap.
func (o *opsClient) memory(ctx context.Context) (memory, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.base+"/metrics", nil)
	resp, err := o.http.Do(req)
	if err != nil {
		return memory{}, err
	}
	defer resp.Body.Close()
	var m memory
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(val, 64)
		switch name {
		case "process_resident_memory_bytes":
			m.rss = v
		case "go_memstats_heap_inuse_bytes":
			m.heap = v
		case "go_goroutines":
			m.goroutines = v
		}
	}
	if m.rss == 0 {
		return m, fmt.Errorf("%s/metrics has no process_resident_memory_bytes", o.base)
	}
	return m, sc.Err()
}

type transition struct {
	Session string    `json:"session"`
	At      time.Time `json:"at"`
}

func (o *opsClient) transitions(ctx context.Context, n int) ([]transition, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/ops/api/transitions?n=%d", o.base, n), nil)
	resp, err := o.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ts []transition
	return ts, json.NewDecoder(resp.Body).Decode(&ts)
}

func (o *opsClient) fault(ctx context.Context, name string, on bool) error {
	body, _ := json.Marshal(map[string]any{"fault": name, "on": on})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, o.base+"/ops/api/demo/faults", bytes.NewReader(body))
	resp, err := o.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("switch fault %s: %s (is the server running with -demo?)", name, resp.Status)
	}
	return nil
}
