package load

import (
	"encoding/json"
	"testing"
)

func TestFastSeq(t *testing.T) {
	for _, tt := range []struct {
		in   string
		seq  uint64
		fast bool
	}{
		{`{"type":"answer_delta","seq":41,"id":"t3","text":" the \"seq\":9 case"}`, 41, true},
		{`{"type":"answer_delta","seq":18446744073709551615,"id":"a","text":""}`, 0, false}, // 20 digits: the decoder's job
		{`{"type":"answer_delta","seq":7}`, 7, true},
		{`{"type":"answer_delta","seq":7x,"id":"a"}`, 0, false},
		{`{"type":"answer_delta","seq":,"id":"a"}`, 0, false},
		{`{"type":"answer_delta","seq":12`, 0, false},
		{`{"seq":41,"type":"answer_delta","id":"t3","text":"x"}`, 0, false}, // another order: decoded in full
		{`{"type":"answer_start","seq":40,"id":"t3","level":"L1"}`, 0, false},
	} {
		seq, ok := fastSeq([]byte(tt.in))
		if seq != tt.seq || ok != tt.fast {
			t.Errorf("fastSeq(%s) = %d, %v; want %d, %v", tt.in, seq, ok, tt.seq, tt.fast)
		}
		if ok { // the fast path agrees with the decoder
			var m message
			if err := json.Unmarshal([]byte(tt.in), &m); err != nil || m.Seq != seq {
				t.Errorf("decoded %s: seq %d, %v", tt.in, m.Seq, err)
			}
		}
	}
}

func TestOnSeqCountsLikeOnMessage(t *testing.T) {
	fast, full := newRecorder(), newRecorder()
	for _, seq := range []uint64{1, 2, 2, 5, 6} {
		fast.onSeq(seq)
		full.onMessage(message{Type: "answer_delta", Seq: seq}, t0, false)
	}
	if fast.lost != 2 || fast.doubled != 1 || fast.lost != full.lost || fast.doubled != full.doubled || fast.seq() != 6 {
		t.Errorf("fast lost %d doubled %d seq %d; full lost %d doubled %d", fast.lost, fast.doubled, fast.seq(), full.lost, full.doubled)
	}
}
