package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/cmd/vendorsim/sim/simtest"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/health/healthtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Models of the gateway rig; each endpoint is its own simulated host.
const (
	gwModel   = "chat"    // the model clients ask the rig for
	modelC    = "model-c" // the third endpoint's model
	replyB    = "A different answer from model B, so that a restart can be told from a continuation."
	clientKey = "sk-gateway-client"
)

// waitLog stands in for the gateway's sleep: it records each Retry-After
// or backoff wait and returns at once, so retry timing is checked without
// sleeping.
type waitLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (w *waitLog) sleep(ctx context.Context, d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits = append(w.waits, d)
	return ctx.Err() == nil
}

func (w *waitLog) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.waits)
}

// gwRig is a gateway over three simulated endpoints (a, b, c) behind a
// real HTTP server, with a real health center (on a fake clock, so probe
// rounds move only when told), real metrics, and a real openai-go client.
type gwRig struct {
	a, b, c simtest.Host
	cfg     Config
	health  *health.Center
	gw      *Handler
	srv     *httptest.Server
	client  openai.Client
	reg     *prometheus.Registry
	clock   *healthtest.Clock
	waits   *waitLog
	logs    *syncBuffer
}

// newGatewayRig builds the rig. By default chain "chat" is a (model-a),
// then b (model-b, another reply), then c; adjust changes the config
// before the gateway is made.
func newGatewayRig(t *testing.T, adjust func(r *gwRig)) *gwRig {
	t.Helper()
	r := &gwRig{a: newSimHost(t), b: newSimHost(t), c: newSimHost(t), reg: prometheus.NewPedanticRegistry(),
		clock: healthtest.NewClock(), waits: &waitLog{}, logs: &syncBuffer{}}
	r.a.Sim.SetReply(modelA, replyText)
	r.a.Sim.SetReply(modelALong, replyText)
	r.b.Sim.SetReply(modelB, replyB)
	r.c.Sim.SetReply(modelC, replyText)
	r.cfg = Config{
		Keys:                []string{clientKey},
		TimeoutMS:           2000,
		FirstTokenTimeoutMS: 2000,
		Chains: map[string][]Endpoint{gwModel: {
			r.entry("a", r.a, modelA), r.entry("b", r.b, modelB), r.entry("c", r.c, modelC),
		}},
	}
	if adjust != nil {
		adjust(r)
	}
	if err := r.cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	log := zerolog.New(r.logs)
	m := NewMetrics(r.reg, upstream.NewMetrics(r.reg))
	r.health = health.New(health.Config{IntervalMS: 1000, RecoverAfter: 2}, endpointProbes(t, r.cfg), log,
		health.NewMetrics(r.reg), health.WithClock(r.clock.Now))
	gw, err := New(r.cfg, HealthCircuits(r.health), log, m)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	gw.sleep = r.waits.sleep
	r.gw = gw
	r.srv = httptest.NewServer(gw)
	t.Cleanup(func() {
		r.srv.Close()
		gw.Close()
	})
	r.client = newGatewayClient(r.srv.URL, clientKey)
	return r
}

// entry is a chain entry for host h.
func (r *gwRig) entry(name string, h simtest.Host, model string) Endpoint {
	return Endpoint{Endpoint: upstream.Endpoint{Name: name, BaseURL: h.URL, APIKey: "sk-" + name, Model: model}}
}

// newGatewayClient is the real openai-go client, without retries.
func newGatewayClient(url, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// chatParams asks model one question, with usage in streams.
func chatParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about a time you fixed a production outage.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// streamed is what a streaming client saw.
type streamed struct {
	text     string   // choice 0's content, in order
	finish   string   // choice 0's finish_reason, "" if none came
	models   []string // each chunk's model
	provider string   // the last chunk's "provider"
	usage    *openai.CompletionUsage
	err      error // the stream's error; nil after [DONE]
	header   http.Header
	chunks   int
}

// stream asks the gateway through a streaming request.
func (r *gwRig) stream(t *testing.T, p openai.ChatCompletionNewParams, opts ...option.RequestOption) streamed {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	return r.streamCtx(ctx, p, opts...)
}

func (r *gwRig) streamCtx(ctx context.Context, p openai.ChatCompletionNewParams, opts ...option.RequestOption) streamed {
	var (
		out  streamed
		resp *http.Response
		text strings.Builder
	)
	st := r.client.Chat.Completions.NewStreaming(ctx, p, append(opts, option.WithResponseInto(&resp))...)
	defer st.Close()
	for st.Next() {
		ch := st.Current()
		out.chunks++
		out.models = append(out.models, ch.Model)
		if f, ok := ch.JSON.ExtraFields["provider"]; ok {
			out.provider = strings.Trim(f.Raw(), `"`)
		}
		if ch.JSON.Usage.Valid() {
			u := ch.Usage
			out.usage = &u
		}
		for _, c := range ch.Choices {
			if c.Index == 0 {
				text.WriteString(c.Delta.Content)
				if c.FinishReason != "" {
					out.finish = c.FinishReason
				}
			}
		}
	}
	out.text, out.err = text.String(), st.Err()
	if resp != nil {
		out.header = resp.Header
	}
	return out
}

// complete asks the gateway through a non-streaming request.
func (r *gwRig) complete(t *testing.T, p openai.ChatCompletionNewParams, opts ...option.RequestOption) (*openai.ChatCompletion, http.Header, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	var resp *http.Response
	c, err := r.client.Chat.Completions.New(ctx, p, append(opts, option.WithResponseInto(&resp))...)
	var h http.Header
	if resp != nil {
		h = resp.Header
	}
	return c, h, err
}

// requests returns poise_backend_requests_total{backend,class}.
func (r *gwRig) requests(t *testing.T, backend, class string) float64 {
	t.Helper()
	return max(metricValue(t, r.reg, "poise_backend_requests_total", map[string]string{"backend": backend, "class": class}), 0)
}

// metric returns a counter's value, 0 when it has not been set.
func (r *gwRig) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return max(metricValue(t, r.reg, name, labels), 0)
}

// settled waits until host h has no request of model in flight, and
// returns its counters.
func settled(t *testing.T, h simtest.Host, model string) vendorsim.Counters {
	t.Helper()
	return h.WaitCounters(t, model, func(c vendorsim.Counters) bool { return c.InFlight == 0 })
}

// apiError unwraps the client's *openai.Error, failing if err is not one.
func apiError(t *testing.T, err error) *openai.Error {
	t.Helper()
	ae, ok := errors.AsType[*openai.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *openai.Error", err, err)
	}
	return ae
}

// streamError unwraps an in-band SSE error event, failing if err is not
// one.
func streamError(t *testing.T, err error) *ssestream.StreamError {
	t.Helper()
	se, ok := errors.AsType[*ssestream.StreamError](err)
	if !ok {
		t.Fatalf("error %v (%T) is not an in-band stream error", err, err)
	}
	return se
}

// wantAnswer fails unless s is a complete answer text from provider.
func wantAnswer(t *testing.T, s streamed, text, provider string) {
	t.Helper()
	if s.err != nil {
		t.Fatalf("stream error: %v", s.err)
	}
	if s.text != text || s.finish != "stop" {
		t.Fatalf("answer %q (finish %q), want %q (stop)", s.text, s.finish, text)
	}
	if s.provider != provider {
		t.Fatalf("provider %q, want %q", s.provider, provider)
	}
}
