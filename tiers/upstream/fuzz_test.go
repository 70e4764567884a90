package upstream

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream/upstreamtest"
)

// A fuzz body is short: each control byte of the w* words stands for one
// piece of an OpenAI event stream (sseWords), every other byte is itself.
// A 40-byte input so describes a whole answer, and the fuzzer, which
// minimizes every new input byte by byte (quadratic in its length) before
// it runs the next, stays fast. Bodies are cut at maxFuzzBody bytes before
// they are expanded.
const (
	wData     = "\x01" // data:
	wEnd      = "\x02" // the blank line that ends an event
	wDone     = "\x03" // [DONE]
	wRole     = "\x04" // a chunk with the assistant's role and no text
	wText     = "\x05" // the start of a chunk with text: {"choices":[{"delta":{"content":"
	wTextEnd  = "\x06" // its end: "}}]}
	wFinish   = "\x07" // the start of a chunk with a finish_reason
	wFinEnd   = "\x08" // its end: "}]}
	wUsage    = "\x0e" // a usage chunk
	wError    = "\x0f" // the start of an error event: {"error":{"message":"
	wErrEnd   = "\x10" // its end
	wCtxLen   = "\x11" // a context_length_exceeded error
	wRefusal  = "\x12" // a chunk with a refusal
	wStop     = "\x13" // stop
	wLength   = "\x14" // length
	wFilter   = "\x15" // content_filter
	wKeep     = "\x16" // a comment line (keep-alive)
	wEvent    = "\x17" // event:
	wCRLF     = "\x18" // \r\n
	wCode429  = "\x19" // an error with a numeric code
	wRateBody = "\x1a" // an error body of a rate limit
)

// sseWords maps each word byte to the text it stands for.
var sseWords = map[byte]string{
	wData[0]: "data: ", wEnd[0]: "\n\n", wDone[0]: "[DONE]",
	wRole[0]: `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	wText[0]: `{"choices":[{"index":0,"delta":{"content":"`, wTextEnd[0]: `"}}]}`,
	wFinish[0]: `{"choices":[{"index":0,"delta":{},"finish_reason":"`, wFinEnd[0]: `"}]}`,
	wUsage[0]: `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`,
	wError[0]: `{"error":{"message":"`, wErrEnd[0]: `","type":"server_error","code":null}}`,
	wCtxLen[0]:  `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`,
	wRefusal[0]: `{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."}}]}`,
	wStop[0]:    "stop", wLength[0]: "length", wFilter[0]: "content_filter",
	wKeep[0]: ": keep-alive", wEvent[0]: "event: ", wCRLF[0]: "\r\n",
	wCode429[0]:  `{"error":{"message":"slow down","code":429}}`,
	wRateBody[0]: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
}

// maxFuzzBody is the longest fuzz body, in input bytes; the fuzzer's
// minimizer cuts the ignored rest at once.
const maxFuzzBody = 128

// expandBody returns the response body that fuzz input b stands for.
func expandBody(b []byte) []byte {
	b = b[:min(len(b), maxFuzzBody)]
	out := make([]byte, 0, 4*len(b))
	for _, c := range b {
		if w, ok := sseWords[c]; ok {
			out = append(out, w...)
		} else {
			out = append(out, c)
		}
	}
	return out
}

// sseSeeds are upstream bodies in words: a complete answer, its variants
// and its failures.
func sseSeeds() []string {
	ev := func(s string) string { return wData + s + wEnd }
	text := func(t string) string { return ev(wText + t + wTextEnd) }
	finish := func(f string) string { return ev(wFinish + f + wFinEnd) }
	role, hello, world, done := ev(wRole), text("Hello"), text(" world"), ev(wDone)
	return []string{
		role + hello + world + finish(wStop) + ev(wUsage) + done,
		role + hello + finish(wLength) + done,
		role + hello + world, // cut: no finish
		role + hello + done,  // [DONE] without a finish
		role + finish(wStop) + done,
		role + hello + finish(wFilter) + done,
		role + ev(wRefusal) + done,
		role + hello + ev(wError+"overloaded"+wErrEnd),
		ev(wCtxLen),
		ev(wCode429),
		wKeep + wEnd + strings.ReplaceAll(role+hello+finish(wStop)+done, wEnd, wCRLF+wCRLF),
		wEvent + "thread.message" + wEnd + ev("{}"),
		wData + `{"choices":[{"delta":{"content":"x"}}]}` + "\n" + wData + "more" + wEnd, ev("{not json"), "",
	}
}

// FuzzSourceStream serves arbitrary bytes as a vendor's response (a 200
// event stream, or an error status with that body; see expandBody) to
// Client.Stream with the engine's way of reading it (textHandler), over an
// in-memory transport in a synctest bubble. Properties: no panic; the
// stream ends by itself (the caller's deadline never ends it), at once when
// the body ends and within the first-token or stall timeout when the body
// stops without ending; the tokens passed on are the text; and the result
// is either content with a finish_reason or a classified *Error (a known
// class; an HTTP error keeps its status) — never an empty success.
func FuzzSourceStream(f *testing.F) {
	for _, s := range sseSeeds() {
		f.Add(byte(0), []byte(s), false, false)
	}
	f.Add(byte(0), []byte(sseSeeds()[0]), true, false)
	f.Add(byte(0), []byte(sseSeeds()[2]), true, true)
	f.Add(byte(10), []byte(wRateBody), false, false)
	f.Add(byte(11), []byte(wError+"boom"+wErrEnd), false, false)
	f.Fuzz(func(t *testing.T, status byte, body []byte, hang, continuation bool) {
		up := upstreamtest.Fuzz{Status: upstreamtest.FuzzStatuses[int(status)%len(upstreamtest.FuzzStatuses)], Body: expandBody(body), Hang: hang}
		synctest.Test(t, func(t *testing.T) {
			checkSourceStream(t, up, continuation)
		})
	})
}

const (
	fuzzFirstToken = 1200 * time.Millisecond
	fuzzDeadline   = time.Minute // the caller's deadline, far beyond every watchdog
)

func checkSourceStream(t *testing.T, up upstreamtest.Fuzz, continuation bool) {
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
	case !up.Hang && took != 0:
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
		if up.Status != http.StatusOK {
			t.Fatalf("status %d taken for an answer %q", up.Status, text)
		}
		return
	}
	checkClassified(t, res.Err, up)
}

