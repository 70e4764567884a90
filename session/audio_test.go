package session

import (
	"context"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
	"github.com/rs/zerolog"
)

const spoken = "Tell me about a time you handled a conflict at work"

// audioStack is a hub whose ASR pool points at vendorsim's whisper.cpp
// /inference, with the coach answering, all on one in-memory network.
// Build it inside a synctest bubble: the audio plays in fake time.
func audioStack(t *testing.T) (*memServer, *vendorsim.Server) {
	ms, sim, _ := whisperSaying(t, spoken)
	return ms, sim
}

// whisperSaying is audioStack with its pool, the simulated whisper
// transcribing every utterance as said, at L3.
func whisperSaying(t *testing.T, said string) (*memServer, *vendorsim.Server, *asr.Pool) {
	t.Helper()
	n := vendorsim.NewMemNet()
	sim := vendorsim.New(vendorsim.Options{Transcripts: []string{said}, InferenceDelay: 30 * time.Millisecond})
	t.Cleanup(sim.Close)
	n.Serve("whisper:80", sim)
	cfg := asr.Config{WhisperURLs: []string{"http://whisper:80"}, PartialEveryMs: 150, RetryMs: 100, HTTPClient: n.Client()}
	pool := asr.NewPool(cfg, zerolog.Nop(), nil)
	t.Cleanup(pool.Close)
	return newMemServerOn(t, n, Config{Health: newFakeHealth(tiers.L3), ASR: pool, ASRConfig: cfg}), sim, pool
}

// streamWAV sends a WAV's PCM in 20 ms frames, paced at speed× real time,
// between audio_start and audio_stop. It may run on its own goroutine, so
// it returns its error instead of failing the test.
func (c *client) streamWAV(path string, speed int) error {
	pcm, err := readWAV(path)
	if err != nil {
		return err
	}
	return c.streamPCM(pcm, speed)
}

// streamPCM is streamWAV for samples already read.
func (c *client) streamPCM(pcm []int16, speed int) error {
	write := func(typ websocket.MessageType, b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		return c.ws.Write(ctx, typ, b)
	}
	if err := write(websocket.MessageText, []byte(`{"type":"audio_start","sample_rate":16000,"encoding":"pcm_s16le","source":"mic"}`)); err != nil {
		return err
	}
	const frame = 320 // samples: 20 ms
	tick := time.NewTicker(20 * time.Millisecond / time.Duration(speed))
	defer tick.Stop()
	buf := make([]byte, 2*frame)
	for i := 0; i+frame <= len(pcm); i += frame {
		for j, s := range pcm[i : i+frame] {
			buf[2*j], buf[2*j+1] = byte(s), byte(s>>8)
		}
		if err := write(websocket.MessageBinary, buf); err != nil {
			return err
		}
		<-tick.C
	}
	return write(websocket.MessageText, []byte(`{"type":"audio_stop"}`))
}

// readWAV reads a 16 kHz WAV's samples.
func readWAV(path string) ([]int16, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pcm, rate, err := asr.DecodeWAV(raw)
	if err != nil || rate != 16000 {
		return nil, fmt.Errorf("decode %s: rate %d, %v", path, rate, err)
	}
	return pcm, nil
}

// streaming runs streamWAV on its own goroutine, which ends it with a
// ping. The returned wait reads (and drops) the messages up to that ping's
// pong, so the stream never stalls on a client that stopped reading (an
// in-memory connection buffers nothing), and reports the stream's error.
// It must be called before the test ends.
func (c *client) streaming(path string, speed int) (wait func()) {
	errc := make(chan error, 1)
	end := `{"type":"ping","t":"end of stream"}`
	go func() {
		err := c.streamWAV(path, speed)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			err = c.ws.Write(ctx, websocket.MessageText, []byte(end))
		}
		errc <- err
	}()
	return func() {
		c.t.Helper()
		for {
			m, err := c.tryRead(waitLimit)
			if err != nil {
				c.t.Fatalf("stream %s: %v (reading: %v)", path, <-errc, err)
			}
			if m.str("type") == "pong" && m["t"] == "end of stream" {
				break
			}
		}
		if err := <-errc; err != nil {
			c.t.Fatalf("stream %s: %v", path, err)
		}
	}
}

// TestSpokenQuestions streams espeak-ng speech with three questions over the
// WebSocket: each utterance gets partials before its final, and each final
// (a question) is answered automatically.
func TestSpokenQuestions(t *testing.T) { synctest.Test(t, spokenQuestions) }

