package gateway

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/web/access"
	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"
)

// Gateway limits.
const (
	maxGatewayBody       = 16 << 20         // bytes of one chat request
	gatewayWriteLimit    = 10 * time.Second // per write to a client
	defaultMaxInflightMB = 128              // request bytes held at once (bodyCopies per body byte), in MiB
	bodyCopies           = 4                // copies of a body alive while it is served: read, decoded, the upstream request, its send buffer
	defaultMaxResponseMB = 16               // bytes of one assembled answer, in MiB
	maxBodyWait          = 30 * time.Second // longest wait for room under max_inflight_mb
)

// Handler serves model backends as an OpenAI-compatible API: POST
// /v1/chat/completions (streaming and not) and GET /v1/models. Each
// request is routed through the chain of its model (gateway.chains), then
// the chains of its fallbacks, using upstream's client and error classes
// and the health center's circuits: an endpoint whose circuit is open (the
// health center has it down) is tried last, and probes close the circuit
// again.
//
// A Handler for a config without chains answers every request with 404
// "the gateway is not configured". Safe for concurrent use; each request
// is served on its handler goroutine and starts no goroutine of its own.
type Handler struct {
	plan     routes
	clients  map[string]*upstream.Client // by endpoint name
	circuits Circuits
	hc       *http.Client
	log      zerolog.Logger
	m        *Metrics
	cool     *cooldowns
	inflight *semaphore.Weighted // request body bytes held, of max_inflight_mb
	bodyWait time.Duration       // the longest wait for room under max_inflight_mb: maxBodyWait (tests shorten it)
	ocr      Reader              // nil: ocr_fallback entries are skipped for requests with images (ocr.go)
	failures *access.Failures    // wrong bearer keys per client address (see authorized)

	// sleep waits d (a Retry-After or a backoff) and reports false when ctx
	// ended the wait. Tests replace it to see the waits.
	sleep func(ctx context.Context, d time.Duration) bool
}

// Option configures a Handler.
type Option func(*Handler)

// WithHTTPClient sends the upstream requests through hc (default: a new
// upstream.NewHTTPClient, whose idle connections Close releases).
func WithHTTPClient(hc *http.Client) Option { return func(g *Handler) { g.hc = hc } }

// WithFailures counts the gateway's wrong bearer keys in f (default: a
// throttle of its own with access.Failures' defaults, 10 a minute per
// address, that logs them as a rate to the gateway's log). Pass one
// shared with other credential checks to give an address one budget of
// guesses for all of them.
func WithFailures(f *access.Failures) Option { return func(g *Handler) { g.failures = f } }

// New returns the gateway for cfg. circuits may be nil (every circuit
// closed; pass HealthCircuits of the shared health center, given a probe
// per endpoint of cfg.Resolved(), so that open circuits close again); m
// may be nil. It fails when cfg is not valid.
func New(cfg Config, circuits Circuits, log zerolog.Logger, m *Metrics, opts ...Option) (*Handler, error) {
	plan, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	if circuits == nil {
		circuits = noCircuits{}
	}
	g := &Handler{plan: plan, clients: map[string]*upstream.Client{}, circuits: circuits,
		log: log, m: m, cool: newCooldowns(), sleep: sleepCtx, bodyWait: maxBodyWait,
		inflight: semaphore.NewWeighted(int64(plan.cfg.MaxInflightMB) << 20)}
	for _, o := range opts {
		o(g)
	}
	if g.hc == nil {
		g.hc = upstream.NewHTTPClient()
	}
	if g.failures == nil {
		g.failures = newFailures(log)
	}
	var um *upstream.Metrics
	if m != nil {
		um = m.requests
	}
	for _, chain := range plan.chains {
		for _, e := range chain {
			if _, ok := g.clients[e.Name]; !ok {
				g.clients[e.Name] = upstream.New(e.Endpoint, g.hc, upstream.WithMetrics(um), upstream.WithLog(log))
			}
		}
	}
	return g, nil
}

// sleepCtx waits d; it reports false when ctx ended the wait.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close releases the gateway's idle connections. Call it after the server
// has stopped serving.
func (g *Handler) Close() { g.hc.CloseIdleConnections() }

// ServeHTTP serves POST /v1/chat/completions and GET /v1/models; any other
// path or method gets an OpenAI-style 404 or 405.
func (g *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.plan.cfg.Enabled() {
		writeGatewayError(w, http.StatusNotFound, gatewayError{Message: "the gateway is not configured: gateway.chains is empty",
			Type: typeInvalidRequest, Code: "gateway_not_configured"})
		return
	}
	if !g.authorized(w, r) {
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/v1/chat/completions" && r.Method == http.MethodPost:
		g.serveChat(w, r)
	case path == "/v1/models" && r.Method == http.MethodGet:
		g.serveModels(w)
	case path == "/v1/chat/completions", path == "/v1/models":
		allow := http.MethodGet
		if path == "/v1/chat/completions" {
			allow = http.MethodPost
		}
		w.Header().Set("Allow", allow)
		writeGatewayError(w, http.StatusMethodNotAllowed, gatewayError{Message: fmt.Sprintf("method %s not allowed on %s", r.Method, path), Type: typeInvalidRequest})
	default:
		writeGatewayError(w, http.StatusNotFound, gatewayError{Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), Type: typeInvalidRequest})
	}
}

