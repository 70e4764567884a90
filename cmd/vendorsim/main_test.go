package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testTimeout = 10 * time.Second

// started is a run in the background and the address it printed.
type started struct {
	url     string
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

func start(t *testing.T, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	s := &started{cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-token-delay", "1ms", "-log-level", "warn"}, args...), pw)
		_ = pw.CloseWithError(io.EOF)
		s.done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	_ = pr.Close()
	if err != nil {
		cancel()
		t.Fatalf("first line: %q, %v (run: %v)", line, err, <-s.done)
	}
	url, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "vendorsim listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, "https://127.0.0.1:") {
		cancel()
		t.Fatalf("first line = %q", line)
	}
	s.url = url
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop cancels run and waits for it to return nil.
func (s *started) stop(t *testing.T) {
	t.Helper()
	if s.stopped {
		return
	}
	s.stopped = true
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("run did not return after cancel")
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunServesAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "transcripts.txt")
	if err := os.WriteFile(path, []byte("First question?\n\n  Second question?  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, "-transcripts", path)
	if status, body := get(t, s.url+"/health"); status != 200 || body != `{"status":"ok"}` {
		t.Errorf("/health: %d %s", status, body)
	}
	var texts []string
	for range 3 {
		texts = append(texts, transcribe(t, s.url))
	}
	if want := []string{" First question?\n", " Second question?\n", " First question?\n"}; strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("transcripts = %q, want %q", texts, want)
	}

	// A fault set over HTTP, then a stalled stream: shutdown must not wait for it.
	resp, err := http.Post(s.url+"/_sim/faults", "application/json", strings.NewReader(`{"model":"m","fault":{"stall_after":1}}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("set fault: %v %v", err, resp)
	}
	resp.Body.Close()
	resp, err = http.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatalf("first event: %v", err)
	}
	s.stop(t)
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stalled stream ended cleanly at shutdown; want a broken stream")
	}
	http.DefaultClient.CloseIdleConnections()
}

func transcribe(t *testing.T, url string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "a.wav")
	_, _ = fw.Write(silentWAV())
	_ = mw.WriteField("response_format", "json")
	_ = mw.Close()
	resp, err := http.Post(url+"/inference", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ Text string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v.Text
}

// silentWAV is 0.1s of 16 kHz mono 16-bit silence.
func silentWAV() []byte {
	const samples = 1600
	h := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data")
	size := 2 * samples
	h = append(h, byte(size), byte(size>>8), 0, 0)
	return append(h, make([]byte, size)...)
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-token-delay", "soon"},
		{"-transcripts", filepath.Join(t.TempDir(), "missing.txt")},
		{"-addr", "256.0.0.1:1"},
		{"-log-level", "loud"},
		{"-tls-cert", "cert.pem"},
		{"-tls-key", "key.pem"},
		{"-tls-cert", filepath.Join(t.TempDir(), "missing.pem"), "-tls-key", filepath.Join(t.TempDir(), "missing.pem")},
	} {
		if err := run(t.Context(), args, io.Discard); err == nil {
			t.Errorf("run(%q) = nil", args)
		}
	}
}

// protoRecorder is a RoundTripper that keeps the protocol of the last
// response.
type protoRecorder struct {
	rt    http.RoundTripper
	proto atomic.Value
}

func (p *protoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(r)
	if err == nil {
		p.proto.Store(resp.Proto)
	}
	return resp, err
}

// TestRunServesTLS: with -tls-cert and -tls-key the simulator serves
// HTTPS, and HTTP/2 to a client that offers it, as hosted vendors do; the
// real openai-go client streams a completion from it.
func TestRunServesTLS(t *testing.T) {
	certPath, keyPath, err := vendorsim.WriteSelfSigned(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key.pem: %v, %v; want mode 0600", fi, err)
	}
	s := start(t, "-tls-cert", certPath, "-tls-key", keyPath)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("url = %q, want https", s.url)
	}
	pemBytes, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("cert.pem holds no certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	rec := &protoRecorder{rt: tr}
	client := openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey("test"),
		option.WithHTTPClient(&http.Client{Transport: rec}))
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is a mutex?")},
	})
	var text strings.Builder
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if text.Len() == 0 {
		t.Error("the stream had no content")
	}
	if p, _ := rec.proto.Load().(string); p != "HTTP/2.0" {
		t.Errorf("protocol %q, want HTTP/2.0", p)
	}
}