func spokenQuestions(t *testing.T) {
	ms, _ := audioStack(t)
	c, _ := ms.start(t)
	wait := c.streaming("../asr/testdata/en_questions.wav", 1)
	defer wait()
	finals, answered := map[string]bool{}, 0
	partials := map[string]int{}
	for len(finals) < 3 || answered < 3 {
		m := c.read()
		switch m.str("type") {
		case "error", "level":
			t.Fatalf("unexpected %v", m)
		case "caption":
			utt := m.str("utt_id")
			if finals[utt] {
				t.Fatalf("caption after the final of %s: %v", utt, m)
			}
			if m["final"] == true {
				if m.str("text") != spoken || m.str("source") == "" {
					t.Fatalf("final caption = %v", m)
				}
				finals[utt] = true
			} else {
				partials[utt]++
			}
		case "coach":
			answered++
		}
	}
	withPartials := 0
	for utt := range finals {
		if partials[utt] > 0 {
			withPartials++
		}
	}
	if withPartials == 0 {
		t.Fatalf("no utterance had a partial caption before its final: %v", partials)
	}
}

// TestWhisperDownKeepsLevel: when every ASR backend fails, captions pause
// (a `captions` message, no caption) with no error and no level change,
// the session answers typed questions, and captions resume when whisper is
// back.
func TestWhisperDownKeepsLevel(t *testing.T) { synctest.Test(t, whisperDownKeepsLevel) }

func whisperDownKeepsLevel(t *testing.T) {
	ms, sim := audioStack(t)
	c, w := ms.start(t)
	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
	c.send(map[string]any{"type": "question", "text": "Why this role?"})
	coached, paused := false, false
	c.play("../asr/testdata/en_questions.wav", func(m msg) {
		switch m.str("type") {
		case "error", "level", "caption":
			t.Fatalf("with whisper down got %v", m)
		case "coach":
			coached = true
		case "captions":
			paused = m.str("state") == "paused"
		}
	})
	if !coached || !paused {
		t.Fatalf("with whisper down: coached %v, captions paused %v", coached, paused)
	}
	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
	wait := c.streaming("../asr/testdata/en_questions.wav", 1)
	defer wait()
	for {
		m := c.read()
		if m.str("type") == "level" {
			t.Fatalf("level changed: %v (welcome level %v)", m, w["level"])
		}
		if m.str("type") == "caption" && m["final"] == true {
			return
		}
	}
}

// TestSpokenRequestsAnswered: a final caption that asks without a question
// word or mark ("讲一个…的经历", a coding task) is answered like a question,
// and a remark ("我们还是先开始吧") is not, at the same detection the typed
// path's templates use (coach.Asks).
func TestSpokenRequestsAnswered(t *testing.T) {
	for _, tc := range []struct {
		said string
		asks bool
	}{
		{"讲一个你失败的经历", true},
		{"嗯 给你一个数组 把所有的零移到末尾", true},
		{"whats your biggest weakness", true},
		{"我们还是先开始吧。", false},
		{"We moved the cache to Redis last year.", false},
	} {
		t.Run(tc.said, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { spokenRequest(t, tc.said, tc.asks) })
		})
	}
}

func spokenRequest(t *testing.T, said string, asks bool) {
	ms, _, _ := whisperSaying(t, said)
	c, _ := ms.start(t)
	finals, answered := 0, 0
	c.play("../asr/testdata/en_questions.wav", func(m msg) {
		switch m.str("type") {
		case "error", "level":
			t.Fatalf("unexpected %v", m)
		case "caption":
			if m["final"] == true {
				finals++
			}
		case "coach", "answer_start":
			answered++
		}
	})
	if finals == 0 {
		t.Fatal("no final caption")
	}
	if got := answered > 0; got != asks {
		t.Errorf("%q: %d finals, %d answered; want answered %v", said, finals, answered, asks)
	}
}

// TestAudioStopFlushesTheOpenUtterance: audio_stop 100 ms after the end of
// speech (before the trailing silence could close the utterance) flushes
// it as a final.
func TestAudioStopFlushesTheOpenUtterance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms, _ := audioStack(t)
		c, _ := ms.start(t)
		pcm, err := readWAV("../asr/testdata/en_questions.wav")
		if err != nil {
			t.Fatal(err)
		}
		pcm = pcm[:(2414+100)*16] // the first utterance ends at 2414 ms
		if err := c.streamPCM(pcm, 1); err != nil {
			t.Fatal(err)
		}
		for {
			m := c.read()
			if m.str("type") == "caption" && m["final"] == true {
				if m.str("text") != spoken {
					t.Fatalf("final %v, want %q", m, spoken)
				}
				return
			}
		}
	})
}
