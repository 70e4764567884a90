package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

// TestSecretsStayOutOfLogsAndMetrics runs a full session through the real
// server at debug level, with every kind of secret configured: the L1 and
// L2 vendor keys, the gateway's endpoint and client keys, the cloud STT
// key, auth.secret and ops.token. The session has a resume, asks questions
// while the vendors fail (one of them echoing the key it got in its error
// body, as some vendors do), streams audio while whisper is down (so the
// cloud STT answers), resumes, and the gateway serves a request through a
// failing endpoint. Then neither the logs nor /metrics may hold the resume
// text, any key, the session token or the resume token.
func TestSecretsStayOutOfLogsAndMetrics(t *testing.T) {
	t.Parallel()
	secret := func(prefix string) string { return prefix + "-" + hex.EncodeToString(randomBytes(t, 16)) }
	env := map[string]string{
		"KEY_L1A": secret("sk-l1a"), "KEY_L1B": secret("sk-l1b"), "KEY_L2": secret("sk-local"),
		"KEY_GW1": secret("sk-gw1"), "KEY_GW2": secret("sk-gw2"), "KEY_GW_CLIENT": secret("sk-gwclient"),
		"KEY_STT": secret("sk-stt"), "POISE_SECRET": secret("auth"), "OPS_TOKEN": secret("ops"),
	}
	sims := map[string]*keyedSim{}
	for name, key := range map[string]string{"a": "KEY_L1A", "b": "KEY_L1B", "local": "KEY_L2",
		"gw1": "KEY_GW1", "gw2": "KEY_GW2", "stt": "KEY_STT", "whisper": ""} {
		sims[name] = newKeyedSim(t, env[key])
	}
	sims["whisper"].sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: http.StatusInternalServerError})
	cfgPath := filepath.Join(t.TempDir(), "poise.yaml")
	cfg := fmt.Sprintf(`auth: {secret: "${POISE_SECRET}"}
ops: {token: "${OPS_TOKEN}"}
health: {interval_ms: 300}
l1:
  hedge_after_ms: 300
  vendors:
    - {name: vendor-a, base_url: %s/v1, api_key: "${KEY_L1A}", model: model-a}
    - {name: vendor-b, base_url: %s/v1, api_key: "${KEY_L1B}", model: model-b}
l2: {name: local, base_url: %s/v1, api_key: "${KEY_L2}", model: local-model}
asr:
  whisper_urls: [%s]
  cloud: {base_url: %s/v1, api_key: "${KEY_STT}", model: stt-model}
gateway:
  keys: ["${KEY_GW_CLIENT}"]
  chains:
    "*":
      - {name: gw-primary, base_url: %s/v1, api_key: "${KEY_GW1}", model: "{model}"}
      - {name: gw-backup, base_url: %s/v1, api_key: "${KEY_GW2}", model: backup-model}
`, sims["a"].url, sims["b"].url, sims["local"].url, sims["whisper"].url, sims["stt"].url, sims["gw1"].url, sims["gw2"].url)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return env[k] }
	var token strings.Builder
	if err := run(context.Background(), []string{"token", "issue", "-subject", "cand-7", "-ttl", "1h", "-config", cfgPath}, getenv, &token, io.Discard); err != nil {
		t.Fatalf("token issue: %v", err)
	}
	sessionToken := strings.TrimSpace(token.String())
	resumeText := "RESUMECANARY" + hex.EncodeToString(randomBytes(t, 8)) + " Led the ledger rewrite at a payments startup; " +
		strings.Repeat("on call for five years, cut p99 latency by 40%. ", 20) + "ENDCANARY" + hex.EncodeToString(randomBytes(t, 8))

	srv := startCapturing(t, getenv, "-config", cfgPath, "-log-level", "debug")
	resumeToken, sessionID := runSecretSession(t, srv, sims, sessionToken, resumeText)
	runSecretGateway(t, srv.addr, sims, env["KEY_GW_CLIENT"])
	metrics := scrapeWithToken(t, srv.addr, env["OPS_TOKEN"])
	logs := srv.stop(t)

	for name, s := range sims {
		if s.key != "" && s.seen.Load() == 0 {
			t.Errorf("the %s key was never sent: the test did not exercise that backend", name)
		}
	}
	if !strings.Contains(logs, sessionID) || !strings.Contains(logs, `"level":"debug"`) {
		t.Fatalf("the captured logs lack the session id or debug lines; capture broken? %d bytes", len(logs))
	}
	if !strings.Contains(metrics, "poise_backend_requests_total") {
		t.Fatalf("the /metrics scrape looks empty: %.300s", metrics)
	}
	secrets := map[string]string{"resume text (start)": resumeText[:28], "resume text (end)": resumeText[len(resumeText)-25:],
		"session token": sessionToken, "session token MAC": sessionToken[strings.LastIndexByte(sessionToken, '.')+1:],
		"resume token": resumeToken}
	for k, v := range env {
		secrets[k] = v
		secrets[k+" (random part)"] = v[strings.LastIndexByte(v, '-')+1:]
	}
	for what, s := range secrets {
		for where, text := range map[string]string{"logs": logs, "/metrics": metrics} {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("%s appears in %s: …%s…", what, where, text[max(0, i-200):min(len(text), i+len(s)+50)])
			}
		}
	}
}

