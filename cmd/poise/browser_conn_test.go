package main

import (
	"reflect"
	"testing"

	"github.com/chromedp/chromedp"
)

// connScenarioJS drives web/static/conn.js in the page against a scripted
// fake WebSocket and reports what the connection did.
const connScenarioJS = `(async () => {
  const { Connection } = await import('/static/conn.js');
  const sockets = [];
  class FakeWS {
    static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
    constructor(url) { this.url = url; this.sent = []; this.readyState = 0; this.bufferedAmount = 0; sockets.push(this);
      setTimeout(() => { this.readyState = 1; this.onopen && this.onopen(); }, 0); }
    send(d) { this.sent.push(typeof d === 'string' ? JSON.parse(d) : d); }
    close(code) { if (this.readyState === 3) return; this.readyState = 3; setTimeout(() => this.onclose && this.onclose({ code: code || 1005 }), 0); }
    push(m) { this.onmessage({ data: JSON.stringify(m) }); }
    drop(code) { this.readyState = 3; this.onclose({ code }); }
  }
  const realWS = window.WebSocket;
  window.WebSocket = FakeWS;
  const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));
  const until = async (f) => { for (let i = 0; i < 400 && !f(); i++) await tick(5); return f(); };
  const applied = [], delays = [], states = [], welcomes = [];
  let rnd = 0;
  const c = new Connection({
    url: 'ws://x/ws', hello: () => ({ profile: { lang: 'en' } }),
    config: { pingMs: 1e6, offlineAfterMs: 1e6, reconnectMinMs: 20, reconnectMaxMs: 160 },
    random: () => rnd,
    onMessage: (m) => applied.push(m.seq),
    onWelcome: (w, info) => welcomes.push({ id: w.session_id, resumed: info.resumed, newSession: info.newSession }),
    onState: (s, d) => { states.push(s); if (s === 'waiting') delays.push(d.delayMs); },
  });
  try {
    c.start();
    await until(() => sockets[0]?.sent.length === 1);
    const hello1 = sockets[0].sent[0];
    sockets[0].push({ type: 'welcome', session_id: 's1', resume_token: 'k1', resumed: false, last_seq: 0, level: 'L3' });
    for (const seq of [1, 2, 2, 4]) sockets[0].push({ type: 'pong', seq, t: 0 });
    const afterFirst = { lastSeq: c.lastSeq, gaps: c.gaps, duplicates: c.duplicates };

    // The server goes away; every retry is refused at once (1006) until
    // the fifth, which the test lets through.
    rnd = 0;
    sockets[0].drop(1006);
    for (let i = 1; i <= 5; i++) {
      await until(() => sockets.length > i);
      if (i < 5) { sockets[i].drop(1006); rnd = i === 3 ? 0.999 : 0; }
    }
    await until(() => sockets[5].sent.length === 1);
    const hello2 = sockets[5].sent[0];
    sockets[5].push({ type: 'error', seq: 0, code: 'unknown_session', message: 'gone' });
    await until(() => sockets[5].sent.length === 2);
    const hello3 = sockets[5].sent[1];
    sockets[5].push({ type: 'welcome', session_id: 's2', resume_token: 'k2', resumed: false, last_seq: 0, level: 'L3' });
    for (const seq of [1, 2, 3, 4, 5]) sockets[5].push({ type: 'pong', seq, t: 0 });

    // A resume whose server stream is behind the page (restored from older
    // shared state): seq 4 and 5 come again and are new messages.
    sockets[5].drop(1001);
    await until(() => sockets[6]?.sent.length === 1);
    const hello4 = sockets[6].sent[0];
    sockets[6].push({ type: 'welcome', session_id: 's2', resume_token: 'k2', resumed: true, last_seq: 3, level: 'L3' });
    sockets[6].push({ type: 'pong', seq: 4, t: 0 });
    sockets[6].push({ type: 'pong', seq: 4, t: 0 });
    const sent = c.send({ type: 'question', text: 'hi' });
    return { hello1, hello2, hello3, hello4, afterFirst, applied, delays: delays.slice(0, 6), welcomes,
      final: { lastSeq: c.lastSeq, duplicates: c.duplicates, rewinds: c.rewinds, sent, last: sockets[6].sent[1] } };
  } finally {
    c.stop();
    window.WebSocket = realWS;
  }
})()`

