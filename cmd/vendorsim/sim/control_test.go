package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestControlAPIRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	hc := h.srv.Client()
	call := func(method, path, body string) (int, string) {
		t.Helper()
		status, ctype, got := do(t, hc, jsonRequest(t, ctx, method, h.srv.URL+path, body))
		if ctype != "application/json" {
			t.Errorf("%s %s: Content-Type %q", method, path, ctype)
		}
		return status, got
	}

	if status, got := call("POST", "/_sim/faults", `{"model":"gpt-4o-mini","fault":{"status":429,"retry_after":"3","fail_next":2}}`); status != 200 {
		t.Fatalf("set fault: %d %s", status, got)
	}
	if status, got := call("POST", "/_sim/faults", `{"model":"*","fault":{"health_down":true}}`); status != 200 {
		t.Fatalf("set fault: %d %s", status, got)
	}
	_, got := call("GET", "/_sim/faults", "")
	var faults map[string]Fault
	if err := json.Unmarshal([]byte(got), &faults); err != nil {
		t.Fatal(err)
	}
	if faults["gpt-4o-mini"] != (Fault{Status: 429, RetryAfter: "3", FailNext: 2}) || !faults["*"].HealthDown {
		t.Errorf("faults = %s", got)
	}

	_, err := h.client.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi"))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Response.Header.Get("Retry-After") != "3" {
		t.Fatalf("err = %v", err)
	}
	_, got = call("GET", "/_sim/faults", "")
	if !strings.Contains(got, `"fail_next":1`) {
		t.Errorf("FailNext countdown not shown: %s", got)
	}

	h.waitCounters(t, "gpt-4o-mini", settled)
	_, got = call("GET", "/_sim/counters?model=gpt-4o-mini", "")
	if got != `{"requests":1,"completed":0,"cancelled":0,"failed":1,"streams":0,"probes":0,"in_flight":0,"images":0}` {
		t.Errorf("counters = %s", got)
	}
	_, got = call("GET", "/_sim/counters", "")
	if !strings.Contains(got, `"gpt-4o-mini":{"requests":1`) {
		t.Errorf("all counters = %s", got)
	}

	if status, _ := call("DELETE", "/_sim/faults?model=*", ""); status != 200 || h.sim.Faults()["*"] != (Fault{}) {
		t.Errorf("delete one: status %d, faults %+v", status, h.sim.Faults())
	}
	if status, _ := call("DELETE", "/_sim/faults", ""); status != 200 || len(h.sim.Faults()) != 0 {
		t.Errorf("delete all: status %d, faults %+v", status, h.sim.Faults())
	}
	if _, err := h.client.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi")); err != nil {
		t.Errorf("after DELETE: %v", err)
	}

	h.sim.SetFault("m", Fault{Status: 500})
	if status, _ := call("POST", "/_sim/reset", ""); status != 200 {
		t.Errorf("reset: %d", status)
	}
	if len(h.sim.Faults()) != 0 || h.sim.Counters(AnyModel) != (Counters{}) {
		t.Errorf("after reset: faults %+v counters %+v", h.sim.Faults(), h.sim.Counters(AnyModel))
	}

	if status, got := call("POST", "/_sim/reply", `{"model":"m","text":"Fixed reply."}`); status != 200 {
		t.Errorf("reply: %d %s", status, got)
	}
	resp, err := h.client.Chat.Completions.New(ctx, chatParams("m", "hi"))
	if err != nil || resp.Choices[0].Message.Content != "Fixed reply." {
		t.Errorf("after /_sim/reply: %v %+v", err, resp)
	}
}

func TestControlAPIRejectsBadCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	for name, body := range map[string]string{
		"typo in a fault": `{"model":"m","fault":{"stall_afer":3}}`,
		"no model":        `{"fault":{"status":500}}`,
		"not JSON":        `status=500`,
	} {
		status, _, got := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/_sim/faults", body))
		if status != 400 {
			t.Errorf("%s: %d %s", name, status, got)
		}
	}
	if len(h.sim.Faults()) != 0 {
		t.Errorf("a bad command set a fault: %+v", h.sim.Faults())
	}
}

func TestHealthAndModels(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	hc := h.srv.Client()
	get := func(path string) (int, string) {
		t.Helper()
		status, _, body := do(t, hc, jsonRequest(t, ctx, "GET", h.srv.URL+path, ""))
		return status, body
	}
	if status, body := get("/health"); status != 200 || body != `{"status":"ok"}` {
		t.Errorf("/health: %d %s", status, body)
	}

	h.sim.SetFault("local", Fault{HealthDown: true})
	h.sim.SetFault("gone", Fault{Status: 404})
	if status, body := get("/health?model=local"); status != 503 || !strings.Contains(body, `"type":"unavailable_error"`) {
		t.Errorf("/health?model=local: %d %s", status, body)
	}
	if status, _ := get("/health?model=other"); status != 200 {
		t.Errorf("/health?model=other: %d", status)
	}
	if status, _ := get("/health"); status != 200 {
		t.Errorf("/health with one model down: %d", status)
	}
	h.sim.SetFault(WhisperModel, Fault{HealthDown: true})
	if status, body := get("/health?model=whisper"); status != 503 || body != `{"status":"loading model"}` {
		t.Errorf("whisper /health: %d %s", status, body)
	}

	page, err := h.client.Models.List(ctx)
	if err != nil {
		t.Fatalf("Models.List: %v", err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy == "" || m.Created == 0 {
			t.Errorf("model %+v", m)
		}
	}
	list := strings.Join(ids, ",")
	if !strings.Contains(list, "gpt-4o-mini") || !strings.Contains(list, "local") || strings.Contains(list, "gone") {
		t.Errorf("models = %s", list)
	}
	if _, err := h.client.Models.Get(ctx, "gone"); err == nil {
		t.Error("Models.Get of a 404 model succeeded")
	}
	if m, err := h.client.Models.Get(ctx, "anything"); err != nil || m.ID != "anything" {
		t.Errorf("Models.Get: %v %+v", err, m)
	}

	h.sim.SetFault(AnyModel, Fault{HealthDown: true})
	if _, err := h.client.Models.List(ctx); err == nil {
		t.Error("/v1/models answered while * is HealthDown")
	}
	if status, _ := get("/health"); status != 503 {
		t.Errorf("/health with * down: %d", status)
	}
	if c := h.sim.Counters(AnyModel); c.Probes != 10 || c.Requests != 0 {
		t.Errorf("counters = %+v, want 10 probes", c)
	}
	if c := h.sim.Counters("local"); c.Probes != 1 {
		t.Errorf("local counters = %+v", c)
	}
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	status, ctype, body := do(t, h.srv.Client(), jsonRequest(t, testContext(t), "POST", h.srv.URL+"/v1/responses", `{}`))
	if status != http.StatusNotFound || ctype != "application/json" || !strings.Contains(body, "Invalid URL (POST /v1/responses)") {
		t.Errorf("got %d %q %s", status, ctype, body)
	}
}

func TestAzureDeploymentRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	h.sim.SetFault("my-deployment", Fault{Status: 400, Code: "content_filter"})
	body := `{"model":"ignored","messages":[{"role":"user","content":"hi"}]}`
	status, _, got := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/openai/deployments/my-deployment/chat/completions?api-version=2024-06-01", body))
	if status != 400 || !strings.Contains(got, `"code":"content_filter"`) || !strings.Contains(got, `"innererror"`) {
		t.Errorf("got %d %s", status, got)
	}
	if c := h.sim.Counters("my-deployment"); c.Requests != 1 {
		t.Errorf("counters = %+v", c)
	}
}
