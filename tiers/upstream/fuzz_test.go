package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
)

// fuzzStatuses are the upstream statuses a fuzz input picks from; the
// first is a streaming answer, the others are error responses.
var fuzzStatuses = []int{200, 400, 401, 402, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504}

// fuzzUpstream is an http.RoundTripper that answers every request with one
// fuzz response: body as a text/event-stream (status 200) or as an error
// response's JSON. With hang the body, once read, blocks until the request
// is cancelled, as a server that stops sending; else it ends.
type fuzzUpstream struct {
	status int
	body   []byte
	hang   bool
}

func (u fuzzUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{"Content-Type": {"text/event-stream"}}
	if u.status != http.StatusOK {
		h.Set("Content-Type", "application/json")
	}
	var body io.ReadCloser = io.NopCloser(bytes.NewReader(u.body))
	if u.hang {
		body = &hangingBody{r: bytes.NewReader(u.body), ctx: r.Context()}
	}
	return &http.Response{StatusCode: u.status, Status: http.StatusText(u.status), Header: h, Body: body,
		Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// hangingBody returns its bytes, then blocks until ctx ends.
type hangingBody struct {
	r   *bytes.Reader
	ctx context.Context
}

func (b *hangingBody) Read(p []byte) (int, error) {
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *hangingBody) Close() error { return nil }

// sseSeeds are upstream bodies: a complete answer, its variants and its
// failures.
func sseSeeds() []string {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	usage := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}` + "\n\n"
	done := "data: [DONE]\n\n"
	role, hello, world := chunk(`{"role":"assistant","content":""}`, ""), chunk(`{"content":"Hello"}`, ""), chunk(`{"content":" world"}`, "")
	return []string{
		role + hello + world + chunk(`{}`, "stop") + usage + done,
		role + hello + chunk(`{}`, "length") + done,
		role + hello + world, // cut: no finish
		role + hello + done,  // [DONE] without a finish
		role + chunk(`{}`, "stop") + done,
		role + hello + chunk(`{}`, "content_filter") + done,
		role + chunk(`{"refusal":"I can't help with that."}`, "") + done,
		role + hello + `data: {"error":{"message":"overloaded","type":"server_error","code":null}}` + "\n\n",
		`data: {"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}` + "\n\n",
		`data: {"error":{"message":"slow down","code":429}}` + "\n\n",
		": keep-alive\n\n" + strings.ReplaceAll(role+hello+chunk(`{}`, "stop")+done, "\n", "\r\n"),
		"event: thread.message\ndata: {}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\ndata: more\n\n", "data: {not json\n\n", "",
	}
}

// FuzzSourceStream serves arbitrary bytes as a vendor's response (a 200
// event stream, or an error status with that body) to Client.Stream with
// the engine's way of reading it (textHandler), in a
// synctest bubble. Properties: no panic; the stream ends by itself (the
// caller's deadline never ends it), at once when the body ends and within
// the first-token or stall timeout when the body stops without ending; the
// tokens passed on are the text; and the result is either content with a
// finish_reason or a classified *Error (a known class; an HTTP error keeps
// its status) — never an empty success.
func FuzzSourceStream(f *testing.F) {
	for _, s := range sseSeeds() {
		f.Add(byte(0), []byte(s), false, false)
	}
	f.Add(byte(0), []byte(sseSeeds()[0]), true, false)
	f.Add(byte(0), []byte(sseSeeds()[2]), true, true)
	f.Add(byte(10), []byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), false, false)
	f.Add(byte(11), []byte(`{"error":{"message":"boom","type":"server_error"}}`), false, false)
	f.Fuzz(func(t *testing.T, status byte, body []byte, hang, continuation bool) {
		up := fuzzUpstream{status: fuzzStatuses[int(status)%len(fuzzStatuses)], body: body, hang: hang}
		synctest.Test(t, func(t *testing.T) {
			checkSourceStream(t, up, continuation)
		})
	})
}

const (
	fuzzFirstToken = 1200 * time.Millisecond
	fuzzDeadline   = time.Minute // the caller's deadline, far beyond every watchdog
)

func checkSourceStream(t *testing.T, up fuzzUpstream, continuation bool) {
	c := New(Endpoint{Name: "fuzz", BaseURL: "http://vendor.invalid/v1", APIKey: "sk-fuzz", Model: "m"},
		&http.Client{Transport: up})
	call := Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Why this job?")},
		Model: "m", FirstToken: fuzzFirstToken, MaxTokens: 400}
	if continuation {
		call.Prefill = "So far"
	}
	ctx, cancel := context.WithTimeout(t.Context(), fuzzDeadline)
	defer cancel()
	var h textHandler
	start := time.Now()
	res := c.Stream(ctx, call, &h)
	took := time.Since(start)
	text := h.text.String()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the caller's deadline ended the stream (%v): %+v", took, res)
	case !up.hang && took != 0:
		t.Fatalf("a body that ended took %v to end the stream: %+v", took, res)
	case took > fuzzFirstToken+c.stall:
		t.Fatalf("a stalled body took %v to end the stream: %+v", took, res)
	case res.Started != (text != ""):
		t.Fatalf("started %v with text %q", res.Started, text)
	}
	if res.Err == nil {
		if res.Finish == "" || res.Finish == FinishFilter || (!continuation && text == "") {
			t.Fatalf("success without an answer: finish %q, text %q", res.Finish, text)
		}
		if up.status != http.StatusOK {
			t.Fatalf("status %d taken for an answer %q", up.status, text)
		}
		return
	}
	checkClassified(t, res.Err, up)
}

// knownClasses are the classes of class.go that a failed call may have.
var knownClasses = map[Class]bool{ClassRateLimited: true, ClassServer: true, ClassTimeout: true, ClassContextLength: true,
	ClassUnavailable: true, ClassCut: true, ClassRefused: true, ClassBadRequest: true, ClassCanceled: true}

func checkClassified(t *testing.T, e *Error, up fuzzUpstream) {
	t.Helper()
	switch {
	case !knownClasses[e.Class]:
		t.Fatalf("error of unknown class %q: %v", e.Class, e)
	case e.Class == ClassCanceled:
		t.Fatalf("canceled, though nobody cancelled: %v", e)
	case up.status != http.StatusOK && e.Status != up.status &&
		!(up.hang && e.Class == ClassTimeout): // an error body that stalls ends at the first-token timeout
		t.Fatalf("status %d classified as %v (status %d)", up.status, e.Class, e.Status)
	case up.status == http.StatusOK && !up.hang && e.Class == ClassTimeout:
		t.Fatalf("timeout on a body that ended: %v", e)
	case e.Error() == "":
		t.Fatal("error without a message")
	}
}
