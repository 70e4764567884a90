package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/rs/zerolog"
)

func TestGatewayStreamsWithUsageAndAccounting(t *testing.T) {
	r := newGatewayRig(t, nil)
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyText, "a")
	if s.header.Get(headerEndpoint) != "a" {
		t.Fatalf("%s = %q, want a", headerEndpoint, s.header.Get(headerEndpoint))
	}
	for _, m := range s.models {
		if m != modelA {
			t.Fatalf("chunk model %q, want %q (the model that answered)", m, modelA)
		}
	}
	if s.usage == nil || s.usage.CompletionTokens == 0 || s.usage.TotalTokens != s.usage.PromptTokens+s.usage.CompletionTokens {
		t.Fatalf("usage %+v", s.usage)
	}
	if got := r.requests(t, "a", "ok"); got != 1 {
		t.Fatalf("requests{a,ok} = %v", got)
	}
	if got := r.metric(t, "poise_gateway_tokens_total", map[string]string{"endpoint": "a", "kind": "completion"}); got != float64(s.usage.CompletionTokens) {
		t.Fatalf("tokens{a,completion} = %v, usage says %d", got, s.usage.CompletionTokens)
	}
	if c := settled(t, r.a, modelA); c.Requests != 1 || c.Completed != 1 || c.Streams != 1 {
		t.Fatalf("endpoint a saw %+v", c)
	}
}

func TestGatewayStreamWithoutUsageAsked(t *testing.T) {
	r := newGatewayRig(t, nil)
	p := chatParams(gwModel)
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	s := r.stream(t, p)
	wantAnswer(t, s, replyText, "a")
	if s.usage != nil {
		t.Fatalf("a client that did not ask for usage got a usage chunk: %+v", s.usage)
	}
	// The gateway asked upstream anyway, for its own accounting.
	if got := r.metric(t, "poise_gateway_tokens_total", map[string]string{"endpoint": "a", "kind": "completion"}); got == 0 {
		t.Fatal("no completion tokens accounted")
	}
}

func TestGatewayNonStreaming(t *testing.T) {
	r := newGatewayRig(t, nil)
	c, h, err := r.complete(t, chatParams(gwModel))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != replyText || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion %s", c.RawJSON())
	}
	if c.Model != modelA || h.Get(headerEndpoint) != "a" || c.Object != "chat.completion" {
		t.Fatalf("model %q, endpoint %q, object %q", c.Model, h.Get(headerEndpoint), c.Object)
	}
	if c.Usage.CompletionTokens == 0 || c.Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v", c.Usage)
	}
	// Upstream it was a stream, so that timeouts and stalls apply.
	if got := settled(t, r.a, modelA); got.Streams != 1 {
		t.Fatalf("endpoint a saw %+v", got)
	}
}

func TestGatewayModels(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains["other"] = []Endpoint{r.entry("b", r.b, modelB)}
		r.cfg.Chains[AnyModelChain] = []Endpoint{r.entry("c", r.c, "{model}")}
	})
	page, err := r.client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{gwModel, "other"}) {
		t.Fatalf("models %v", ids)
	}
}

func TestGatewayAnyChainSubstitutesModel(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains[AnyModelChain] = []Endpoint{r.entry("c", r.c, "{model}")}
	})
	r.c.Sim.SetReply("gpt-something", replyText)
	s := r.stream(t, chatParams("gpt-something"))
	wantAnswer(t, s, replyText, "c")
	if got := settled(t, r.c, "gpt-something"); got.Completed != 1 {
		t.Fatalf("endpoint c saw %+v for the requested name", got)
	}
}

func TestGatewayUnknownModel(t *testing.T) {
	r := newGatewayRig(t, nil)
	_, _, err := r.complete(t, chatParams("no-such-model"))
	ae := apiError(t, err)
	if ae.StatusCode != http.StatusNotFound || ae.Code != "model_not_found" {
		t.Fatalf("status %d code %q", ae.StatusCode, ae.Code)
	}
}

func TestGatewayAuth(t *testing.T) {
	r := newGatewayRig(t, nil)
	bad := newGatewayClient(r.srv.URL, "sk-wrong")
	_, err := bad.Chat.Completions.New(t.Context(), chatParams(gwModel))
	if ae := apiError(t, err); ae.StatusCode != http.StatusUnauthorized || ae.Code != "invalid_api_key" {
		t.Fatalf("wrong key: status %d code %q", ae.StatusCode, ae.Code)
	}
	if c := r.a.Sim.Counters(modelA); c.Requests != 0 {
		t.Fatalf("an unauthorized request reached an endpoint: %+v", c)
	}

	t.Run("no keys: loopback only", func(t *testing.T) {
		open := newGatewayRig(t, func(r *gwRig) { r.cfg.Keys = nil })
		anyKey := newGatewayClient(open.srv.URL, "whatever")
		if _, err := anyKey.Chat.Completions.New(t.Context(), chatParams(gwModel)); err != nil {
			t.Fatalf("loopback client: %v", err)
		}
		// A client from elsewhere (a real one cannot be made on loopback),
		// and one a reverse proxy on this host passed on.
		remote := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		remote.RemoteAddr = "203.0.113.7:40000"
		proxied := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		proxied.RemoteAddr = "127.0.0.1:40000"
		proxied.Header.Set("X-Forwarded-For", "203.0.113.7")
		for name, req := range map[string]*http.Request{"remote": remote, "proxied": proxied} {
			rec := httptest.NewRecorder()
			open.gw.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "on this host") {
				t.Fatalf("%s client: %d %s", name, rec.Code, rec.Body)
			}
		}
	})
}

