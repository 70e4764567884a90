package asr

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a pool against simulated whisper servers (and a cloud) on an
// in-memory network. Build it inside a synctest bubble.
type rig struct {
	net     *vendorsim.MemNet
	sims    []*vendorsim.Server // whisper servers, whisper-0:80, whisper-1:80 ...
	cloud   *vendorsim.Server   // nil unless asked for
	reg     *prometheus.Registry
	metrics *Metrics
	pool    *Pool
	cfg     Config
}

type rigOptions struct {
	servers    int           // whisper servers; default 1
	transcript string        // what whisper says; default "tell me about yourself"
	delay      time.Duration // whisper decode time
	cloud      bool
	cfg        Config
	// circuits, when set, gives the pool shared circuits over the rig's
	// network.
	circuits func(*vendorsim.MemNet) Circuits
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	if o.servers == 0 {
		o.servers = 1
	}
	if o.transcript == "" {
		o.transcript = "tell me about yourself"
	}
	r := &rig{net: vendorsim.NewMemNet(), reg: prometheus.NewPedanticRegistry(), cfg: o.cfg}
	t.Cleanup(r.net.Close)
	r.cfg.WhisperURLs = nil
	for i := range o.servers {
		sim := vendorsim.New(vendorsim.Options{Transcripts: []string{o.transcript}, InferenceDelay: o.delay})
		t.Cleanup(sim.Close)
		addr := "whisper-" + itoaTest(i) + ":80"
		r.net.Serve(addr, sim)
		r.sims = append(r.sims, sim)
		r.cfg.WhisperURLs = append(r.cfg.WhisperURLs, "http://"+addr)
	}
	if o.cloud {
		r.cloud = vendorsim.New(vendorsim.Options{Transcripts: []string{"from the cloud"}})
		t.Cleanup(r.cloud.Close)
		r.net.Serve("cloud:80", r.cloud)
		r.cfg.Cloud = CloudConfig{BaseURL: "http://cloud:80/v1", APIKey: "test-key"}
	}
	r.cfg.HTTPClient = r.net.Client()
	if o.circuits != nil {
		r.cfg.Circuits = o.circuits(r.net)
	}
	if err := r.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r.metrics = NewMetrics(r.reg)
	r.pool = NewPool(r.cfg, zerolog.Nop(), r.metrics)
	t.Cleanup(r.pool.Close)
	return r
}

func itoaTest(i int) string { return string(rune('0' + i)) }

func second(n float64) []int16 { return voiced(int(n * SampleRate)) }

// result is one Recognize outcome with the fake time it came back at.
type result struct {
	text, source string
	err          error
	at           time.Duration
}

// recognizeAsync runs Recognize in a goroutine; read the result from the
// channel (buffered: the goroutine never blocks).
func recognizeAsync(ctx context.Context, p *Pool, partial bool) <-chan result {
	ch := make(chan result, 1)
	start := time.Now()
	go func() {
		text, source, err := p.Recognize(ctx, second(1.5), "en", partial)
		ch <- result{text, source, err, time.Since(start)}
	}()
	return ch
}

func TestPoolRecognizesOnWhisper(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{transcript: "[BLANK_AUDIO] what is your  greatest weakness "})
		text, source, err := r.pool.Recognize(t.Context(), second(0.4), "en", false)
		if err != nil || text != "what is your greatest weakness" || source != SourceWhisper {
			t.Fatalf("got %q %q %v", text, source, err)
		}
		if c := r.sims[0].Counters(vendorsim.WhisperModel); c.Completed != 1 {
			t.Fatalf("whisper counters %+v, want 1 completed (a 0.4 s clip padded to whisper's 1 s minimum)", c)
		}
	})
}

func TestPoolDecodesOneAtATimePerServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		servers int
		want    []time.Duration // completion times of 4 finals
	}{
		{"one server queues", 1, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}},
		{"two servers share", 2, []time.Duration{time.Second, time.Second, 2 * time.Second, 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rigOptions{servers: tt.servers, delay: time.Second})
				var chans []<-chan result
				for range 4 {
					chans = append(chans, recognizeAsync(t.Context(), r.pool, false))
					synctest.Wait()
				}
				for _, sim := range r.sims {
					if c := sim.Counters(vendorsim.WhisperModel); c.InFlight != 1 {
						t.Fatalf("whisper in flight %d, want 1: the pool must not stack requests on a server", c.InFlight)
					}
				}
				var got []time.Duration
				for _, ch := range chans {
					res := <-ch
					if res.err != nil {
						t.Fatal(res.err)
					}
					got = append(got, res.at)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Fatalf("finals done at %v, want %v", got, tt.want)
					}
				}
			})
		})
	}
}

func TestPoolSkipsPartialsBeforeDelayingFinals(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: time.Second})
		ctx := t.Context()
		running := recognizeAsync(ctx, r.pool, false) // decoding
		synctest.Wait()
		partial := recognizeAsync(ctx, r.pool, true) // queued: nothing waited
		synctest.Wait()
		final := recognizeAsync(ctx, r.pool, false) // queued, goes before the partial
		synctest.Wait()
		_, _, err := r.pool.Recognize(ctx, second(1), "en", true)
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("partial with work waiting: err = %v, want ErrBusy at once", err)
		}
		if got := testutil.ToFloat64(r.metrics.partialSkipped); got != 1 {
			t.Fatalf("partials skipped = %v, want 1", got)
		}
		for name, want := range map[string]struct {
			ch <-chan result
			at time.Duration
		}{
			"running final": {running, time.Second},
			"queued final":  {final, 2 * time.Second},
			"partial":       {partial, 3 * time.Second},
		} {
			if res := <-want.ch; res.err != nil || res.at != want.at {
				t.Errorf("%s: done at %v (%v), want %v", name, res.at, res.err, want.at)
			}
		}
	})
}

func TestPoolFinalWaitsForQueueRoom(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: time.Second, cfg: Config{QueueDepth: 1}})
		ctx := t.Context()
		recognizeAsync(ctx, r.pool, false) // running
		synctest.Wait()
		recognizeAsync(ctx, r.pool, false) // fills the queue
		synctest.Wait()
		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		if _, _, err := r.pool.Recognize(short, second(1), "en", false); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's deadline while the queue is full", err)
		}
		waited := recognizeAsync(ctx, r.pool, false)
		if res := <-waited; res.err != nil || res.at != 2500*time.Millisecond {
			t.Fatalf("final that waited for room: done after %v (%v), want 2.5 s", res.at, res.err)
		}
	})
}

// TestPoolSpreadsABurstOfFinals: when every queue is full, the finals
// that wait take room wherever it comes, so a burst (every session's
// audio_stop at once) is decoded by every server, not queued behind the
// first one.
func TestPoolSpreadsABurstOfFinals(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{servers: 4, delay: time.Second, cfg: Config{QueueDepth: 1}})
		var chans []<-chan result
		for range 16 {
			chans = append(chans, recognizeAsync(t.Context(), r.pool, false))
		}
		var last time.Duration
		for _, ch := range chans {
			res := <-ch
			if res.err != nil {
				t.Fatal(res.err)
			}
			last = max(last, res.at)
		}
		if last != 4*time.Second {
			t.Errorf("16 finals on 4 servers done after %v, want 4 s (4 each)", last)
		}
		for i, sim := range r.sims {
			if c := sim.Counters(vendorsim.WhisperModel); c.Completed != 4 {
				t.Errorf("whisper-%d decoded %d finals, want 4", i, c.Completed)
			}
		}
	})
}

