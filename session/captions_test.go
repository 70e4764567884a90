package session

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/poise-dev/poise/asr"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

const questionsWAV = "../asr/testdata/en_questions.wav"

// captionsStack is audioStack with its pool. Build it inside a synctest
// bubble.
func captionsStack(t *testing.T) (*memServer, *vendorsim.Server, *asr.Pool) {
	return whisperSaying(t, spoken)
}

// play streams a WAV at real time (fake time in a bubble), then a ping,
// and gives every message up to that ping's pong to see, so that the
// stream never stalls on a client that is not reading.
func (c *client) play(path string, see func(m msg)) {
	c.t.Helper()
	errc := make(chan error, 1)
	go func() {
		err := c.streamWAV(path, 1)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			err = c.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"ping","t":"end of play"}`))
		}
		errc <- err
	}()
	for {
		m, err := c.tryRead(time.Minute) // fake time: the WAV plays longer than waitLimit without a message
		if err != nil {
			c.t.Fatalf("play %s: %v (streaming: %v)", path, err, <-errc)
		}
		if m.str("type") == "pong" && m["t"] == "end of play" {
			break
		}
		see(m)
	}
	if err := <-errc; err != nil {
		c.t.Fatalf("play %s: %v", path, err)
	}
}

// seqReader reads server messages and checks that their seqs follow on
// from the welcome's last_seq without a gap.
type seqReader struct {
	c    *client
	last uint64
}

func (r *seqReader) read() msg {
	r.c.t.Helper()
	m, err := r.c.tryRead(time.Minute) // fake time: the WAV plays longer than waitLimit without a message
	if err != nil {
		r.c.t.Fatalf("read: %v", err)
	}
	if m.seq() != r.last+1 {
		r.c.t.Fatalf("seq %d after %d: %v", m.seq(), r.last, m)
	}
	r.last = m.seq()
	return m
}

// checkCaptions fails unless m is the captions message for st in lang.
func checkCaptions(t *testing.T, m msg, st asr.State, lang string) {
	t.Helper()
	if m.str("type") != "captions" || m.str("state") != string(st) || m.str("hint") != captionsHint(st, lang) {
		t.Fatalf("got %v, want captions %s with the %s hint %q", m, st, lang, captionsHint(st, lang))
	}
	if st != asr.StateLive && m.str("hint") == "" {
		t.Fatalf("captions %s has no hint", st)
	}
}

// TestCaptionsPauseAndResume: whisper goes down while the candidate
// speaks: within 5 s a `captions` paused message comes (in sequence, no
// level change, no error, no caption); when whisper is back, `captions`
// live comes before the first caption.
func TestCaptionsPauseAndResume(t *testing.T) { synctest.Test(t, captionsPauseAndResume) }

func captionsPauseAndResume(t *testing.T) {
	ms, sim, _ := captionsStack(t)
	c, w := ms.start(t)
	r := &seqReader{c: c, last: uint64(w["last_seq"].(float64))}
	play := func(see func(m msg)) {
		c.play(questionsWAV, func(m msg) {
			if m.seq() != r.last+1 {
				t.Fatalf("seq %d after %d: %v", m.seq(), r.last, m)
			}
			r.last = m.seq()
			see(m)
		})
		r.last++ // the pong that ended the play
	}

	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
	start := time.Now()
	paused := false
	play(func(m msg) {
		if paused {
			t.Fatalf("with whisper down got %v", m)
		}
		checkCaptions(t, m, asr.StatePaused, "en")
		paused = true
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("captions paused came %v after the audio started, want within 5 s", took)
		}
	})

	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
	live, final := false, false
	play(func(m msg) {
		switch m.str("type") {
		case "captions":
			checkCaptions(t, m, asr.StateLive, "en")
			live = true
		case "caption":
			if !live {
				t.Fatalf("caption %v before captions live", m)
			}
			final = final || m["final"] == true
		case "level", "error":
			t.Fatalf("whisper back: got %v (welcome level %v)", m, w["level"])
		}
	})
	if !paused || !live || !final {
		t.Fatalf("paused %v, then live %v with a final caption %v", paused, live, final)
	}
}

// TestCaptionsAfterWelcome: a session that starts while the chain is
// paused hears so right after its welcome, in its language; a language
// change rewords it; a resume repeats it; and the chain's recovery reaches
// the resumed connection.
func TestCaptionsAfterWelcome(t *testing.T) { synctest.Test(t, captionsAfterWelcome) }

func captionsAfterWelcome(t *testing.T) {
	ms, sim, pool := captionsStack(t)
	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{Status: 500})
	for range 2 {
		pool.Recognize(t.Context(), make([]int16, asr.SampleRate), "en", true)
	}
	if st, _ := pool.State(); st != asr.StatePaused {
		t.Fatalf("pool state %q, want paused", st)
	}

	c := ms.dial(t)
	c.send(hello("zh"))
	w := c.readType("welcome")
	r := &seqReader{c: c, last: uint64(w["last_seq"].(float64))}
	checkCaptions(t, r.read(), asr.StatePaused, "zh")
	c.send(map[string]any{"type": "profile", "profile": map[string]any{"lang": "en", "seniority": "mid"}})
	checkCaptions(t, r.read(), asr.StatePaused, "en")
	c.ws.CloseNow()

	c2 := ms.dial(t)
	c2.send(resumeHello(w, r.last))
	if rw := c2.readType("welcome"); rw["resumed"] != true {
		t.Fatalf("resume welcome = %v", rw)
	}
	r2 := &seqReader{c: c2, last: r.last}
	checkCaptions(t, r2.read(), asr.StatePaused, "en")

	sim.SetFault(vendorsim.WhisperModel, vendorsim.Fault{})
	time.Sleep(200 * time.Millisecond) // past the retry
	if _, _, err := pool.Recognize(t.Context(), make([]int16, asr.SampleRate), "en", true); err != nil {
		t.Fatal(err)
	}
	checkCaptions(t, r2.read(), asr.StateLive, "en")
}