// runSecretSession runs the candidate's session: hello with the token and
// the resume, questions while vendors fail, audio while whisper is down, a
// resume. It returns the resume token and the session id.
func runSecretSession(t *testing.T, srv *capturedServer, sims map[string]*keyedSim, sessionToken, resumeText string) (string, string) {
	t.Helper()
	addr := srv.addr
	profile := map[string]any{"lang": "en", "seniority": "senior", "role": "Backend engineer", "resume": resumeText}
	c := dialWS(t, addr)
	c.send(map[string]any{"type": "hello", "v": 1, "token": sessionToken, "profile": profile})
	w, _ := c.read()
	if w.Type != "welcome" || w.Token == "" {
		t.Fatalf("got %+v, want welcome", w)
	}
	answered := func() {
		t.Helper()
		c.send(map[string]any{"type": "question", "text": "Tell me about a time you disagreed with your manager."})
		c.readUntil(func(m wsMsg) bool { return m.Type == "answer_end" || m.Type == "coach" })
	}
	answered()                 // at L1
	sims["a"].echo.Store(true) // vendor-a now refuses with the key in its error body
	answered()
	sims["b"].sim.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusInternalServerError})
	answered()
	sims["local"].sim.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	answered()
	pcm := speech(t) // 11.7 s; both streams together stay within the inbound audio burst
	streamAudio(t, c, pcm[:len(pcm)/2])
	for { // until a final caption: the cloud STT answered
		m, raw := c.read()
		var cap struct{ Final bool }
		if json.Unmarshal(raw, &cap) == nil && m.Type == "caption" && cap.Final {
			break
		}
	}
	sims["stt"].echo.Store(true) // the cloud STT now refuses with the key in its error body
	streamAudio(t, c, pcm[len(pcm)/2:len(pcm)*3/4])
	srv.waitLog(t, `"backend":"cloud"`)

	// A resume on a new connection, and a resume with a wrong token.
	c.ws.Close(websocket.StatusNormalClosure, "")
	bad := dialWS(t, addr)
	bad.send(map[string]any{"type": "hello", "v": 1, "token": sessionToken, "profile": profile,
		"resume": map[string]any{"session_id": w.SessionID, "token": "wrong-" + w.Token[:8], "last_seq": 0}})
	if m := readAny(t, bad); m.Type != "error" {
		t.Fatalf("resume with a wrong token: %+v, want an error", m)
	}
	bad.ws.CloseNow()
	r := dialWS(t, addr)
	r.send(map[string]any{"type": "hello", "v": 1, "token": sessionToken, "profile": profile,
		"resume": map[string]any{"session_id": w.SessionID, "token": w.Token, "last_seq": c.last}})
	if m, _ := r.read(); m.Type != "welcome" || !m.Resumed {
		t.Fatalf("resume: %+v", m)
	}
	r.last = c.last
	r.send(map[string]any{"type": "question", "text": "Why do you want this job?"})
	r.readUntil(func(m wsMsg) bool { return m.Type == "answer_end" || m.Type == "coach" })
	r.ws.Close(websocket.StatusNormalClosure, "")
	return w.Token, w.SessionID
}

