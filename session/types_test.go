package session

import (
	"strings"
	"testing"

	"github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/tiers"
)

// typedQuestion is one question of a type, in one language, and what its
// card must hold at L3 and at L4.
type typedQuestion struct {
	lang, text string
	typ        coach.Type
	// template is the template family L3 must answer from ("design-",
	// "concept-", a behavioural category), or "" when L3 must leave the
	// question to the coach.
	template string
	// coach is a part of the coach card's framework (name or steps) at L4,
	// and at L3 when no template answers.
	coach     string
	countdown bool // the coach card counts down
}

// typedQuestions are the four types the cards are judged on, in zh and
// en, plus questions no template answers.
var typedQuestions = []typedQuestion{
	{"en", "So, um, how would you design a rate limiter for our public API?", coach.Design, "design-", "Requirements", true},
	{"zh", "嗯，那你讲讲怎么设计一个限流系统吧", coach.Design, "design-", "需求", true},
	{"en", "Okay, what's the difference between TCP and UDP?", coach.Concept, "concept-", "Define", true},
	{"zh", "TCP 和 UDP 有什么区别？", coach.Concept, "concept-", "定义", true},
	{"en", "Sorry, can you hear me okay?", coach.Smalltalk, "", "I can hear you well", false},
	{"zh", "你那边能听清楚吗？", coach.Smalltalk, "", "听得很清楚", false},
	{"en", "Tell me about a time you disagreed with your manager.", coach.Behavioural, "conflict-", "STAR", true},
	{"zh", "讲讲你和领导意见不一致的一次经历。", coach.Behavioural, "conflict-", "STAR", true},
	// A greeting or a check-in first: the turn is typed by what it asks.
	{"en", "Hi, nice to meet you. Let's start, tell me about yourself.", coach.Behavioural, "intro-", "Now", true},
	{"zh", "喂 能听到吗 好 那我们先聊技术 进程和线程有什么区别", coach.Concept, "concept-", "定义", true},
	// No template answers these: they get the coach of their type, never
	// another question's template.
	{"en", "How would you design an elevator control system for a tall building?", coach.Design, "", "Requirements", true},
	{"zh", "如何设计一个电梯调度系统？", coach.Design, "", "需求", true},
	// A technical question that shares only its frame with a template.
	{"zh", "IPv4 和 IPv6 有什么区别？", coach.Concept, "", "定义", true},
}

// cardProfile has a résumé, so that placeholders are filled.
var cardProfile = map[string]any{"seniority": "senior", "role": "backend engineer",
	"resume": "Acme Pay, 2019–2024: led the ledger rewrite.\nProject: Ledger v2"}

// TestCardsByTypeAtL3: with the vendors and the local model down, each
// question gets the content of its type over a real WebSocket: a design
// or concept question a technical template with its matched question and
// outline first, a behavioural question a behavioural template, a check-in
// the check-in coach card with no countdown, and a question no template
// answers the coach of its type.
func TestCardsByTypeAtL3(t *testing.T) {
	st := newStack(t, stackOptions{})
	down := sim.Fault{Status: 503, HealthDown: true}
	for _, s := range []*sim.Server{st.a, st.b, st.local} {
		s.SetFault(sim.AnyModel, down)
	}
	for _, lang := range []string{"en", "zh"} {
		c, _ := st.start(t, lang)
		p := map[string]any{"lang": lang}
		for k, v := range cardProfile {
			p[k] = v
		}
		c.send(map[string]any{"type": "profile", "profile": p})
		for _, q := range typedQuestions {
			var level msg
			first, text, _ := c.answerOrLevel(q.text, &level)
			if first.str("question_type") != string(q.typ) {
				t.Errorf("%s session, %q: question_type %q, want %s", lang, q.text, first.str("question_type"), q.typ)
			}
			if q.template == "" {
				checkCoach(t, lang, q, first)
				continue
			}
			if first.str("type") != "answer_start" || first.str("level") != "L3" || !strings.HasPrefix(first.str("source"), q.template) {
				t.Errorf("%s session, %q: got %v, want an L3 %s* template", lang, q.text, first, q.template)
				continue
			}
			outline, _ := first["outline"].([]any)
			if first.str("matched") == "" || len(outline) < 3 || len(outline) > 5 || text == "" {
				t.Errorf("%s session, %q: matched %q, %d outline lines, %d bytes of answer; want the question, 3–5 lines and the answer",
					lang, q.text, first.str("matched"), len(outline), len(text))
			}
			if strings.Contains(text, "[company]") || strings.Contains(text, "[公司名]") {
				t.Errorf("%s session, %q: a company placeholder the résumé fills is left: %s", lang, q.text, text)
			}
		}
	}
}

// TestCardsByTypeAtL4: with the templates down too, every question gets
// the coach card of its type.
func TestCardsByTypeAtL4(t *testing.T) {
	st := newStack(t, stackOptions{})
	down := sim.Fault{Status: 503, HealthDown: true}
	for _, s := range []*sim.Server{st.a, st.b, st.local} {
		s.SetFault(sim.AnyModel, down)
	}
	st.tpl.broken.Store(true)
	for _, lang := range []string{"en", "zh"} {
		c, _ := st.start(t, lang)
		for _, q := range typedQuestions {
			var level msg
			first, _, _ := c.answerOrLevel(q.text, &level)
			if first.str("question_type") != string(q.typ) {
				t.Errorf("%s session, %q: question_type %q, want %s", lang, q.text, first.str("question_type"), q.typ)
			}
			checkCoach(t, lang, q, first)
		}
	}
	if st.health.Supported() != tiers.L4 {
		t.Errorf("the health center supports %s, want L4", st.health.Supported())
	}
}

// checkCoach fails unless first is the coach card of q's type in lang.
func checkCoach(t *testing.T, lang string, q typedQuestion, first msg) {
	t.Helper()
	if first.str("type") != "coach" {
		t.Errorf("%s session, %q: got %v, want the coach", lang, q.text, first)
		return
	}
	fw, _ := first["framework"].(map[string]any)
	shown, _ := fw["name"].(string)
	steps, _ := fw["steps"].([]any)
	for _, s := range steps {
		shown += " " + s.(string)
	}
	want := q.coach
	if lang == "en" && hasHan(want) || lang == "zh" && !hasHan(want) {
		want = coachWording[want] // the card is worded in the session's language
	}
	if want == "" {
		t.Fatalf("coachWording has no %s wording of %q", lang, q.coach)
	}
	if !strings.Contains(shown, want) {
		t.Errorf("%s session, %q: coach card %q, want %q", lang, q.text, shown, want)
	}
	if n, _ := first["countdown_s"].(float64); (n > 0) != q.countdown {
		t.Errorf("%s session, %q: countdown_s %v", lang, q.text, first["countdown_s"])
	}
}

// coachWording maps the wording checked in one language to the other's.
var coachWording = map[string]string{
	"Requirements": "需求", "需求": "Requirements", "Define": "定义", "定义": "Define",
	"I can hear you well": "听得很清楚", "听得很清楚": "I can hear you well", "STAR": "STAR",
	"Now": "现在", "现在": "Now",
}

func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
}
