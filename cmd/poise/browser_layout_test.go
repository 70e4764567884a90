package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenSizes are the second-screen sizes the copilot page is designed
// for: a phone, a tablet and a small laptop.
var screenSizes = []struct {
	w, h  int64
	touch bool
}{{390, 844, true}, {768, 1024, true}, {1280, 720, false}}

// layoutView is what the layout test measures in the page.
type layoutView struct {
	InnerW, InnerH, ScrollW       float64
	AnswerTop, AskTop, AskBottom  float64
	ChipShown                     bool
	ChipH, ChipLineH              float64
	HintsShown                    bool
	Placeholder                   string
	CaptionsShown, CaptionsToggle bool
	HistoryTop, CurrentBottom     float64
	OverflowingBars               []string
}

const layoutJS = `(() => {
  const r = (s) => document.querySelector(s)?.getBoundingClientRect() || { top: -1, bottom: -1, height: 0 };
  const shown = (s) => { const e = document.querySelector(s); return !!e && e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden'; };
  const ct = document.getElementById('chip-text');
  return {
    InnerW: innerWidth, InnerH: innerHeight, ScrollW: document.documentElement.scrollWidth,
    AnswerTop: r('#current .answer').top, AskTop: r('#ask').top, AskBottom: r('#ask').bottom,
    ChipShown: shown('#chip'), ChipH: ct.getBoundingClientRect().height, ChipLineH: parseFloat(getComputedStyle(ct).lineHeight),
    HintsShown: shown('.shortcuts'), Placeholder: document.getElementById('ask').placeholder,
    CaptionsShown: shown('#captions-panel'), CaptionsToggle: shown('#btn-captions'),
    HistoryTop: r('#history li').top, CurrentBottom: r('#current').bottom,
    OverflowingBars: [...document.querySelectorAll('.bar, .controls, .dock, .foot, main')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.className + ' ' + e.scrollWidth + '>' + e.clientWidth),
  };
})()`

// testSecondScreenLayout: at each size, in both languages, the newest
// answer and the question box are in the first viewport, nothing
// overflows sideways, the chip is one line, the captions are one tap away
// and the history is below; phones and tablets show no keyboard hints.
// The profile page's Start button is in view too.
func testSecondScreenLayout(t *testing.T, env *browserEnv, s *poiseServer) {
	for _, size := range screenSizes {
		for _, c := range []typedCase{enCase, zhCase} {
			name := fmt.Sprintf("%dx%d-%s", size.w, size.h, c.lang)
			t.Run(name, func(t *testing.T) {
				tb := env.newTab(t)
				opts := []chromedp.EmulateViewportOption{}
				if size.touch {
					opts = append(opts, chromedp.EmulateTouch, chromedp.EmulateMobile)
				}
				tb.do(chromedp.EmulateViewport(size.w, size.h, opts...))
				tb.do(chromedp.Navigate(s.url("/?lang=" + c.lang)))
				tb.waitFor("the profile form", `document.body.dataset.view === 'profile' && document.body.dataset.scripts === 'loaded'`)
				start := js[[]float64](tb, `(() => { const r = document.getElementById('btn-start').getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; })()`)
				if start[0] < 0 || start[1] > start[2] {
					t.Errorf("the Start button spans %v–%v px, outside the %v px viewport", start[0], start[1], start[2])
				}
				tb.shot("layout-profile-" + name)
				tb.fillProfileAndStart(profile{lang: c.lang, seniority: c.seniority, role: "Backend engineer"})
				tb.ask(c.statement)
				tb.waitFor("the coach card", `!!document.querySelector('#current .coach')`)
				tb.ask(c.bankQuestion)
				tb.waitFor("the template answer", `document.querySelector('#current .answer')?.dataset.reason === 'done'`)
				v := js[layoutView](tb, layoutJS)
				if v.ScrollW > v.InnerW {
					t.Errorf("the page is %v px wide in a %v px viewport", v.ScrollW, v.InnerW)
				}
				if len(v.OverflowingBars) > 0 {
					t.Errorf("overflowing sideways: %q", v.OverflowingBars)
				}
				if v.AnswerTop < 0 || v.AnswerTop > v.InnerH-80 {
					t.Errorf("the answer starts at %v px of a %v px viewport", v.AnswerTop, v.InnerH)
				}
				if v.AskTop < 0 || v.AskBottom > v.InnerH {
					t.Errorf("the question box spans %v–%v px of a %v px viewport", v.AskTop, v.AskBottom, v.InnerH)
				}
				if !v.ChipShown || v.ChipH > v.ChipLineH*1.2 {
					t.Errorf("chip shown %v, %v px high for a %v px line: want one line", v.ChipShown, v.ChipH, v.ChipLineH)
				}
				if v.HistoryTop < v.CurrentBottom {
					t.Errorf("the history starts at %v px, above the end of the current turn (%v px)", v.HistoryTop, v.CurrentBottom)
				}
				tb.shot("layout-" + name)
				if !size.touch {
					if !v.CaptionsShown {
						t.Error("the captions are not beside the answer on a wide screen")
					}
					return
				}
				if v.HintsShown || containsAny(v.Placeholder, "/", "Enter", "回车") {
					t.Errorf("keyboard hints on a touch screen: shortcuts %v, placeholder %q", v.HintsShown, v.Placeholder)
				}
				if v.CaptionsShown || !v.CaptionsToggle {
					t.Fatalf("narrow screen: captions shown %v, toggle shown %v; want them behind the toggle", v.CaptionsShown, v.CaptionsToggle)
				}
				tb.do(chromedp.Click(chromedp.ID("btn-captions")))
				tb.waitFor("the captions after one tap", `(() => { const r = document.getElementById('captions-panel').getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.top < innerHeight / 2; })()`)
				tb.shot("layout-captions-" + name)
				tb.do(chromedp.Click(chromedp.ID("btn-captions")))
				tb.waitFor("the answer again", `document.querySelector('#current .answer')?.getBoundingClientRect().height > 0`)
				tb.requireClean()
			})
		}
	}
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(x string) bool { return strings.Contains(s, x) })
}
