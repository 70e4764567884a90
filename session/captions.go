package session

import "github.com/poise-dev/poise/asr"

// captionsHints word the captions message's hint, by state and language.
// Live needs none.
var captionsHints = map[asr.State]map[string]string{
	asr.StateDegraded: {
		"en": "Captions are delayed: a slower speech recognizer is standing in",
		"zh": "字幕有延迟：正在使用较慢的备用语音识别",
	},
	asr.StatePaused: {
		"en": "Captions paused: speech recognition is unavailable. Type the question",
		"zh": "字幕已暂停：语音识别暂不可用，请直接输入问题",
	},
}

// captionsHint is st's hint in lang (en when unknown); "" when live.
func captionsHint(st asr.State, lang string) string {
	byLang := captionsHints[st]
	if h, ok := byLang[lang]; ok {
		return h
	}
	return byLang["en"]
}

// captionsWatch is what the session told its client about the caption
// chain, and where it hears of the next change. The chain is the
// process-wide ASR pool's, the same for every audio stream of the session.
// Owned by run.
type captionsWatch struct {
	told    asr.State       // the state last sent; "" means none yet (the client assumes live)
	changed <-chan struct{} // closed at the pool's next change; nil without a pool (never fires)
}

// captionsNow reads the chain's state and re-arms the watch. Live without
// an ASR pool: there is no chain to report on.
func (s *Session) captionsNow() asr.State {
	if s.cfg.ASR == nil {
		return asr.StateLive
	}
	st, changed := s.cfg.ASR.State()
	s.captions.changed = changed
	return st
}

// onCaptionsChanged tells the client the chain's new state, if it is new
// to the client. Run only.
func (s *Session) onCaptionsChanged() {
	st := s.captionsNow()
	told := s.captions.told
	if told == "" {
		told = asr.StateLive
	}
	if st != told {
		s.tellCaptions(st)
	}
}

// captionsFirst tells a pending change before a caption goes out, so that
// the client hears "live" before the first caption that follows a pause.
func (s *Session) captionsFirst() {
	select {
	case <-s.captions.changed:
		s.onCaptionsChanged()
	default:
	}
}

// captionsAfterWelcome follows a welcome: the chain's state when it is not
// live, and on a resume always (the replayed stream may end with a state
// that no longer holds, as when the session moved to another node).
// Nothing without an ASR pool.
func (s *Session) captionsAfterWelcome(resumed bool) {
	if s.cfg.ASR == nil {
		return
	}
	if st := s.captionsNow(); st != asr.StateLive || resumed {
		s.tellCaptions(st)
	}
}

// rewordCaptions resends a state that is not live after the profile's
// language changed, so that its hint reads in the new language.
func (s *Session) rewordCaptions() {
	if st := s.captions.told; st != "" && st != asr.StateLive {
		s.tellCaptions(st)
	}
}

// tellCaptions sends the captions message for st: sequenced and kept for
// resume like every message but welcome. It never changes the level.
func (s *Session) tellCaptions(st asr.State) {
	s.captions.told = st
	s.send(&captionsMsg{head: head{Type: "captions"}, State: string(st), Hint: captionsHint(st, s.profile.Lang)})
}
