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

	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/web/access"
	"github.com/rs/zerolog"
)

// Gateway limits.
const (
	maxGatewayBody    = 16 << 20         // bytes of one chat request
	gatewayWriteLimit = 10 * time.Second // per write to a client
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
	plan    routes
	clients map[string]*upstream.Client // by endpoint name
	health  *health.Center              // nil: no circuits
	hc      *http.Client
	log     zerolog.Logger
	m       *Metrics
	cool    *cooldowns
	ocr     Reader // nil: ocr_fallback entries are skipped for requests with images (ocr.go)

	// sleep waits d (a Retry-After or a backoff) and reports false when ctx
	// ended the wait. Tests replace it to see the waits.
	sleep func(ctx context.Context, d time.Duration) bool
}

// New returns the gateway for cfg. health may be nil (no circuits; pass
// the shared health center, given a probe per endpoint of cfg.Resolved(),
// so that open circuits close again); m may be nil. It fails when cfg is
// not valid.
func New(cfg Config, health *health.Center, log zerolog.Logger, m *Metrics) (*Handler, error) {
	plan, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	g := &Handler{plan: plan, clients: map[string]*upstream.Client{}, health: health, hc: upstream.NewHTTPClient(),
		log: log, m: m, cool: newCooldowns(), sleep: sleepCtx}
	for _, chain := range plan.chains {
		for _, e := range chain {
			if _, ok := g.clients[e.Name]; !ok {
				g.clients[e.Name] = upstream.New(e.Endpoint, g.hc)
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
// when no keys are configured, a client on this host (access.Local). It answers 401 or 403
// itself when it returns false.
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
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok {
		for _, k := range keys {
			if subtle.ConstantTimeCompare([]byte(got), []byte(k)) == 1 {
				return true
			}
		}
	}
	writeGatewayError(w, http.StatusUnauthorized, gatewayError{Message: "Incorrect API key provided. Send one of gateway.keys as a bearer token.",
		Type: typeInvalidRequest, Code: "invalid_api_key"})
	return false
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

// serveChat serves one chat completion.
func (g *Handler) serveChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxGatewayBody))
	if err != nil {
		writeGatewayError(w, http.StatusRequestEntityTooLarge, gatewayError{
			Message: fmt.Sprintf("the request body could not be read (at most %d bytes)", maxGatewayBody), Type: typeInvalidRequest})
		return
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