// speech is the espeak recording of three questions.
func speech(t *testing.T) []int16 {
	t.Helper()
	raw, err := os.ReadFile("../../asr/testdata/en_questions.wav")
	if err != nil {
		t.Fatal(err)
	}
	pcm, _, err := asr.DecodeWAV(raw)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// streamAudio sends pcm between audio_start and audio_stop, in the page's
// 100 ms frames, as fast as the connection takes them (within the
// inbound burst).
func streamAudio(t *testing.T, c *wsClient, pcm []int16) {
	t.Helper()
	c.send(map[string]any{"type": "audio_start", "sample_rate": 16000, "encoding": "pcm_s16le", "source": "mic"})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	const frame = 1600 // samples
	buf := make([]byte, 2*frame)
	for i := 0; i+frame <= len(pcm); i += frame {
		for j, s := range pcm[i : i+frame] {
			buf[2*j], buf[2*j+1] = byte(s), byte(s>>8)
		}
		if err := c.ws.Write(ctx, websocket.MessageBinary, buf); err != nil {
			t.Fatal(err)
		}
	}
	c.send(map[string]any{"type": "audio_stop"})
}

// readAny reads one message, error messages included.
func readAny(t *testing.T, c *wsClient) wsMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m wsMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runSecretGateway sends chat requests through the gateway: one with a
// wrong client key, one while the primary endpoint refuses with its key
// echoed, served by the backup.
func runSecretGateway(t *testing.T, addr string, sims map[string]*keyedSim, clientKey string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	wrong := gatewayClient(addr, "sk-wrong-client-key")
	if _, err := wrong.Chat.Completions.New(ctx, gatewayParams("gpt-4o-mini")); err == nil {
		t.Fatal("the gateway served a wrong client key")
	}
	sims["gw1"].echo.Store(true)
	client := gatewayClient(addr, clientKey)
	st := client.Chat.Completions.NewStreaming(ctx, gatewayParams("gpt-4o-mini"))
	for st.Next() {
	}
	if err := st.Err(); err != nil {
		t.Fatalf("gateway: %v", err)
	}
}

func scrapeWithToken(t *testing.T, addr, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v %v", resp, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// keyedSim is a vendorsim behind a check of its API key. With echo set it
// refuses every request with 401 and the key it got in the message, as
// OpenAI-compatible servers may.
type keyedSim struct {
	sim  *vendorsim.Server
	url  string
	key  string       // the bearer key it expects; empty for none (whisper)
	seen atomic.Int64 // requests that carried key
	echo atomic.Bool
}

func newKeyedSim(t *testing.T, key string) *keyedSim {
	t.Helper()
	k := &keyedSim{sim: vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond}), key: key}
	srv := httptest.NewServer(k)
	t.Cleanup(func() { k.sim.Close(); srv.Close() })
	k.url = srv.URL
	return k
}

func (k *keyedSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if k.key != "" && got == k.key {
		k.seen.Add(1)
	}
	if k.echo.Load() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key in your account settings.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, got)
		return
	}
	k.sim.ServeHTTP(w, r)
}

// capturedServer is `poise serve` run in-process with every log line kept.
type capturedServer struct {
	addr   string
	cancel context.CancelFunc
	done   chan error    // run's result
	read   chan struct{} // closed when every log line is read

	mu      sync.Mutex
	logs    strings.Builder // guarded by mu
	changed chan struct{}   // closed and replaced when a line is added; guarded by mu
}

func startCapturing(t *testing.T, getenv func(string) string, args ...string) *capturedServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &capturedServer{cancel: cancel, done: make(chan error, 1), read: make(chan struct{}), changed: make(chan struct{})}
	pr, pw := io.Pipe()
	go func() {
		s.done <- run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), getenv, pw, io.Discard)
		pw.Close()
	}()
	first := make(chan string, 1)
	go func() {
		defer close(s.read)
		br := bufio.NewReader(pr)
		for n := 0; ; n++ {
			line, err := br.ReadString('\n')
			s.mu.Lock()
			s.logs.WriteString(line)
			close(s.changed)
			s.changed = make(chan struct{})
			s.mu.Unlock()
			if n == 0 {
				first <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { s.stop(t) })
	var l struct{ Addr string }
	select {
	case line := <-first:
		if json.Unmarshal([]byte(line), &l) != nil || l.Addr == "" {
			t.Fatalf("first log line %q gives no address", line)
		}
	case <-time.After(waitLimit):
		t.Fatal("no log line")
	}
	s.addr = l.Addr
	waitServing(t, s.addr) // it listens before it loads its templates
	return s
}

// stop shuts the server down, waits for it and returns every log line it
// wrote. Safe to call twice.
func (s *capturedServer) stop(t *testing.T) string {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
		s.done <- nil // for a second call
	case <-time.After(waitLimit):
		t.Error("serve did not stop")
	}
	select {
	case <-s.read:
	case <-time.After(waitLimit):
		t.Error("log reader did not finish")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// waitLog waits until a log line holds substr.
func (s *capturedServer) waitLog(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		found, changed := strings.Contains(s.logs.String(), substr), s.changed
		s.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no log line with %s", substr)
		}
	}
}
