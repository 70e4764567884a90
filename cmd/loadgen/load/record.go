package load

import (
	"strings"
	"sync"
	"time"

	"github.com/poise-dev/poise/coach"
)

// recorder is one session's record. The session's reader and its driver
// both write to it; mu guards every field.
type recorder struct {
	mu sync.Mutex

	lastSeq        uint64
	lost, doubled  int
	level          string // current level; "" before the first welcome
	offline        bool
	levels         []levelChange
	questions      []*question
	byID           map[string]*question
	spokenWait     []*question // spoken questions not yet tied to a server id, oldest first
	utts           []sentUtt   // utterances whose end was sent and that have no final yet, oldest first
	captions       []caption
	extraFinals    int // finals with no utterance waiting
	unattributed   int // answers or coach cards for ids we never asked
	errors         []errorRec
	reconnects     []reconnect
	sessionsLost   int // resumes refused: a new session had to be started
	interruptedUtt int // utterances whose final never came because the connection died
}

type question struct {
	id, text   string
	spoken     bool
	asked      time.Time
	uttEnd     time.Time // spoken: when the utterance's last frame was sent (zero if unknown)
	first      time.Time // first useful content; zero if none
	firstKind  string
	answer     time.Time // first answer_start; zero if none
	level      string    // of the answer_start (L1, L2, L3)
	source     string
	coached    bool
	end        string // answer_end reason
	superseded bool   // a newer question was asked before any content came
}

type sentUtt struct {
	index int
	end   time.Time
}

type caption struct {
	utt     int
	latency time.Duration
	source  string
	at      time.Time
}

type levelChange struct {
	at            time.Time
	from, to, why string
}

type errorRec struct {
	at            time.Time
	code, message string
}

type reconnect struct {
	lost, back time.Time // back is zero if the session never came back
	resumed    bool
}

func newRecorder() *recorder { return &recorder{byID: map[string]*question{}} }

// welcome records the session's opening or resumption. A resume that
// started a new session instead loses the old one.
func (r *recorder) welcome(m message, at time.Time, resuming bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if resuming && !m.Resumed {
		r.sessionsLost++
		r.lastSeq = 0
	}
	if r.level != "" && r.level != m.Level {
		r.levels = append(r.levels, levelChange{at: at, from: r.level, to: m.Level, why: "welcome"})
	}
	r.level = m.Level
	r.offline = false
	if n := len(r.reconnects); n > 0 && r.reconnects[n-1].back.IsZero() {
		r.reconnects[n-1].back = at
		r.reconnects[n-1].resumed = m.Resumed
	}
}

// lostConnection marks the session offline until the next welcome; the
// utterances in flight will get no final.
func (r *recorder) lostConnection(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offline = true
	r.reconnects = append(r.reconnects, reconnect{lost: at})
	r.interruptedUtt += len(r.utts)
	r.utts = nil
}

// state is the session's level for the timeline.
func (r *recorder) state() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.offline {
		return levelOffline
	}
	return r.level
}

// ask records a typed question sent at at.
func (r *recorder) ask(id, text string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addQuestion(&question{id: id, text: text, asked: at})
}

// askOffline records a question the candidate heard while the session had
// no connection: the browser shows its own coach card at once.
func (r *recorder) askOffline(id, text string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addQuestion(&question{id: id, text: text, asked: at, first: at, firstKind: kindOffline})
}

func (r *recorder) addQuestion(q *question) {
	r.questions = append(r.questions, q)
	if q.id != "" {
		r.byID[q.id] = q
	}
}

// uttEnded records that the last frame of utterance index was sent.
func (r *recorder) uttEnded(index int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.utts = append(r.utts, sentUtt{index: index, end: at})
}

// onMessage records one server message that arrived at at. autoAnswer
// says whether the server answers spoken questions for this session.
func (r *recorder) onMessage(m message, at time.Time, autoAnswer bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkSeq(m.Seq)
	switch m.Type {
	case "level":
		r.levels = append(r.levels, levelChange{at: at, from: m.From, to: m.Level, why: m.Reason})
		r.level = m.Level
	case "caption":
		if m.Final {
			r.onFinal(m, at, autoAnswer)
		}
	case "answer_start":
		if q := r.questionFor(m.ID); q != nil {
			if q.first.IsZero() {
				q.first, q.firstKind = at, kindAnswer
			}
			if q.answer.IsZero() {
				q.answer, q.level, q.source = at, m.Level, m.Source
			}
		}
	case "coach":
		if q := r.questionFor(m.ID); q != nil {
			q.coached = true
			if q.first.IsZero() {
				q.first, q.firstKind = at, kindCoach
			}
		}
	case "answer_end":
		if q := r.byID[m.ID]; q != nil {
			q.end = m.Reason
		}
	case "error":
		r.errors = append(r.errors, errorRec{at: at, code: m.Code, message: m.Message})
	}
}

// onSeq records a message that only counts by its seq (an answer_delta).
func (r *recorder) onSeq(seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkSeq(seq)
}

// checkSeq counts gaps (lost messages) and repeats (doubled ones).
func (r *recorder) checkSeq(seq uint64) {
	switch {
	case seq == r.lastSeq+1:
		r.lastSeq = seq
	case seq <= r.lastSeq:
		r.doubled++
	default:
		r.lost += int(seq - r.lastSeq - 1)
		r.lastSeq = seq
	}
}

// onFinal ties a final caption to the oldest utterance whose end was sent,
// and records a spoken question when the server will answer it.
func (r *recorder) onFinal(m message, at time.Time, autoAnswer bool) {
	var uttEnd time.Time
	if len(r.utts) == 0 {
		r.extraFinals++
	} else {
		u := r.utts[0]
		r.utts = r.utts[1:]
		uttEnd = u.end
		r.captions = append(r.captions, caption{utt: u.index, latency: at.Sub(u.end), source: m.Source, at: at})
	}
	text := strings.TrimSpace(m.Text)
	if autoAnswer && text != "" && coach.Asks(text) {
		q := &question{text: text, spoken: true, asked: at, uttEnd: uttEnd}
		r.addQuestion(q)
		r.spokenWait = append(r.spokenWait, q)
	}
}

// questionFor finds the question that content with id answers: a typed
// one by its id, else the oldest spoken question still waiting for its
// server-assigned id.
func (r *recorder) questionFor(id string) *question {
	if q := r.byID[id]; q != nil {
		return q
	}
	// The stream is ordered: content for a spoken question always comes
	// after its final caption and before the next one's, so the oldest
	// waiting spoken question is the one whose content this is unless it
	// was superseded; a superseded one never gets content.
	for len(r.spokenWait) > 0 {
		q := r.spokenWait[0]
		r.spokenWait = r.spokenWait[1:]
		if q.id == "" && q.first.IsZero() && !r.supersededLocked(q) {
			q.id = id
			r.byID[id] = q
			return q
		}
	}
	r.unattributed++
	return nil
}

// supersededLocked reports whether a question was asked after q.
func (r *recorder) supersededLocked(q *question) bool {
	for i := len(r.questions) - 1; i >= 0; i-- {
		if r.questions[i] == q {
			return false
		}
		if r.questions[i].firstKind != kindOffline {
			return true
		}
	}
	return false
}

// seq is the newest seq received, for a resume.
func (r *recorder) seq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSeq
}
