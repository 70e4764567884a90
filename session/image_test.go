package session

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/ocr"
	"github.com/poise-dev/poise/tiers/ocr/ocrtest"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// shotStack is a hub on the real engine with a vision model, two text
// vendors and a local model (each a vendorsim), the real template store
// and real OCR (Tesseract).
type shotStack struct {
	*testServer
	vision, a, b, local *vendorsim.Server
	tpl                 *switchableTemplates
}

func newShotStack(t *testing.T) *shotStack {
	t.Helper()
	ocrtest.Need(t)
	store, err := bankStore()
	if err != nil {
		t.Fatal(err)
	}
	sim := func() (*vendorsim.Server, string) {
		s := vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond, FirstTokenDelay: 10 * time.Millisecond})
		srv := httptest.NewServer(s)
		t.Cleanup(func() { s.Close(); srv.Close() })
		return s, srv.URL + "/v1"
	}
	st := &shotStack{tpl: &switchableTemplates{store: store}}
	var vURL, aURL, bURL, localURL string
	st.vision, vURL = sim()
	st.a, aURL = sim()
	st.b, bURL = sim()
	st.local, localURL = sim()
	cfg := tiers.Config{
		SLAms:  1500,
		Health: tiers.HealthConfig{IntervalMS: int(time.Hour / time.Millisecond), RecoverAfter: 3},
		L1: tiers.L1Config{HedgeAfterMS: 100, FirstTokenTimeoutMS: 300, DownAfter: 3, DownWindowMS: 60000, Vendors: []upstream.Endpoint{
			{Name: "vendor-a", BaseURL: aURL, APIKey: "k", Model: "model-a"},
			{Name: "vendor-b", BaseURL: bURL, APIKey: "k", Model: "model-b"},
		}},
		L2: tiers.L2Config{Name: "local", BaseURL: localURL, Model: "local-model", TimeoutMS: 300, FailAfter: 5, FailWindowMS: 60000},
	}
	cfg.L1.Vision.Name, cfg.L1.Vision.BaseURL, cfg.L1.Vision.Model, cfg.L1.Vision.APIKey = "vision", vURL, "vision-model", "k"
	log := zerolog.Nop()
	hc := upstream.NewHTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	pool := ocr.New(ocr.Config{TimeoutMS: 60000}, log, nil) // a loaded CI machine: OCR's latency is the benchmark's
	h := health.New(health.Config{IntervalMS: cfg.Health.IntervalMS, RecoverAfter: 3, L1DownAfter: 3, L1DownWindowMS: 60000,
		L2FailAfter: 5, L2FailWindowMS: 60000}, []health.Probe{
		health.ListProbe("vendor-a", tiers.L1, aURL, "k", hc),
		health.ListProbe("vendor-b", tiers.L1, bURL, "k", hc),
		health.ListProbe("vision", tiers.NoLevel, vURL, "k", hc),
		health.CompletionProbe("local", tiers.L2, cfg.L2.Endpoint(), 300*time.Millisecond, hc),
		{Name: tiers.TemplatesBackend, Level: tiers.L3, Check: st.tpl.probe},
		{Name: ocr.Backend, Level: tiers.NoLevel, Check: pool.Probe, Timeout: ocr.ProbeTimeout},
	}, log, nil)
	engine := tiers.NewEngine(cfg, h, st.tpl, log, nil, tiers.WithReader(pool))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait(); engine.Close(); pool.Close() })
	st.testServer = newTestServer(t, Config{Answerer: engine, Health: h, SLA: 1500 * time.Millisecond})
	return st
}

