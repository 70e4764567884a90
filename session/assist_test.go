package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/session/doctext/doctexttest"
	"github.com/poise-dev/poise/tiers"
	"github.com/rs/zerolog"
)

// promptLog keeps the chat completion requests a simulated backend
// received, as they came over the wire.
type promptLog struct {
	mu   sync.Mutex
	reqs []string // request bodies, oldest first; guarded by mu
}

func (p *promptLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			p.mu.Lock()
			p.reqs = append(p.reqs, string(body))
			p.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// last returns the messages' text of the newest request whose user
// message holds marker.
func (p *promptLog) last(t *testing.T, marker string) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.reqs) - 1; i >= 0; i-- {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal([]byte(p.reqs[i]), &req) != nil {
			continue
		}
		var b strings.Builder
		for _, m := range req.Messages {
			b.WriteString(m.Role + ": " + m.Content + "\n")
		}
		if strings.Contains(b.String(), marker) {
			return b.String()
		}
	}
	t.Fatalf("no backend received a prompt with %q (%d requests)", marker, len(p.reqs))
	return ""
}

// sendFile sends a profile file in parts of 40 KiB, as the page does.
func (c *client) sendFile(kind, name string, data []byte) {
	c.t.Helper()
	const part = 40 << 10
	size := len(data)
	for i := 0; ; i++ {
		n := min(part, len(data))
		c.send(map[string]any{"type": "profile_file", "kind": kind, "name": name, "part": i, "last": n == len(data), "data": data[:n], "size": size})
		data = data[n:]
		if len(data) == 0 {
			return
		}
	}
}

var resumeLines = []string{
	"Jane Doe",
	"Senior Backend Engineer, Acme Payments (2019 - Present)",
	"7 years of experience building payment systems in Go.",
	"Project: Ledger Rewrite (moved settlement to event sourcing)",
	"Likes hiking.",
}

const jobText = "Staff Engineer at Globex\nAbout us\nWe move parcels.\nRequirements\n- Experience running Kafka at scale\n"

// TestResumeFilesReachThePrompt: a PDF and a DOCX résumé made here are
// read to text, their facts come back to the page, and both the text and
// the facts are in the prompt the simulated vendor receives. A job file
// adds the job's requirements, first.
func TestResumeFilesReachThePrompt(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	c.sendFile("job", "job.txt", []byte(jobText))
	if m := c.readType("profile_file"); m.str("kind") != "job" || !strings.Contains(m.str("text"), "Kafka at scale") {
		t.Fatalf("job file: %v", m)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"resume.pdf", doctexttest.PDF(resumeLines)}, {"resume.docx", doctexttest.DOCX(resumeLines)}} {
		t.Run(f.name, func(t *testing.T) {
			c.sendFile("resume", f.name, f.data)
			m := c.readType("profile_file")
			for _, l := range resumeLines {
				if !strings.Contains(m.str("text"), l) {
					t.Errorf("text of %s lacks %q: %q", f.name, l, m.str("text"))
				}
			}
			facts, _ := m["facts"].(map[string]any)
			if facts["company"] != "Acme Payments" || facts["years"] != 7.0 || facts["target_company"] != "Globex" {
				t.Errorf("facts %v", facts)
			}
			q := "How did you scale the ledger? (" + f.name + ")"
			if first, text, end := c.answer(q); first.str("level") != "L1" || text == "" || end != endDone {
				t.Fatalf("answer %v %q %s", first, text, end)
			}
			prompt := st.prompts.last(t, q)
			for _, want := range []string{"Senior Backend Engineer, Acme Payments", "current company: Acme Payments",
				"years of experience: 7", "projects: Ledger Rewrite", "Experience running Kafka at scale"} {
				if !strings.Contains(prompt, want) {
					t.Errorf("the prompt lacks %q:\n%s", want, prompt)
				}
			}
			if i, j := strings.Index(prompt, "Kafka at scale"), strings.Index(prompt, "We move parcels"); i > j {
				t.Errorf("the job's requirements do not come first:\n%s", prompt)
			}
		})
	}
}