// testConnection checks conn.js on its own, with a fake WebSocket: the
// hello and resume fields, seq bookkeeping (duplicates dropped, gaps
// counted, a rewound server stream accepted), a failed resume falling back
// to a fresh session on the same socket, and the backoff: doubling from the
// minimum, capped, scaled by a random factor in [0.5, 1).
func testConnection(t *testing.T, env *browserEnv, s *poiseServer) {
	tb := env.newTab(t)
	tb.do(chromedp.Navigate(s.url("/")))
	tb.waitFor("the page", `document.body.dataset.scripts === 'loaded'`)
	type hello struct {
		Type    string
		V       int
		Profile map[string]string
		Resume  *struct {
			SessionID string `json:"session_id"`
			Token     string
			LastSeq   int `json:"last_seq"`
		}
	}
	type result struct {
		Hello1, Hello2, Hello3, Hello4 hello
		AfterFirst                     struct{ LastSeq, Gaps, Duplicates int }
		Applied                        []int
		Delays                         []int
		Welcomes                       []struct {
			ID                  string
			Resumed, NewSession bool
		}
		Final struct {
			LastSeq, Duplicates, Rewinds int
			Sent                         bool
			Last                         map[string]string
		}
	}
	r := js[result](tb, connScenarioJS)

	if r.Hello1.Type != "hello" || r.Hello1.V != 1 || r.Hello1.Profile["lang"] != "en" || r.Hello1.Resume != nil {
		t.Errorf("first hello %+v, want v1 with the profile and no resume", r.Hello1)
	}
	if r.AfterFirst.LastSeq != 4 || r.AfterFirst.Gaps != 1 || r.AfterFirst.Duplicates != 1 {
		t.Errorf("after seqs 1 2 2 4: %+v, want last 4, 1 gap, 1 duplicate", r.AfterFirst)
	}
	if r.Hello2.Resume == nil || r.Hello2.Resume.SessionID != "s1" || r.Hello2.Resume.Token != "k1" || r.Hello2.Resume.LastSeq != 4 {
		t.Errorf("reconnect hello %+v, want resume s1/k1 from seq 4", r.Hello2)
	}
	if r.Hello3.Resume != nil || r.Hello3.Type != "hello" {
		t.Errorf("hello after unknown_session %+v, want a fresh hello on the same socket", r.Hello3)
	}
	if r.Hello4.Resume == nil || r.Hello4.Resume.SessionID != "s2" || r.Hello4.Resume.LastSeq != 5 {
		t.Errorf("second resume %+v, want s2 from seq 5", r.Hello4)
	}
	// Doubling from 20 ms, capped at 160 ms. With random 0 each delay is
	// half its base; the fifth retry ran with random 0.999: the cap.
	if len(r.Delays) < 5 {
		t.Fatalf("backoff delays %v, want 5", r.Delays)
	}
	for i, want := range []int{10, 20, 40, 80} {
		if r.Delays[i] != want {
			t.Errorf("delay %d: %d ms, want %d (delays %v)", i, r.Delays[i], want, r.Delays)
		}
	}
	if d := r.Delays[4]; d < 159 || d > 160 {
		t.Errorf("delay 4: %d ms, want the 160 ms cap (delays %v)", d, r.Delays)
	}
	wantApplied := []int{1, 2, 4, 1, 2, 3, 4, 5, 4}
	if !reflect.DeepEqual(r.Applied, wantApplied) {
		t.Errorf("applied seqs %v, want %v", r.Applied, wantApplied)
	}
	if r.Final.LastSeq != 4 || r.Final.Rewinds != 1 || r.Final.Duplicates != 2 {
		t.Errorf("final %+v, want last 4, 1 rewind, 2 duplicates", r.Final)
	}
	if !r.Final.Sent || r.Final.Last["type"] != "question" {
		t.Errorf("send after the resume: %v, %v", r.Final.Sent, r.Final.Last)
	}
	if len(r.Welcomes) != 3 || !r.Welcomes[1].NewSession || !r.Welcomes[2].Resumed {
		t.Errorf("welcomes %+v, want a new session after the failed resume and then a resume", r.Welcomes)
	}
	tb.requireClean()
}
