package session

import (
	"context"
	"strconv"
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
		s.retryLevels = true
	case typeProfile:
		lang := s.profile.Lang
		s.setProfile(*m.Profile)
		if s.profile.Lang != lang {
			s.rewordCaptions()
		}
		if m.AutoAnswer != nil {
			s.autoAnswer = *m.AutoAnswer
		}
		s.record()
	case typeQuestion:
		s.onQuestion(ctx, m.ID, *m.Text)
	case typeImage:
		s.askScreenshot(ctx, m)
	case typeAudioStart:
		s.startAudio(ctx, m.Source)
	case typeAudioStop:
		if m.Source == "" {
			s.stopAudio()
		} else {
			s.stopStream(m.Source)
		}
	default:
		s.onAddition(ctx, m)
	}
}

func (s *Session) onQuestion(ctx context.Context, id, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		s.sendError(refuse(codeBadField, "question text is empty"))
		return
	}
	level := s.questionLevel() // over questions_per_minute: templates or the coach, never an error
	s.ask(ctx, s.questionID(id), text, level)
}

func itoa(n int) string { return strconv.Itoa(n) }