// TestUnreadableFile: a damaged PDF, a file of another format and one
// over the cap each get a clear error, and the session goes on.
func TestUnreadableFile(t *testing.T) {
	ts := newTestServer(t, Config{Health: newFakeHealth(tiers.L4)})
	c, _ := ts.start(t, "en")
	for _, f := range []struct {
		name string
		data []byte
		code string
		says string
		why  string // the reason the page words in its language
	}{
		{"resume.pdf", []byte("%PDF-1.4 this is not really a PDF"), codeBadFile, "could not read resume.pdf: pdf: the file is damaged", "damaged"},
		{"photo.png", []byte("\x89PNG...."), codeBadFile, "only PDF, DOCX, TXT and Markdown", "format"},
		{"scan.pdf", doctexttest.PDF(nil), codeBadFile, "no readable text", "no_text"},
	} {
		c.sendFile("resume", f.name, f.data)
		m := c.readType("error")
		if m.str("code") != f.code || !strings.Contains(m.str("message"), f.says) || m.str("reason") != f.why {
			t.Errorf("%s: error %v, want %s saying %q with reason %q", f.name, m, f.code, f.says, f.why)
		}
	}
	// A file over the cap is refused on its first part, from its size.
	c.send(map[string]any{"type": "profile_file", "kind": "resume", "name": "huge.pdf", "part": 0, "size": maxFileBytes + 1, "data": []byte("%PDF-")})
	if m := c.read(); m.str("code") != codeTooLarge || !strings.Contains(m.str("message"), "1 MiB") {
		t.Errorf("huge file: %v, want too_large", m)
	}
	c.send(map[string]any{"type": "question", "text": "Why this role?"})
	if m := c.readType("coach"); m.str("kind") != "question" {
		t.Fatalf("after the bad files: %v", m)
	}
}