// problemShot is a LeetCode-style problem statement, rendered.
func problemShot(t *testing.T) []byte {
	t.Helper()
	img, err := ocrtest.PNG(ocrtest.Shot{Text: ocrtest.ProblemEN, Font: ocrtest.SansFont, Size: 15, Scale: 1, Theme: ocrtest.Dark})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// sendImage sends img as `image` parts of at most partBytes bytes.
func (c *client) sendImage(id, format string, img []byte, partBytes int) {
	c.t.Helper()
	parts := (len(img) + partBytes - 1) / partBytes
	for i := 0; i < parts; i++ {
		chunk := img[i*partBytes : min(len(img), (i+1)*partBytes)]
		c.send(map[string]any{"type": "image", "id": id, "format": format, "part": i, "parts": parts,
			"data": base64.StdEncoding.EncodeToString(chunk)})
	}
}

// shotAnswer is what the client saw of one screenshot question.
type shotAnswer struct {
	first          msg           // the first useful content: answer_start or coach
	firstAt        time.Duration // from the last part sent
	read           string        // screenshot_text, if any
	start          msg           // answer_start, if any
	startAt, endAt time.Duration
	text, end      string
	coaches        []msg
}

// askShot sends a screenshot question and reads until its answer ended,
// or until its coach card with no answer to follow (when wantAnswer is
// false, after the read).
func (c *client) askShot(id string, img []byte, wantAnswer bool) shotAnswer {
	c.t.Helper()
	c.sendImage(id, "png", img, 40_000)
	sent := time.Now()
	var a shotAnswer
	for {
		m := c.read()
		switch m.str("type") {
		case "error":
			c.t.Fatalf("error: %v", m)
		case "screenshot_text":
			a.read = m.str("text")
		case "coach":
			a.coaches = append(a.coaches, m)
			if a.first == nil {
				a.first, a.firstAt = m, time.Since(sent)
			}
		case "answer_start":
			a.start, a.startAt = m, time.Since(sent)
			if a.first == nil {
				a.first, a.firstAt = m, time.Since(sent)
			}
		case "answer_delta":
			a.text += m.str("text")
		case "answer_end":
			a.end, a.endAt = m.str("reason"), time.Since(sent)
			return a
		}
		if !wantAnswer && a.read != "" && len(a.coaches) > 0 {
			return a
		}
	}
}

func TestScreenshotQuestion(t *testing.T) {
	img := problemShot(t)
	t.Run("vision healthy", func(t *testing.T) {
		st := newShotStack(t)
		st.vision.SetReply("vision-model", "Approach: a hash map of value to index, one pass, O(n).")
		c, _ := st.start(t, "en")
		a := c.askShot("s1", img, true)
		if a.start.str("via") != tiers.ViaVision || a.start.str("source") != "vision" || a.start.str("level") != "L1" {
			t.Fatalf("answer_start %v, want the vision model's", a.start)
		}
		if a.end != endDone || !strings.Contains(a.text, "hash map") {
			t.Fatalf("answer %q ended %q", a.text, a.end)
		}
		if n := st.vision.Counters("vision-model").Images; n != 1 {
			t.Fatalf("the vision model got %d images, want 1", n)
		}
		t.Logf("vision healthy: first content %v, answer_start %v", a.firstAt, a.startAt)
	})
	for name, f := range map[string]vendorsim.Fault{
		"vision slow": {FirstTokenDelayMS: 5000},
		"vision down": {Status: 503},
	} {
		t.Run(name, func(t *testing.T) {
			st := newShotStack(t)
			st.vision.SetFault("vision-model", f)
			c, _ := st.start(t, "en")
			a := c.askShot("s1", img, true)
			if a.first == nil {
				t.Fatal("no useful content")
			}
			if acc := ocrtest.Accuracy(ocrtest.ProblemEN, a.read); acc < 0.9 {
				t.Fatalf("screenshot_text %q (accuracy %.2f), want the problem", a.read, acc)
			}
			if a.start.str("via") != tiers.ViaOCR || a.start.str("source") != "vendor-a" || a.start.str("question") != a.read {
				t.Fatalf("answer_start %v, want vendor-a answering the read text", a.start)
			}
			if a.end != endDone {
				t.Fatalf("answer ended %q", a.end)
			}
			t.Logf("%s: first content (%s) %v, answer from the OCR text %v", name, a.first.str("type"), a.firstAt, a.startAt)
		})
	}
	t.Run("every model down", func(t *testing.T) {
		st := newShotStack(t)
		for _, s := range []struct {
			sim   *vendorsim.Server
			model string
		}{{st.vision, "vision-model"}, {st.a, "model-a"}, {st.b, "model-b"}, {st.local, "local-model"}} {
			s.sim.SetFault(s.model, vendorsim.Fault{Status: 503})
		}
		st.tpl.broken.Store(true)
		c, _ := st.start(t, "en")
		a := c.askShot("s1", img, false)
		if a.start != nil || len(a.coaches) == 0 {
			t.Fatalf("answer %v, coaches %d: want the coach alone", a.start, len(a.coaches))
		}
		// The card is the one for the read text when OCR was done by
		// sla_ms, else the one for a coding problem.
		got := a.coaches[0]["framework"].(map[string]any)["name"]
		byRead, byShot := coach.CardFor(a.read, "en").Framework.Name, coach.CardFor(screenshotCoachText, "en").Framework.Name
		if got != byRead && got != byShot {
			t.Fatalf("coach framework %v, want %q or %q", got, byRead, byShot)
		}
	})
}

// TestScreenshotBadImages: what is not an image, or is too large, gets an
// error with its code, and the session goes on.
func TestScreenshotBadImages(t *testing.T) {
	st := newShotStack(t)
	c, _ := st.start(t, "en")
	cases := []struct {
		name string
		send func()
		code string
	}{
		{"not an image", func() { c.sendImage("x1", "png", []byte("this is not a picture at all"), 40_000) }, codeBadImage},
		{"jpeg said, png sent", func() { c.sendImage("x2", "jpeg", problemShot(t), 40_000) }, codeBadImage},
		{"too many bytes", func() { c.sendImage("x3", "png", make([]byte, ocr.MaxBytes+1), 45_000) }, codeTooLarge},
		{"too many parts", func() {
			c.send(map[string]any{"type": "image", "format": "png", "part": 0, "parts": maxImageParts + 1, "data": "AAAA"})
		}, codeTooLarge},
		{"out of order", func() {
			c.send(map[string]any{"type": "image", "format": "png", "part": 1, "parts": 2, "data": "AAAA"})
		}, codeBadImage},
		{"bad format", func() {
			c.send(map[string]any{"type": "image", "format": "gif", "part": 0, "parts": 1, "data": "AAAA"})
		}, codeBadImage},
		{"no data", func() { c.send(map[string]any{"type": "image", "format": "png", "part": 0, "parts": 1}) }, codeMissingField},
	}
	for _, tc := range cases {
		tc.send()
		if m := c.readType("error"); m.str("code") != tc.code {
			t.Errorf("%s: error %v, want %s", tc.name, m, tc.code)
		}
	}
	first, _, _ := c.answer(bankQuestion)
	if first.str("type") != "answer_start" {
		t.Fatalf("after the bad images a question got %v", first)
	}
}
