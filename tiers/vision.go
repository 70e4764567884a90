package tiers

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/poise-dev/poise/tiers/upstream"
)

// maxTokensScreenshot bounds a vision answer: an approach with its code
// or a design outline is longer than a spoken answer.
const maxTokensScreenshot = 700

// visionUsable reports whether the vision model may be asked: it is
// configured, the question may use L1, and its circuit is closed (unless
// the request retries every level).
func (a *answering) visionUsable() bool {
	v := a.e.vision
	if v == nil || a.req.Level > L1 {
		return false
	}
	return a.e.health == nil || a.req.Retry || a.e.health.BackendUp(v.Name())
}

// runVision asks the vision model under its first-token budget and
// streams its answer, with Via ViaVision; on its first token stopRead
// cancels the OCR read. Meanwhile it takes the OCR result from read, if
// it comes (sent as EventRead), and returns it; nil when it did not come.
// The stream's goroutine has returned when runVision returns.
func (a *answering) runVision(ctx context.Context, read <-chan readResult, stopRead func()) *readResult {
	src := a.e.vision
	c := call{messages: BuildVisionPrompt(a.req), model: src.Endpoint().Model,
		firstToken: ms(a.e.cfg.L1.Vision.FirstTokenMS), maxTokens: maxTokensScreenshot, pacer: a.e.pacer}
	spent, ok := a.reserve(ctx, src, &c)
	if !ok {
		return nil
	}
	vctx, cancel := context.WithCancel(ctx)
	tokens := make(chan string) // unbuffered: the stream gives up when vctx ends
	done := make(chan result, 1)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() {
		res := stream(vctx, src, c, func(tok string) bool {
			select {
			case tokens <- tok:
				return true
			case <-vctx.Done():
				return false
			}
		})
		spent(&res)
		done <- res
	})
	var got *readResult
	for {
		select {
		case tok := <-tokens:
			if !a.answered {
				a.via = ViaVision
				a.begin(L1, src.Name(), "")
				stopRead()
			}
			a.delta(tok)
		case res := <-done:
			a.endVision(ctx, src, res)
			return got
		case r := <-read:
			got, read = &r, nil
			a.onRead(r)
		case <-ctx.Done():
			return got
		}
	}
}

// endVision accounts the vision request and ends a started answer. The
// vision model is a backend of no level: its failures open its own
// circuit, they take no level down.
func (a *answering) endVision(ctx context.Context, src *upstream.Client, res result) {
	name := src.Name()
	if res.err == nil {
		a.e.m.request(name, upstream.ClassNone)
		if a.e.health != nil {
			a.e.health.ReportSuccess(name)
		}
	} else {
		a.e.m.request(name, res.err.Class)
		a.e.logFailure(a.req, name, res.err)
		a.e.reportResult(NoLevel, name, res.err.Class)
	}
	if !res.started {
		return
	}
	switch {
	case res.err == nil && res.finish != upstream.FinishLength:
		a.end(ReasonDone)
	case res.err != nil && (res.err.Class == upstream.ClassCanceled || ctx.Err() != nil):
		// The caller cancelled: no End, see Answer.
	default:
		a.end(ReasonCut) // our token limit, a refusal part-way, or a broken stream
	}
}

// BuildVisionPrompt returns the chat messages of a screenshot question:
// the coding and design shape of the system message, then the recent
// transcript, what the candidate typed, and the image as an image_url
// part (a data URL).
func BuildVisionPrompt(req Request) []openai.ChatCompletionMessageParamUnion {
	lang := questionLang(req.Question+req.Transcript, req.Profile.Lang)
	var b strings.Builder
	if t := clip(strings.TrimSpace(req.Transcript), transcriptRunesFull, true); t != "" {
		b.WriteString("Recent conversation (oldest first):\n")
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	b.WriteString("The interviewer's question is on this screenshot.")
	if q := strings.TrimSpace(req.Question); q != "" {
		b.WriteString(" The candidate adds: ")
		b.WriteString(clip(q, questionRunes, false))
	}
	url := "data:image/" + req.Image.Format + ";base64," + base64.StdEncoding.EncodeToString(req.Image.Data)
	return []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(visionSystemPrompt(req.Profile, lang)),
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart(b.String()),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url, Detail: "high"}),
		}),
	}
}

func visionSystemPrompt(p Profile, lang string) string {
	var b strings.Builder
	b.WriteString("You are a discreet interview copilot for a ")
	b.WriteString(orText(p.Seniority, "mid"))
	b.WriteString("-level ")
	b.WriteString(orText(p.Role, "software engineer"))
	b.WriteString(" candidate in a live interview. The screenshot shows a coding problem or a system design question. ")
	b.WriteString("Read it carefully. For a coding problem: restate it in one line, give the approach with its time and space complexity, then short, correct code. ")
	b.WriteString("For a design question: the key requirements, the main components and data flow, and the one or two trade-offs to discuss. ")
	b.WriteString("No preamble; be brief enough to read at a glance. ")
	if lang == "zh" {
		b.WriteString("Answer in Chinese (code stays code).")
	} else {
		b.WriteString("Answer in English.")
	}
	return b.String()
}
