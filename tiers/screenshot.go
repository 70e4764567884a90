package tiers

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Reader reads the text of a screenshot: Tier O. lang is the profile's
// ("zh" reads Chinese and English). It blocks until the text, a failure
// or ctx's end. tiers/ocr's Pool is the production Reader.
type Reader interface {
	Read(ctx context.Context, img []byte, lang string) (string, error)
}

// Option adjusts NewEngine.
type Option func(*Engine)

// WithReader gives the engine OCR for screenshot questions (Tier O);
// without it a screenshot is answered by the vision model alone.
func WithReader(r Reader) Option { return func(e *Engine) { e.reader = r } }

// errNoReader is the read result when the engine has no OCR.
var errNoReader = errors.New("tiers: no OCR configured")

// readResult is the end of one OCR read.
type readResult struct {
	text string
	err  error
}

// answerScreenshot answers a screenshot question: OCR starts at once in
// its own goroutine, the vision model is asked meanwhile (vision.go), and
// when the vision model gives no first token the OCR text is answered as
// a typed question through the levels, with Via ViaOCR. The OCR read is
// cancelled as soon as the vision model answers. No goroutine outlives
// the call.
func (e *Engine) answerScreenshot(ctx context.Context, req Request, emit func(Event)) *answering {
	a := e.newAnswering(req, emit)
	rctx, stopRead := context.WithCancel(ctx)
	read := make(chan readResult, 1) // the reader never blocks on it
	var wg sync.WaitGroup
	defer func() { stopRead(); wg.Wait() }()
	if e.reader != nil {
		wg.Go(func() {
			text, err := e.reader.Read(rctx, req.Image.Data, req.Profile.Lang)
			read <- readResult{text: strings.TrimSpace(text), err: err}
		})
	} else {
		read <- readResult{err: errNoReader}
	}
	var got *readResult
	if a.visionUsable() {
		got = a.runVision(ctx, read, stopRead)
		if a.answered || a.refused || ctx.Err() != nil {
			return a
		}
	}
	if got == nil {
		select {
		case r := <-read:
			got = &r
			a.onRead(r)
		case <-ctx.Done():
			return a
		}
	}
	if got.text == "" {
		return a // nothing to answer from: the caller shows the coach
	}
	a.req.Question = joinQuestion(req.Question, got.text)
	a.req.Image = nil
	a.via = ViaOCR
	a.levels(ctx)
	return a
}

// onRead handles the end of the OCR read: its text goes out as
// EventRead (unless the vision model already answered), a failure is
// logged.
func (a *answering) onRead(r readResult) {
	switch {
	case r.err != nil && a.ctxDone(r.err):
	case r.err != nil:
		a.e.log.Info().Err(r.err).Str("question", a.req.ID).Msg("tiers: screenshot OCR failed")
	case r.text == "":
		a.e.log.Info().Str("question", a.req.ID).Msg("tiers: screenshot OCR found no text")
	case !a.answered:
		a.emit(Event{Kind: EventRead, Text: r.text})
	}
}

// ctxDone reports a read that ended because we cancelled it.
func (a *answering) ctxDone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && a.answered
}

// joinQuestion puts what the candidate typed with a screenshot before
// its text.
func joinQuestion(typed, read string) string {
	if typed = strings.TrimSpace(typed); typed == "" {
		return read
	}
	return typed + "\n\n" + read
}
