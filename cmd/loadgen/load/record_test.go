package load

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestSeqGapsAndRepeats(t *testing.T) {
	tests := []struct {
		name          string
		seqs          []uint64
		lost, doubled int
	}{
		{"in order", []uint64{1, 2, 3, 4}, 0, 0},
		{"one gap of two", []uint64{1, 2, 5, 6}, 2, 0},
		{"a repeat", []uint64{1, 2, 2, 3}, 0, 1},
		{"a replay after resume", []uint64{1, 2, 3, 2, 3, 4}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			for i, s := range tt.seqs {
				r.onMessage(message{Type: "pong", Seq: s}, at(i), false)
			}
			if r.lost != tt.lost || r.doubled != tt.doubled {
				t.Errorf("lost %d doubled %d, want %d and %d", r.lost, r.doubled, tt.lost, tt.doubled)
			}
		})
	}
}

func TestTypedQuestionFirstContent(t *testing.T) {
	r := newRecorder()
	r.ask("t1", "Why us?", at(0))
	r.onMessage(message{Type: "coach", Seq: 1, ID: "t1"}, at(1500), false)
	r.onMessage(message{Type: "answer_start", Seq: 2, ID: "t1", Level: "L2", Source: "local"}, at(1700), false)
	r.onMessage(message{Type: "answer_end", Seq: 3, ID: "t1", Reason: "done"}, at(2500), false)
	res := collectOne(r)
	q := res.Questions[0]
	if q.FirstMS != 1500 || q.FirstKind != kindCoach || q.AnswerMS != 1700 || q.Level != "L2" || q.Source != "local" || q.End != "done" {
		t.Errorf("got %+v", q)
	}
}

func TestCaptionsMatchUtterancesInOrder(t *testing.T) {
	r := newRecorder()
	r.uttEnded(0, at(2400))
	r.uttEnded(1, at(7100))
	r.onMessage(message{Type: "caption", Seq: 1, Final: true, Text: "What is your greatest weakness?", Source: "whisper"}, at(3100), false)
	r.onMessage(message{Type: "caption", Seq: 2, Final: false, Text: "Tell me"}, at(7000), false)
	r.onMessage(message{Type: "caption", Seq: 3, Final: true, Text: "Tell me about a conflict.", Source: "cloud"}, at(7900), false)
	r.onMessage(message{Type: "caption", Seq: 4, Final: true, Text: "noise"}, at(9000), false)
	res := collectOne(r)
	if len(res.Captions) != 2 || res.Captions[0].LatencyMS != 700 || res.Captions[1].LatencyMS != 800 || res.Captions[1].Utterance != 1 {
		t.Errorf("captions %+v", res.Captions)
	}
	if res.ExtraFinals != 1 || len(res.Questions) != 0 {
		t.Errorf("extra finals %d, questions %d (auto_answer off)", res.ExtraFinals, len(res.Questions))
	}
}

func TestSpokenQuestionsTiedToServerIDs(t *testing.T) {
	r := newRecorder()
	r.uttEnded(0, at(2400))
	r.onMessage(message{Type: "caption", Seq: 1, Final: true, Text: "What is your greatest weakness?"}, at(3100), true)
	r.uttEnded(1, at(7100))
	// The first spoken question got nothing before the next one
	// superseded it; the server's content is for the second one.
	r.onMessage(message{Type: "caption", Seq: 2, Final: true, Text: "Why do you want to join our team?"}, at(7800), true)
	r.onMessage(message{Type: "answer_start", Seq: 3, ID: "q2", Level: "L1", Source: "vendor-a"}, at(8200), true)
	res := collectOne(r)
	if len(res.Questions) != 2 {
		t.Fatalf("%d questions, want 2", len(res.Questions))
	}
	first, second := res.Questions[0], res.Questions[1]
	if !first.Superseded || first.FirstMS != -1 {
		t.Errorf("first %+v: want superseded without content", first)
	}
	if second.ID != "q2" || second.FirstMS != 400 || second.UttToFirstMS != 1100 || !second.Spoken {
		t.Errorf("second %+v", second)
	}
	if res.Unattributed != 0 {
		t.Errorf("%d unattributed", res.Unattributed)
	}
}

func TestResumeThatStartsANewSessionIsLost(t *testing.T) {
	r := newRecorder()
	r.welcome(message{Type: "welcome", Level: "L1"}, at(0), false)
	r.onMessage(message{Type: "pong", Seq: 1}, at(10), false)
	r.lostConnection(at(100))
	if got := r.state(); got != levelOffline {
		t.Errorf("state %q while disconnected", got)
	}
	r.welcome(message{Type: "welcome", Level: "L2", Resumed: false}, at(300), true)
	r.onMessage(message{Type: "level", Seq: 1, From: "L2", Level: "L1", Reason: "recovered"}, at(400), false)
	res := collectOne(r)
	if res.SessionsLost != 1 || res.Doubled != 0 {
		t.Errorf("sessions lost %d doubled %d: a new session restarts the seq", res.SessionsLost, res.Doubled)
	}
	if len(res.Reconnects) != 1 || res.Reconnects[0].BackMS != 300 || res.Reconnects[0].Resumed {
		t.Errorf("reconnects %+v", res.Reconnects)
	}
	if len(res.Levels) != 2 || res.Levels[0].Reason != "welcome" || res.Levels[1].To != "L1" {
		t.Errorf("levels %+v", res.Levels)
	}
}

func TestSummarize(t *testing.T) {
	res := &Result{SLAms: 1500, Questions: []QuestionRecord{
		{FirstMS: 400, AnswerMS: 400, FirstKind: kindAnswer, Level: "L1"},
		{FirstMS: 1500, AnswerMS: 1900, FirstKind: kindCoach, Level: "L2"},
		{FirstMS: 1502, AnswerMS: -1, FirstKind: kindCoach},
		{FirstMS: -1, AnswerMS: -1},
		{FirstMS: -1, AnswerMS: -1, Superseded: true},
		{FirstMS: 0, AnswerMS: -1, FirstKind: kindOffline},
	}}
	s := Summarize(res, 0)
	if s.Questions != 4 || s.Superseded != 1 || s.Offline != 1 || s.NoContent != 1 {
		t.Errorf("counts %+v", s)
	}
	if s.CoachAtSLA != 2 {
		t.Errorf("%d coach cards at the SLA timer, want 2", s.CoachAtSLA)
	}
	if s.FirstWithin != 2 || s.ContentWithin != 1 || s.ByFirst["L1"] != 1 || s.ByFirst[kindCoach] != 2 {
		t.Errorf("within %d content %d by %v", s.FirstWithin, s.ContentWithin, s.ByFirst)
	}
	if s2 := Summarize(res, 5*time.Millisecond); s2.FirstWithin != 3 {
		t.Errorf("with a 5 ms allowance: %d within, want 3", s2.FirstWithin)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tt := range []struct{ p, want float64 }{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}} {
		if got := Percentile(xs, tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if Percentile(nil, 99) != 0 {
		t.Error("empty percentile is not 0")
	}
}

// collectOne collects one recorder with time origin t0.
func collectOne(r *recorder) *Result {
	res := &Result{}
	r.collect(0, t0, res)
	return res
}
