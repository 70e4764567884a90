package quota

import (
	"sync"
	"time"
)

// audioCredit is audio this node was granted by Counters and has not used
// yet, per subject, in bytes. Safe for concurrent use.
type audioCredit struct {
	mu     sync.Mutex
	credit map[string]int64
}

func newAudioCredit() *audioCredit { return &audioCredit{credit: map[string]int64{}} }

// use spends n bytes of subject's credit if it has them; otherwise it
// spends nothing and returns how many bytes are lacking.
func (a *audioCredit) use(subject string, n int) (lack int64, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.credit[subject]
	if c >= int64(n) {
		a.credit[subject] = c - int64(n)
		return 0, true
	}
	return int64(n) - c, false
}

// grant adds granted bytes to subject's credit and spends n of them.
func (a *audioCredit) grant(subject string, granted int64, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.credit[subject] = max(0, a.credit[subject]+granted-int64(n))
}

func (a *audioCredit) forget(subject string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.credit, subject)
}

// blockList remembers counts that refused, until their window ends, so
// that the rest of the window is refused on this node without asking
// Counters (audio frames come 50 times a second). Safe for concurrent use.
type blockList struct {
	mu    sync.Mutex
	until map[string]map[string]time.Time // subject → count key → window end
}

func newBlockList() *blockList { return &blockList{until: map[string]map[string]time.Time{}} }

// blockedUntil reports whether key of subject is refused at now, and until when.
func (b *blockList) blockedUntil(subject, key string, now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	until, ok := b.until[subject][key]
	if !ok {
		return time.Time{}, false
	}
	if !now.Before(until) {
		delete(b.until[subject], key)
		if len(b.until[subject]) == 0 {
			delete(b.until, subject)
		}
		return time.Time{}, false
	}
	return until, true
}

func (b *blockList) block(subject, key string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until[subject] == nil {
		b.until[subject] = map[string]time.Time{}
	}
	b.until[subject][key] = until
}

func (b *blockList) forget(subject string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.until, subject)
}