// TestFactsFillTemplatePlaceholders: at L3 the template's placeholders
// take the résumé's facts.
func TestFactsFillTemplatePlaceholders(t *testing.T) {
	st := newL3Stack(t)
	c, _ := st.start(t, "en")
	c.sendFile("resume", "resume.docx", doctexttest.DOCX(resumeLines))
	c.readType("profile_file")
	first, text, _ := c.answer("So, tell me a bit about yourself.")
	if first.str("level") != "L3" {
		t.Fatalf("answer %v, want L3", first)
	}
	for _, want := range []string{"Jane Doe", "Senior Backend Engineer", "7 years", "Acme Payments"} {
		if !strings.Contains(text, want) {
			t.Errorf("the template answer lacks the fact %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[company]") || strings.Contains(text, "[name]") {
		t.Errorf("a known placeholder stayed:\n%s", text)
	}
}

// newL3Stack is a hub whose engine has only the real template bank, at L3.
func newL3Stack(t *testing.T) *testServer {
	t.Helper()
	store, err := bankStore()
	if err != nil {
		t.Fatal(err)
	}
	engine := tiers.NewEngine(tiers.Config{SLAms: 1500}, nil, &switchableTemplates{store: store}, zerolog.Nop(), nil)
	t.Cleanup(engine.Close)
	return newTestServer(t, Config{Answerer: engine, Health: newFakeHealth(tiers.L3)})
}

// controlAnswer sends an answer control and returns its answer_start and
// text.
func (c *client) control(typ string) (first msg, text string) {
	c.t.Helper()
	c.send(map[string]any{"type": typ})
	for {
		m := c.read()
		switch m.str("type") {
		case "answer_start":
			first = m
		case "answer_delta":
			text += m.str("text")
		case "answer_end":
			return first, text
		case "coach", "error":
			return m, ""
		}
	}
}

// TestAnswerControls: regenerate, shorter and deeper rework the current
// answer: at L1 the prompt says so and quotes it; at L3 shorter is the
// template's outline and deeper the full template. Each names the
// question it reworks.
func TestAnswerControls(t *testing.T) {
	t.Run("L1", func(t *testing.T) {
		st := newStack(t, stackOptions{})
		c, _ := st.start(t, "en")
		first, answer, _ := c.answer(bankQuestion)
		orig := first.str("id")
		for _, tc := range []struct{ typ, says string }{
			{typeShorter, "shorter version"}, {typeDeeper, "go deeper"}, {typeRegenerate, "different answer"},
		} {
			m, text := c.control(tc.typ)
			if m.str("type") != "answer_start" || m.str("style") != tc.typ || m.str("of") != orig || m.str("level") != "L1" || text == "" {
				t.Fatalf("%s: %v %q", tc.typ, m, text)
			}
			prompt := st.prompts.last(t, bankQuestion)
			if !strings.Contains(prompt, tc.says) || !strings.Contains(prompt, answer[:40]) {
				t.Errorf("%s: the prompt lacks the control or the answer it reworks:\n%s", tc.typ, prompt)
			}
			answer = text
		}
	})
	t.Run("L3", func(t *testing.T) {
		c, _ := newL3Stack(t).start(t, "en")
		_, full, _ := c.answer(bankQuestion)
		m, short := c.control(typeShorter)
		if m.str("level") != "L3" || !strings.HasPrefix(short, "• ") || len(short) >= len(full) {
			t.Fatalf("shorter at L3: %v %q, want the outline", m, short)
		}
		if m, deep := c.control(typeDeeper); m.str("level") != "L3" || deep != full {
			t.Fatalf("deeper at L3: %v %q, want the full template %q", m, deep, full)
		}
	})
	t.Run("nothing to rework", func(t *testing.T) {
		c, _ := newL3Stack(t).start(t, "en")
		for _, typ := range []string{typeShorter, typeAnswerNow, typeReview} {
			if m, _ := c.control(typ); m.str("code") != codeNoQuestion {
				t.Errorf("%s first: %v, want no_question", typ, m)
			}
		}
	})
}

// TestReview: with L1 up the review streams a summary whose prompt holds
// every question and answer; at L3 it is refused and the session goes on.
func TestReview(t *testing.T) {
	st := newStack(t, stackOptions{})
	c, _ := st.start(t, "en")
	qs := []string{bankQuestion, "Why do you want to leave your job?"}
	for _, q := range qs {
		c.answer(q)
	}
	m, text := c.control(typeReview)
	if m.str("style") != "review" || m.str("question") != "Interview review" || text == "" {
		t.Fatalf("review %v %q", m, text)
	}
	prompt := st.prompts.last(t, "Interview record")
	for _, q := range qs {
		if !strings.Contains(prompt, q) {
			t.Errorf("the review prompt lacks %q:\n%s", q, prompt)
		}
	}
	c3, _ := newL3Stack(t).start(t, "en")
	c3.answer(bankQuestion)
	if m, _ := c3.control(typeReview); m.str("code") != codeNoReview {
		t.Fatalf("review at L3: %v, want review_unavailable", m)
	}
}

// Two speakers: the tab's frames carry the interviewer's question, the
// microphone's the candidate's statement; the simulated whisper tells them
// apart by the low bit of their samples (set on the tab, clear on the mic).
const (
	tabSays = "Tell me about a time you handled a conflict at work"
	micSays = "We moved the cache to Redis last year."
)

func transcribeByLowBit(wav []byte) string {
	pcm, _, err := asr.DecodeWAV(wav)
	if err != nil || len(pcm) == 0 {
		return ""
	}
	odd := 0
	for _, s := range pcm {
		odd += int(s & 1)
	}
	if odd*2 > len(pcm) {
		return tabSays
	}
	return micSays
}

// TestTwoSpeakers streams a tab and a microphone at once, in tagged frames:
// captions name both speakers, only the tab's question is answered, and
// the prompt of a typed follow-up labels who said what.
func TestTwoSpeakers(t *testing.T) { synctest.Test(t, twoSpeakers) }

func twoSpeakers(t *testing.T) {
	n := vendorsim.NewMemNet()
	sim := vendorsim.New(vendorsim.Options{Transcribe: transcribeByLowBit, InferenceDelay: 30 * time.Millisecond})
	t.Cleanup(sim.Close)
	n.Serve("whisper:80", sim)
	cfg := asr.Config{WhisperURLs: []string{"http://whisper:80"}, PartialEveryMs: 150, RetryMs: 100, HTTPClient: n.Client()}
	pool := asr.NewPool(cfg, zerolog.Nop(), nil)
	t.Cleanup(pool.Close)
	answerer := &recordingAnswerer{}
	ms := newMemServerOn(t, n, Config{Health: newFakeHealth(tiers.L1), ASR: pool, ASRConfig: cfg, Answerer: answerer})
	c, _ := ms.start(t)
	errc := make(chan error, 1)
	go func() { errc <- c.streamTwo("../asr/testdata/en_questions.wav") }()
	speakers := map[string]int{}
	var answered []string
	for speakers[speakerInterviewer] < 3 || speakers[speakerCandidate] < 3 {
		m := c.read()
		switch m.str("type") {
		case "error":
			t.Fatalf("unexpected %v", m)
		case "caption":
			if m["final"] != true {
				continue
			}
			want := map[string]string{"tab": tabSays, "mic": micSays}[m.str("stream")]
			wantSpeaker := map[string]string{"tab": speakerInterviewer, "mic": speakerCandidate}[m.str("stream")]
			if m.str("text") != want || m.str("speaker") != wantSpeaker {
				t.Fatalf("caption %v: want %q by %s", m, want, wantSpeaker)
			}
			speakers[m.str("speaker")]++
		case "answer_start":
			answered = append(answered, m.str("question"))
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for _, q := range answered {
		if q != tabSays {
			t.Errorf("answered %q: only the interviewer's questions are", q)
		}
	}
	if len(answered) == 0 {
		t.Error("the interviewer's question was not answered")
	}
	c.send(map[string]any{"type": "question", "text": "Why that cache?"})
	c.readType("answer_end")
	synctest.Wait()
	tr := answerer.last().Transcript
	if !strings.Contains(tr, "Interviewer: "+tabSays) || !strings.Contains(tr, "Candidate (you): "+micSays) {
		t.Errorf("the prompt's transcript does not label the speakers:\n%s", tr)
	}
}

// streamTwo sends the WAV on two streams at once, 20 ms a frame each, in
// tagged frames: the tab's samples with the low bit set, the mic's clear.
func (c *client) streamTwo(path string) error {
	pcm, err := readPCM(path)
	if err != nil {
		return err
	}
	write := func(typ websocket.MessageType, b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		return c.ws.Write(ctx, typ, b)
	}
	for _, src := range []string{"tab", "mic"} {
		if err := write(websocket.MessageText, []byte(`{"type":"audio_start","sample_rate":16000,"encoding":"pcm_s16le","source":"`+src+`"}`)); err != nil {
			return err
		}
	}
	const frame = 320
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i+frame <= len(pcm); i += frame {
		for _, tag := range []byte{tagTab, tagMic} {
			buf := make([]byte, 1, 1+2*frame)
			buf[0] = tag
			for _, s := range pcm[i : i+frame] {
				if tag == tagTab {
					s |= 1
				} else {
					s &^= 1
				}
				buf = append(buf, byte(s), byte(s>>8))
			}
			if err := write(websocket.MessageBinary, buf); err != nil {
				return err
			}
		}
		<-tick.C
	}
	return write(websocket.MessageText, []byte(`{"type":"audio_stop"}`))
}

// recordingAnswerer answers every question with one line and keeps the
// requests.
type recordingAnswerer struct {
	mu   sync.Mutex
	reqs []tiers.Request
}

func (a *recordingAnswerer) Answer(ctx context.Context, req tiers.Request, emit func(tiers.Event)) {
	a.mu.Lock()
	a.reqs = append(a.reqs, req)
	a.mu.Unlock()
	emit(tiers.Event{Kind: tiers.EventStart, Level: tiers.L1, Source: "recorder"})
	emit(tiers.Event{Kind: tiers.EventDelta, Text: "An answer."})
	emit(tiers.Event{Kind: tiers.EventEnd, Reason: tiers.ReasonDone})
}

func (a *recordingAnswerer) last() tiers.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reqs[len(a.reqs)-1]
}

func readPCM(path string) ([]int16, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pcm, _, err := asr.DecodeWAV(raw)
	return pcm, err
}

// TestFileReason: every error doctext names has its bad_file reason, also
// wrapped with the format; any other error reads as a damaged file.
func TestFileReason(t *testing.T) {
	t.Parallel()
	for _, r := range fileReasons {
		if got := fileReason(fmt.Errorf("pdf: %w", r.err)); got != r.reason {
			t.Errorf("fileReason(%v) = %q, want %q", r.err, got, r.reason)
		}
	}
	if got := fileReason(errors.New("zip: not a valid zip file")); got != "damaged" {
		t.Errorf("an unnamed error gives %q, want damaged", got)
	}
	if len(fileReasons) != 4 {
		t.Errorf("%d reasons; docs/protocol.md lists format, damaged, locked and no_text", len(fileReasons))
	}
}
