package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait in these tests; nothing should come close.
const testTimeout = 10 * time.Second

// fastOptions keep real-time tests quick: 1ms between chunks.
var fastOptions = Options{TokenDelay: time.Millisecond}

// harness is a Server behind a real HTTP server and a real openai-go client.
type harness struct {
	sim    *Server
	srv    *httptest.Server
	client openai.Client
}

func newHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	sim := New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() {
		sim.Close() // release held requests so that srv.Close does not wait for them
		srv.Close()
	})
	client := openai.NewClient(
		option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(srv.Client()),
	)
	return &harness{sim: sim, srv: srv, client: client}
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func chatParams(model, question string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a coach."), openai.UserMessage(question)},
	}
}

// waitCounters waits until cond holds for model's counters and fails the
// test if it never does.
func (h *harness) waitCounters(t *testing.T, model string, cond func(Counters) bool) Counters {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	c, err := h.sim.WaitFor(ctx, model, cond)
	if err != nil {
		t.Fatalf("counters of %q never matched: last %+v", model, c)
	}
	return c
}

// settled reports that every request has ended.
func settled(c Counters) bool {
	return c.InFlight == 0 && c.Requests == c.Completed+c.Cancelled+c.Failed
}

// streamResult is what a client saw of one stream.
type streamResult struct {
	acc     openai.ChatCompletionAccumulator
	content string
	chunks  int // chunks with choices
	err     error
	allOK   bool // every chunk was accepted by the accumulator
}

func readStream(ctx context.Context, h *harness, p openai.ChatCompletionNewParams) streamResult {
	stream := h.client.Chat.Completions.NewStreaming(ctx, p)
	defer stream.Close()
	res := streamResult{allOK: true}
	for stream.Next() {
		ch := stream.Current()
		if !res.acc.AddChunk(ch) {
			res.allOK = false
		}
		if len(ch.Choices) > 0 {
			res.chunks++
			res.content += ch.Choices[0].Delta.Content
		}
	}
	res.err = stream.Err()
	return res
}

// makeWAV returns a WAV file of the given shape filled with a quiet tone.
func makeWAV(seconds float64, rate, channels, bits int) []byte {
	frames := int(seconds * float64(rate))
	blockAlign := channels * bits / 8
	data := make([]byte, frames*blockAlign)
	for i := range frames * channels {
		if bits == 16 {
			binary.LittleEndian.PutUint16(data[2*i:], uint16(int16((i%64)*100-3200)))
		}
	}
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+len(data)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{
		uint32(16), uint16(1), uint16(channels), uint32(rate),
		uint32(rate * blockAlign), uint16(blockAlign), uint16(bits),
	} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// inferenceRequest builds a whisper.cpp POST /inference request.
func inferenceRequest(t *testing.T, ctx context.Context, url string, wav []byte, fields map[string]string) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if wav != nil {
		fw, err := mw.CreateFormFile("file", "clip.wav")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(wav)
	}
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/inference", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

// do sends req with client and returns the status, content type and body.
func do(t *testing.T, client *http.Client, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", req.URL.Path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// jsonRequest builds a request with a JSON body.
func jsonRequest(t *testing.T, ctx context.Context, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}