func TestGatewayNotConfigured(t *testing.T) {
	gw, err := New(Config{}, nil, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	client := newGatewayClient(srv.URL, "any")
	_, err = client.Chat.Completions.New(t.Context(), chatParams(gwModel))
	if ae := apiError(t, err); ae.StatusCode != http.StatusNotFound || ae.Code != "gateway_not_configured" {
		t.Fatalf("status %d code %q", ae.StatusCode, ae.Code)
	}
}

func TestGatewayRequestFallbacks(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains = map[string][]Endpoint{
			"first":  {r.entry("a", r.a, modelA)},
			"second": {r.entry("b", r.b, modelB)},
		}
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	s := r.stream(t, chatParams("first"), option.WithJSONSet("fallbacks", []string{"second"}))
	wantAnswer(t, s, replyB, "b")

	_, _, err := r.complete(t, chatParams("first"), option.WithJSONSet("fallbacks", []string{"nowhere"}))
	if ae := apiError(t, err); ae.StatusCode != http.StatusBadRequest || ae.Param != "fallbacks" {
		t.Fatalf("unknown fallback: status %d param %q", ae.StatusCode, ae.Param)
	}
}

func TestGatewayConfigFallbacks(t *testing.T) {
	r := newGatewayRig(t, func(r *gwRig) {
		r.cfg.Chains = map[string][]Endpoint{
			"first":  {r.entry("a", r.a, modelA)},
			"second": {r.entry("b", r.b, modelB)},
		}
		r.cfg.Fallbacks = map[string][]string{"first": {"second"}}
	})
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	wantAnswer(t, r.stream(t, chatParams("first")), replyB, "b")
}

func TestGatewayBadRequestBody(t *testing.T) {
	r := newGatewayRig(t, nil)
	for name, body := range map[string]string{
		"not json":    `{"model":`,
		"no model":    `{"messages":[{"role":"user","content":"hi"}]}`,
		"no messages": `{"model":"chat","messages":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+clientKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusBadRequest || json.NewDecoder(resp.Body).Decode(&eb) != nil || eb.Error.Type != typeInvalidRequest {
				t.Fatalf("status %d, body %+v", resp.StatusCode, eb)
			}
		})
	}
}

// TestGatewayServerIgnoringN: vendorsim, like some servers, answers one
// choice when n is 2; the answer ends at [DONE], it is not taken for a cut.
func TestGatewayServerIgnoringN(t *testing.T) {
	r := newGatewayRig(t, nil)
	p := chatParams(gwModel)
	p.N = openai.Int(2)
	wantAnswer(t, r.stream(t, p), replyText, "a")
	if b := r.b.Sim.Counters(modelB); b.Requests != 0 {
		t.Fatalf("b saw %+v", b)
	}
}

// TestGatewayFailedAttemptsAreNotBilled: the answer names the endpoint
// and model that answered, its usage is that endpoint's, and the failed
// attempt is counted under its class, never as a completion.
func TestGatewayFailedAttemptsAreNotBilled(t *testing.T) {
	r := newGatewayRig(t, twoEndpoints)
	r.a.Sim.SetFault(modelA, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	s := r.stream(t, chatParams(gwModel))
	wantAnswer(t, s, replyB, "b")
	if last := s.models[len(s.models)-1]; last != modelB || s.header.Get(headerEndpoint) != "b" {
		t.Fatalf("model %q, endpoint %q: want the fallback named", last, s.header.Get(headerEndpoint))
	}
	if s.usage == nil || s.usage.CompletionTokens == 0 {
		t.Fatalf("usage %+v", s.usage)
	}
	for _, m := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"poise_backend_requests_total", map[string]string{"backend": "a", "class": "server"}, 1},
		{"poise_backend_requests_total", map[string]string{"backend": "a", "class": "ok"}, 0},
		{"poise_backend_requests_total", map[string]string{"backend": "b", "class": "ok"}, 1},
		{"poise_gateway_tokens_total", map[string]string{"endpoint": "a", "kind": "completion"}, 0},
		{"poise_gateway_tokens_total", map[string]string{"endpoint": "a", "kind": "prompt"}, 0},
		{"poise_gateway_tokens_total", map[string]string{"endpoint": "b", "kind": "completion"}, float64(s.usage.CompletionTokens)},
		{"poise_gateway_tokens_total", map[string]string{"endpoint": "b", "kind": "prompt"}, float64(s.usage.PromptTokens)},
		{"poise_gateway_responses_total", map[string]string{"outcome": outcomeOK}, 1},
	} {
		if got := r.metric(t, m.name, m.labels); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}
}