// authorized checks the client's key: a bearer key from gateway.keys, or,
// when no keys are configured, a client on this host (access.Local). A
// wrong key (any Authorization header that is not one of the keys) counts
// against the client's address in g.failures; an address over the limit
// gets 429 with Retry-After until its window ends, before its key is
// looked at, so that a right guess cannot be told from a wrong one. It
// answers 401, 403 or 429 itself when it returns false; no key is logged.
func (g *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	keys := g.plan.cfg.Keys
	if len(keys) == 0 {
		if access.Local(r) {
			return true
		}
		writeGatewayError(w, http.StatusForbidden, gatewayError{Message: "gateway.keys is empty: only clients on this host are served",
			Type: typeInvalidRequest, Code: "forbidden"})
		return false
	}
	if ok, wait := g.failures.Allow(r); !ok {
		writeGatewayError(w, http.StatusTooManyRequests, gatewayError{
			Message: "too many wrong API keys from this address; retry after " + wait.Round(time.Second).String(),
			Type:    typeRateLimit, Code: "too_many_wrong_keys", retryAfter: wait})
		return false
	}
	auth := r.Header.Get("Authorization")
	if got, ok := strings.CutPrefix(auth, "Bearer "); ok {
		for _, k := range keys {
			if subtle.ConstantTimeCompare([]byte(got), []byte(k)) == 1 {
				return true
			}
		}
	}
	if auth != "" {
		g.failures.Fail(r)
	}
	writeGatewayError(w, http.StatusUnauthorized, gatewayError{Message: "Incorrect API key provided. Send one of gateway.keys as a bearer token.",
		Type: typeInvalidRequest, Code: "invalid_api_key"})
	return false
}

// newFailures is the gateway's own throttle of wrong keys, which logs
// them as a rate: at most one line a window, however many come.
func newFailures(log zerolog.Logger) *access.Failures {
	return &access.Failures{Report: func(n, addrs int, per time.Duration) {
		log.Warn().Int("failures", n).Int("addresses", addrs).Dur("per", per).
			Msg(fmt.Sprintf("tiers: gateway: wrong API keys; an address is refused for %s after %d", access.DefaultFailWindow, access.DefaultFailures))
	}}
}

// modelObject is one entry of GET /v1/models.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// serveModels lists the models that have a chain of their own ("*" serves
// any name but lists none).
func (g *Handler) serveModels(w http.ResponseWriter) {
	data := []modelObject{}
	for _, m := range slices.Sorted(maps.Keys(g.plan.chains)) {
		if m != AnyModelChain {
			data = append(data, modelObject{ID: m, Object: "model", OwnedBy: "poise"})
		}
	}
	writeJSONBody(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// serveChat serves one chat completion. The request's body bytes, times
// bodyCopies, count against max_inflight_mb until the response is
// complete.
func (g *Handler) serveChat(w http.ResponseWriter, r *http.Request) {
	weight := r.ContentLength
	if weight < 0 || weight > maxGatewayBody {
		weight = maxGatewayBody // unknown: the most it may be, until read
	}
	weight *= bodyCopies
	if !g.reserve(r.Context(), weight) {
		writeGatewayError(w, http.StatusServiceUnavailable, gatewayError{
			Message: "the gateway is holding as many request bytes as gateway.max_inflight_mb allows; retry shortly",
			Type:    typeServerError, Code: "overloaded", retryAfter: time.Second})
		return
	}
	defer func() { g.inflight.Release(weight) }()
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxGatewayBody), r.ContentLength)
	if err != nil {
		writeGatewayError(w, http.StatusRequestEntityTooLarge, gatewayError{
			Message: fmt.Sprintf("the request body could not be read (at most %d bytes)", maxGatewayBody), Type: typeInvalidRequest})
		return
	}
	if n := int64(len(body)) * bodyCopies; n < weight { // give back what an unknown length did not use
		g.inflight.Release(weight - n)
		weight = n
	}
	rq, apiErr := parseChatRequest(body)
	if apiErr != nil {
		writeGatewayError(w, http.StatusBadRequest, *apiErr)
		return
	}
	targets, status, apiErr := g.targets(rq)
	if apiErr != nil {
		writeGatewayError(w, status, *apiErr)
		return
	}
	c := newGatewayCall(g, rq, w)
	c.run(r.Context(), targets)
}

// reserve takes n bytes of max_inflight_mb, waiting for room up to
// bodyWait (or ctx); false: no room came.
func (g *Handler) reserve(ctx context.Context, n int64) bool {
	if n > int64(g.plan.cfg.MaxInflightMB)<<20 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, g.bodyWait)
	defer cancel()
	return g.inflight.Acquire(ctx, n) == nil
}

// readBody reads a request body in one allocation when its length is
// known (io.ReadAll would grow its buffer by copies, twice the body).
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length < 0 || length > maxGatewayBody {
		return io.ReadAll(r)
	}
	buf := make([]byte, length)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	// The length was honest: nothing follows (MaxBytesReader and net/http
	// enforce Content-Length).
	return buf, nil
}