// TestPoolPassesOnTheSlotOfAFinalThatGaveUp: a waiting final whose caller
// gives up does not take a freed slot with it; the next waiting final
// gets it.
func TestPoolPassesOnTheSlotOfAFinalThatGaveUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: time.Second, cfg: Config{QueueDepth: 1}})
		running := recognizeAsync(t.Context(), r.pool, false)
		synctest.Wait()
		queued := recognizeAsync(t.Context(), r.pool, false)
		synctest.Wait()
		quitter, quit := context.WithCancel(t.Context())
		gaveUp := recognizeAsync(quitter, r.pool, false) // waits first
		synctest.Wait()
		waiting := recognizeAsync(t.Context(), r.pool, false) // waits second
		synctest.Wait()
		quit()
		if res := <-gaveUp; !errors.Is(res.err, context.Canceled) {
			t.Fatalf("the final that gave up: err = %v, want context.Canceled", res.err)
		}
		for i, want := range []time.Duration{time.Second, 2 * time.Second} {
			if res := <-[]<-chan result{running, queued}[i]; res.err != nil || res.at != want {
				t.Fatalf("final %d: done after %v (%v), want %v", i, res.at, res.err, want)
			}
		}
		if res := <-waiting; res.err != nil || res.at != 3*time.Second {
			t.Fatalf("the final that kept waiting: done after %v (%v), want 3 s (the slot the other gave up)", res.at, res.err)
		}
	})
}

func TestPoolFallsThroughToCloud(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{cloud: true})
		r.sims[0].SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 503})
		text, source, err := r.pool.Recognize(t.Context(), second(1), "zh", false)
		if err != nil || text != "from the cloud" || source != SourceCloud {
			t.Fatalf("final: got %q %q %v, want the cloud's transcript", text, source, err)
		}
		_, _, err = r.pool.Recognize(t.Context(), second(1), "zh", true)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("partial: err = %v, want ErrUnavailable (partials never go to the cloud)", err)
		}
		if c := r.cloud.Counters(AnyModelCounters); c.Requests != 1 {
			t.Fatalf("cloud requests = %d, want 1", c.Requests)
		}
		if got := testutil.ToFloat64(r.metrics.backendErrors.WithLabelValues("whisper@whisper-0:80", classServer)); got != 2 {
			t.Fatalf("whisper server errors = %v, want 2", got)
		}
	})
}

// AnyModelCounters sums a simulator's counters over every model.
const AnyModelCounters = vendorsim.AnyModel

func TestPoolBackendHealth(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{cfg: Config{RetryMs: 3000}})
		sim, name := r.sims[0], "whisper@whisper-0:80"
		sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
		for i := range failsToDown {
			if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", false); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("failure %d: err = %v, want ErrUnavailable", i, err)
			}
		}
		if up := r.pool.Backends()[0].Up; up || testutil.ToFloat64(r.metrics.backendUp.WithLabelValues(name)) != 0 {
			t.Fatal("backend still up after two failures")
		}
		sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
		before := sim.Counters(vendorsim.WhisperModel).Requests
		if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", false); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("while down: err = %v, want ErrUnavailable without a request", err)
		}
		if after := sim.Counters(vendorsim.WhisperModel).Requests; after != before {
			t.Fatalf("a down backend got %d requests", after-before)
		}
		time.Sleep(3 * time.Second)
		if text, _, err := r.pool.Recognize(t.Context(), second(1), "en", false); err != nil || text == "" {
			t.Fatalf("after the retry period: %q %v, want a transcript", text, err)
		}
		if !r.pool.Backends()[0].Up || testutil.ToFloat64(r.metrics.backendUp.WithLabelValues(name)) != 1 {
			t.Fatal("backend not up again after a success")
		}
	})
}

func TestPoolErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fault     vendorsim.Fault
		class     string
		staysUp   bool
		refuseAll bool
	}{
		{"timeout", vendorsim.Fault{NoAnswer: true}, classTimeout, false, false},
		{"rate limited", vendorsim.Fault{Status: 429}, classRateLimited, false, false},
		{"refused connection", vendorsim.Fault{}, classServer, false, true},
		{"reset", vendorsim.Fault{ResetBeforeHeaders: true}, classServer, false, false},
		{"our bad request", vendorsim.Fault{Status: 400}, classBadRequest, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rigOptions{cfg: Config{RequestTimeoutMs: 2000}})
				r.sims[0].SetFault(vendorsim.WhisperModel, tt.fault)
				r.net.Listener("whisper-0:80").Refuse(tt.refuseAll)
				for range failsToDown {
					if _, _, err := r.pool.Recognize(t.Context(), second(1), "en", false); !errors.Is(err, ErrUnavailable) {
						t.Fatalf("err = %v, want ErrUnavailable", err)
					}
				}
				name := r.pool.Backends()[0].Name
				if got := testutil.ToFloat64(r.metrics.backendErrors.WithLabelValues(name, tt.class)); got != failsToDown {
					t.Fatalf("%s errors = %v, want %d", tt.class, got, failsToDown)
				}
				if up := r.pool.Backends()[0].Up; up != tt.staysUp {
					t.Fatalf("up = %v, want %v", up, tt.staysUp)
				}
			})
		})
	}
}

func TestPoolCloseFailsWaitingRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rigOptions{delay: time.Hour})
		ctx := context.WithoutCancel(t.Context())
		running := recognizeAsync(ctx, r.pool, false)
		synctest.Wait()
		queued := recognizeAsync(ctx, r.pool, true)
		synctest.Wait()
		r.pool.Close()
		for name, ch := range map[string]<-chan result{"running": running, "queued": queued} {
			if res := <-ch; res.err == nil {
				t.Errorf("%s: no error after Close", name)
			}
		}
		if _, _, err := r.pool.Recognize(ctx, second(1), "en", false); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: err = %v, want ErrClosed", err)
		}
	})
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		" Hello there.\n":                    "Hello there.",
		"[BLANK_AUDIO]":                      "",
		" (silence) ":                        "",
		"[Music] why do you want this job? ": "why do you want this job?",
		" 请介绍一下你自己。":                         "请介绍一下你自己。",
		"*cough* so   um":                    "so um",
		" [simulated] Tell me  about you.\n": "[simulated] Tell me about you.",
		"[simulated] [BLANK_AUDIO]":          "",
		"so [simulated] not first":           "so not first",
	}
	for in, want := range tests {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnmarked(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"[simulated] Why this role?": "Why this role?", "Why this role?": "Why this role?", "": ""} {
		if got := Unmarked(in); got != want {
			t.Errorf("Unmarked(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMetricsNilSafe(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.observeCaptionLatency(time.Second)
	m.incPartialSkipped()
	m.incFinalsFailed()
	m.addAudioDropped(2)
	m.incBackendError("b", classServer)
	m.setBackendUp("b", true)
	m.observeDecode("b", true, time.Second)
	reg := prometheus.NewPedanticRegistry()
	NewMetrics(reg).observeCaptionLatency(time.Second)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	if !strings.Contains(strings.Join(names, " "), "poise_caption_latency_seconds") {
		t.Fatalf("gathered %v, want poise_caption_latency_seconds", names)
	}
}

// TestPoolOverTCP runs the chain over real loopback sockets, outside
// synctest, the way the server does.
func TestPoolOverTCP(t *testing.T) {
	t.Parallel()
	whisperSim := vendorsim.New(vendorsim.Options{Transcripts: []string{"over tcp"}})
	defer whisperSim.Close()
	whisperSrv := httptest.NewServer(whisperSim)
	defer whisperSrv.Close()
	cloudSim := vendorsim.New(vendorsim.Options{Transcripts: []string{"cloud over tcp"}})
	defer cloudSim.Close()
	cloudSrv := httptest.NewServer(cloudSim)
	defer cloudSrv.Close()

	cfg := Config{WhisperURLs: []string{whisperSrv.URL}, Cloud: CloudConfig{BaseURL: cloudSrv.URL + "/v1"}}
	pool := NewPool(cfg, zerolog.Nop(), nil)
	defer pool.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if text, source, err := pool.Recognize(ctx, second(1), "en", false); err != nil || text != "over tcp" || source != SourceWhisper {
		t.Fatalf("whisper: %q %q %v", text, source, err)
	}
	whisperSim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{ResetBeforeHeaders: true})
	if text, source, err := pool.Recognize(ctx, second(1), "en", false); err != nil || text != "cloud over tcp" || source != SourceCloud {
		t.Fatalf("after a reset: %q %q %v, want the cloud", text, source, err)
	}
}
