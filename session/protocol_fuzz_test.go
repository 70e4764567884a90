package session

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeInbound: no input panics the decoder, and whatever it accepts
// has a known type; whatever it refuses carries a code and a message.
func FuzzDecodeInbound(f *testing.F) {
	for _, seed := range []string{
		`{"type":"hello","v":1,"profile":{"lang":"zh","seniority":"senior"}}`,
		`{"type":"hello","v":1,"resume":{"session_id":"a","token":"b","last_seq":3}}`,
		`{"type":"question","id":"q1","text":"为什么？"}`,
		`{"type":"audio_start","sample_rate":16000,"encoding":"pcm_s16le","source":"tab"}`,
		`{"type":"ping","t":{"x":[1,2]}}`, `{"type":"profile","profile":{"lang":"fr"}}`,
		`{"type":7}`, `[]`, `null`, `{"type":"question","text":null}`,
	} {
		f.Add([]byte(seed))
	}
	known := map[string]bool{typeHello: true, typeQuestion: true, typeResetAI: true, typePing: true,
		typeAudioStart: true, typeAudioStop: true, typeProfile: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeInbound(data)
		if err != nil {
			if err.Code == "" || err.Message == "" {
				t.Fatalf("refusal without code or message: %+v", err)
			}
			if _, jerr := json.Marshal(errorMsg{Code: err.Code, Message: err.Message}); jerr != nil {
				t.Fatalf("refusal does not encode: %v", jerr)
			}
			return
		}
		if !known[m.Type] {
			t.Fatalf("accepted unknown type %q", m.Type)
		}
		if m.Type == typeQuestion && m.Text == nil {
			t.Fatal("accepted a question without text")
		}
	})
}
