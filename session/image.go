package session

import (
	"context"
	"encoding/base64"
	"errors"
	"github.com/poise-dev/poise/coach"
	"strings"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/ocr"
)

// Screenshot questions arrive as `image` messages, one part per text
// frame (a frame is at most 64 KiB): base64 of the image's bytes, in
// order. The reader assembles them (imageParts) and checks the image;
// the session answers it (askScreenshot). docs/protocol.md, "Screenshot
// questions".
const (
	maxImageParts    = 8      // parts of one image
	maxImagePartData = 60_000 // base64 characters of one part (45,000 bytes)
	codeBadImage     = "bad_image"
)

// imageParts is the image being received on one connection. Owned by the
// connection's reader.
type imageParts struct {
	id     string
	format string
	text   string
	parts  int // of the image being received; 0: none
	count  int // parts received
	data   []byte
}

// add takes one validated `image` part. It returns the complete image's
// message when this was the last part, a refusal (the image is dropped),
// or nil while more parts are due.
func (p *imageParts) add(c *conn, m inbound) any {
	if m.Part == 0 {
		*p = imageParts{id: m.ID, format: m.Format, parts: m.Parts}
	} else if p.parts == 0 || m.Part != p.nextPart() || m.Parts != p.parts || m.Format != p.format {
		*p = imageParts{}
		return clientBad{c: c, err: refuse(codeBadImage, "image part %d out of order: start again at part 0", m.Part)}
	}
	raw, err := base64.StdEncoding.DecodeString(m.Data)
	if err != nil {
		*p = imageParts{}
		return clientBad{c: c, err: refuse(codeBadImage, "image part %d is not base64", m.Part)}
	}
	if len(p.data)+len(raw) > ocr.MaxBytes {
		*p = imageParts{}
		return clientBad{c: c, err: refuse(codeTooLarge, "image is over %d bytes", ocr.MaxBytes)}
	}
	p.data = append(p.data, raw...)
	p.count++
	if m.Text != nil {
		p.text = *m.Text
	}
	if p.count < p.parts {
		return nil
	}
	img := *p
	*p = imageParts{}
	format, _, _, err := ocr.Check(img.data)
	switch {
	case errors.Is(err, ocr.ErrTooLarge):
		return clientBad{c: c, err: refuse(codeTooLarge, "%s", strings.TrimPrefix(err.Error(), "ocr: "))}
	case err != nil:
		return clientBad{c: c, err: refuse(codeBadImage, "%s", strings.TrimPrefix(err.Error(), "ocr: "))}
	case format != img.format:
		return clientBad{c: c, err: refuse(codeBadImage, "image is %s, not the %s it says", format, img.format)}
	}
	text := img.text
	m.ID, m.Text, m.image = img.id, &text, &tiers.Image{Data: img.data, Format: format}
	return clientMsg{c: c, m: m}
}

func (p *imageParts) nextPart() int { return p.count }

// validateImage checks one `image` part's fields; the bytes are checked
// when the image is complete.
func validateImage(m *inbound) *protocolError {
	switch {
	case m.Data == "":
		return refuse(codeMissingField, "image needs field: data")
	case m.Format != "png" && m.Format != "jpeg":
		return refuse(codeBadImage, "image format must be png or jpeg, got %q", clip(m.Format))
	case m.Parts < 1 || m.Parts > maxImageParts:
		return refuse(codeTooLarge, "image parts must be 1 to %d, got %d", maxImageParts, m.Parts)
	case m.Part < 0 || m.Part >= m.Parts:
		return refuse(codeBadField, "image part must be 0 to %d, got %d", m.Parts-1, m.Part)
	case len(m.Data) > maxImagePartData:
		return refuse(codeTooLarge, "image part data is over %d characters", maxImagePartData)
	}
	if m.Text != nil {
		if len(*m.Text) > maxQuestionBytes {
			return refuse(codeTooLarge, "image text is over %d bytes", maxQuestionBytes)
		}
		if err := checkText("image text", *m.Text); err != nil {
			return err
		}
	}
	if m.ID == "" {
		return nil
	}
	return checkID("image id", m.ID, maxIDBytes)
}

// askScreenshot answers a complete screenshot question like a typed one.
func (s *Session) askScreenshot(ctx context.Context, m inbound) {
	level := s.questionLevel()
	s.askWith(ctx, s.questionID(m.ID), strings.TrimSpace(*m.Text), level, askOptions{img: m.image})
}

// screenshotCoachText is what a screenshot question is coached from
// before its text is read (and when it cannot be): a coding problem.
const screenshotCoachText = "How would you solve this coding problem?"

// coachText is the text the question's coach card is chosen for.
func (q *question) coachText() string {
	switch {
	case !q.shot:
		return q.text
	case q.read != "":
		return q.read
	case q.text != "":
		return q.text
	}
	return screenshotCoachText
}

// startQuestion is the `question` of a question's answer_start: a
// screenshot's is the text OCR read, if any.
func (q *question) startQuestion() string {
	if q.shot {
		return joinRead(q.text, q.read)
	}
	return q.text
}

func joinRead(typed, read string) string {
	if typed == "" || read == "" {
		return typed + read
	}
	return typed + "\n\n" + read
}

// onRead sends the text OCR read from a screenshot question's image, so
// that the candidate sees it (and may correct it) while it is answered.
func (s *Session) onRead(q *question, text string) {
	q.read = text
	q.typ = coach.Classify(q.coachText(), s.profile.Lang) // the card follows the text it is chosen for
	s.send(&screenshotTextMsg{head: head{Type: "screenshot_text"}, ID: q.id, Text: text})
}
