package session

import (
	"context"
	"fmt"
	"strings"
)

// onClient handles one valid client message. Run only.
func (s *Session) onClient(ctx context.Context, m inbound) {
	switch m.Type {
	case typeHello:
		s.sendError(refuse(codeSecondHello, "this connection already has a session; hello is only the first message"))
	case typePing:
		s.send(&pongMsg{head: head{Type: "pong"}, T: m.T})
	case typeResetAI:
		s.transition(ctx, evReset)
	case typeProfile:
		s.profile = *m.Profile
		if m.AutoAnswer != nil {
			s.autoAnswer = *m.AutoAnswer
		}
		s.record()
	case typeQuestion:
		s.onQuestion(ctx, m.ID, *m.Text)
	case typeAudioStart:
		s.audioOn = true
	case typeAudioStop:
		s.audioOn = false
	}
}

func (s *Session) onQuestion(ctx context.Context, id, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		s.sendError(refuse(codeBadField, "question text is empty"))
		return
	}
	if !s.hub.allowQuestion(s.subject) {
		s.sendError(refuse(codeRateLimited, "more than %d questions a minute; wait a moment", s.cfg.Limits.QuestionsPerMinute))
		return
	}
	if id == "" {
		s.questions++
		id = fmt.Sprintf("q%d", s.questions)
	}
	s.ask(ctx, id, text)
}

// onAudio validates one binary frame. Run only.
func (s *Session) onAudio(data []byte) {
	switch {
	case !s.audioOn:
		s.sendError(refuse(codeAudio, "binary frame before audio_start"))
	case len(data) > maxAudioFrame:
		s.sendError(refuse(codeAudio, "audio frame of %d bytes is over %d", len(data), maxAudioFrame))
	case len(data)%2 != 0:
		s.sendError(refuse(codeAudio, "audio frame has an odd byte count (%d); pcm_s16le needs 2 bytes a sample", len(data)))
	}
}
