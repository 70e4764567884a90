package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// protoServer speaks the part of Poise's protocol the pacer uses, over
// real WebSockets: a welcome (resuming when asked), a pong per ping, and
// per question an answer_start, three answer_deltas written as Poise
// writes them and an answer_end, all seq'd per session.
type protoServer struct {
	mu      sync.Mutex
	seq     map[string]uint64 // per session id
	resumes []uint64          // last_seq of each resume hello
	frames  int               // binary frames received
	wg      sync.WaitGroup    // the handlers
}

func (p *protoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ctx := r.Context()
	var hello struct {
		Resume *struct {
			SessionID string `json:"session_id"`
			LastSeq   uint64 `json:"last_seq"`
		} `json:"resume"`
	}
	if _, b, err := ws.Read(ctx); err != nil || json.Unmarshal(b, &hello) != nil {
		return
	}
	p.mu.Lock()
	id, resumed := fmt.Sprintf("s%d", len(p.seq)+1), false
	if hello.Resume != nil {
		id, resumed = hello.Resume.SessionID, true
		p.resumes = append(p.resumes, hello.Resume.LastSeq)
	}
	p.seq[id] += 0
	p.mu.Unlock()
	welcome, _ := json.Marshal(map[string]any{"type": "welcome", "session_id": id, "resume_token": "tok", "resumed": resumed, "level": "L1"})
	if ws.Write(ctx, websocket.MessageText, welcome) != nil {
		return
	}
	for {
		typ, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			p.mu.Lock()
			p.frames++
			p.mu.Unlock()
			continue
		}
		var m struct{ Type, ID string }
		if json.Unmarshal(b, &m) != nil {
			return
		}
		var out []string
		switch m.Type {
		case "question":
			out = []string{`{"type":"answer_start","seq":%d,"id":"` + m.ID + `","level":"L1","source":"sim"}`,
				`{"type":"answer_delta","seq":%d,"id":"` + m.ID + `","text":"One"}`,
				`{"type":"answer_delta","seq":%d,"id":"` + m.ID + `","text":" \"two\""}`,
				`{"type":"answer_delta","seq":%d,"id":"` + m.ID + `","text":" three"}`,
				`{"type":"answer_end","seq":%d,"id":"` + m.ID + `","reason":"done"}`}
		case "ping":
			out = []string{`{"type":"pong","seq":%d}`}
		}
		for _, f := range out {
			p.mu.Lock()
			p.seq[id]++
			msg := fmt.Sprintf(f, p.seq[id])
			p.mu.Unlock()
			if ws.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
				return
			}
		}
	}
}

// TestPacerDropAndResume runs typed and audio sessions through pacers
// against a real WebSocket server, drops one session's socket halfway and
// checks that it resumed with the seq it had, and that every question was
// answered with nothing lost or doubled.
func TestPacerDropAndResume(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := &protoServer{seq: map[string]uint64{}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	defer p.wg.Wait()
	frame := make([]byte, 2*samplesPerFrame)
	clip := &Clip{Name: "silence", Frames: [][]byte{frame, frame, frame, frame, frame}}
	cfg := Config{Servers: []string{srv.URL}, Sessions: 3, Duration: 600 * time.Millisecond, SLA: 100 * time.Millisecond, Clip: clip,
		Profiles: []Profile{{Name: "mixed", Audio: true, Typed: true, QuestionGap: 100 * time.Millisecond}, {Name: "typist", Typed: true, QuestionGap: 100 * time.Millisecond}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Opened() != 3 {
		t.Fatalf("%d sessions opened", r.Opened())
	}
	select {
	case <-time.After(300 * time.Millisecond): // halfway through the traffic
	case <-ctx.Done():
	}
	r.Drop(1, 7) // 7 is no session
	res := r.Wait()
	if len(res.Reconnects) != 1 || res.Reconnects[0].Session != 1 || !res.Reconnects[0].Resumed || res.Reconnects[0].BackMS < 0 {
		t.Fatalf("reconnects %+v, want session 1 resumed", res.Reconnects)
	}
	s := Summarize(res, 0)
	if s.Lost+s.Doubled+s.Errors+s.NoContent+res.SessionsLost != 0 || s.Questions == 0 {
		t.Errorf("%d questions, %d lost, %d doubled, %d errors, %d without content, %d sessions lost", s.Questions, s.Lost, s.Doubled, s.Errors, s.NoContent, res.SessionsLost)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if id := res.SessionIDs[1]; len(p.resumes) != 1 || p.resumes[0] == 0 || p.resumes[0] > p.seq[id] {
		t.Errorf("resume hellos with last_seq %v; session %s was sent %d", p.resumes, id, p.seq[id])
	}
	if p.frames == 0 {
		t.Error("the audio sessions sent no frame")
	}
}