// knownClasses are the classes of class.go that a failed call may have.
var knownClasses = map[Class]bool{ClassRateLimited: true, ClassServer: true, ClassTimeout: true, ClassContextLength: true,
	ClassUnavailable: true, ClassCut: true, ClassRefused: true, ClassBadRequest: true, ClassCanceled: true}

func checkClassified(t *testing.T, e *Error, up upstreamtest.Fuzz) {
	t.Helper()
	switch {
	case !knownClasses[e.Class]:
		t.Fatalf("error of unknown class %q: %v", e.Class, e)
	case e.Class == ClassCanceled:
		t.Fatalf("canceled, though nobody cancelled: %v", e)
	case up.Status != http.StatusOK && e.Status != up.Status &&
		!(up.Hang && e.Class == ClassTimeout): // an error body that stalls ends at the first-token timeout
		t.Fatalf("status %d classified as %v (status %d)", up.Status, e.Class, e.Status)
	case up.Status == http.StatusOK && !up.Hang && e.Class == ClassTimeout:
		t.Fatalf("timeout on a body that ended: %v", e)
	case e.Error() == "":
		t.Fatal("error without a message")
	}
}

// TestFuzzSeedWords checks that the seeds' words expand to the streams
// they name: the full answer answers, the refusal and the context-length
// error are classified as such.
func TestFuzzSeedWords(t *testing.T) {
	t.Parallel()
	seeds := sseSeeds()
	for _, c := range []struct {
		seed  string
		text  string
		class Class
	}{
		{seed: seeds[0], text: "Hello world"},
		{seed: seeds[6], class: ClassRefused},
		{seed: seeds[8], class: ClassContextLength},
	} {
		synctest.Test(t, func(t *testing.T) {
			cl := New(Endpoint{Name: "fuzz", BaseURL: "http://vendor.invalid/v1", APIKey: "sk-fuzz", Model: "m"},
				&http.Client{Transport: upstreamtest.Fuzz{Status: http.StatusOK, Body: expandBody([]byte(c.seed))}})
			var h textHandler
			res := cl.Stream(t.Context(), Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
				Model: "m", FirstToken: fuzzFirstToken, MaxTokens: 400}, &h)
			var class Class
			if res.Err != nil {
				class = res.Err.Class
			}
			if h.text.String() != c.text || class != c.class {
				t.Errorf("seed %q: text %q, class %q; want %q, %q", expandBody([]byte(c.seed)), h.text.String(), class, c.text, c.class)
			}
		})
	}
}
