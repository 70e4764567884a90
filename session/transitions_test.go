package session

import (
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers"
)

func checkLevel(t *testing.T, m msg, from, to, reason string, chip *Chip) {
	t.Helper()
	if m.str("type") != "level" || m.str("from") != from || m.str("level") != to || m.str("reason") != reason {
		t.Fatalf("level message = %v, want %s → %s (%s)", m, from, to, reason)
	}
	got, _ := m["chip"].(map[string]any)
	switch {
	case chip == nil && m["chip"] != nil:
		t.Fatalf("chip = %v, want null", m["chip"])
	case chip != nil && (got["text"] != chip.Text || got["hint"] != chip.Hint):
		t.Fatalf("chip = %v, want %+v", m["chip"], *chip)
	}
	if m.seq() == 0 {
		t.Fatalf("level message has no seq: %v", m)
	}
}

// TestHealthTransitions drives every health-driven transition through a
// real WebSocket and checks the level message, its chip and its reason.
func TestHealthTransitions(t *testing.T) {
	cases := []struct {
		name       string
		start      tiers.Level
		supported  tiers.Level
		sig        tiers.Signal
		lang       string
		from, to   string
		reason     string
		wantChipAt tiers.Level
	}{
		{"vendor_all_down", tiers.L1, tiers.L2, tiers.Signal{Event: evVendorAllDown, Level: tiers.L1}, "en", "L1", "L2", evVendorAllDown, tiers.L2},
		{"local_failing", tiers.L2, tiers.L3, tiers.Signal{Event: evLocalFailing, Level: tiers.L2}, "zh", "L2", "L3", evLocalFailing, tiers.L3},
		{"templates_failing", tiers.L3, tiers.L4, tiers.Signal{Event: evTemplatesFailing, Level: tiers.L3}, "en", "L3", "L4", evTemplatesFailing, tiers.L4},
		{"recovered L2→L1", tiers.L2, tiers.L1, tiers.Signal{Event: evRecovered, Level: tiers.L1}, "en", "L2", "L1", evRecovered, tiers.L1},
		{"recovered L3→L2", tiers.L3, tiers.L2, tiers.Signal{Event: evRecovered, Level: tiers.L2}, "zh", "L3", "L2", evRecovered, tiers.L2},
		{"recovered L4→L3", tiers.L4, tiers.L3, tiers.Signal{Event: evRecovered, Level: tiers.L3}, "en", "L4", "L3", evRecovered, tiers.L3},
		{"recovered over a down level, two at once", tiers.L3, tiers.L1, tiers.Signal{Event: evRecovered, Level: tiers.L1}, "en", "L3", "L1", evRecovered, tiers.L1},
		{"recovered three at once", tiers.L4, tiers.L1, tiers.Signal{Event: evRecovered, Level: tiers.L1}, "zh", "L4", "L1", evRecovered, tiers.L1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHealth(tc.start)
			ts := newTestServer(t, Config{Health: h})
			c, w := ts.start(t, tc.lang)
			if w.str("level") != tc.start.String() {
				t.Fatalf("welcome level = %v, want %v", w["level"], tc.start)
			}
			h.set(tc.supported, tc.sig)
			checkLevel(t, c.readType("level"), tc.from, tc.to, tc.reason, chipFor(tc.wantChipAt, tc.lang))
		})
	}
}

// TestCascadeDown: when L1 and L2 are both down, a session at L1 steps
// through both down events.
func TestCascadeDown(t *testing.T) {
	h := newFakeHealth(tiers.L1)
	ts := newTestServer(t, Config{Health: h})
	c, _ := ts.start(t, "en")
	h.set(tiers.L3, tiers.Signal{Event: evVendorAllDown, Level: tiers.L1})
	checkLevel(t, c.readType("level"), "L1", "L2", evVendorAllDown, chipFor(tiers.L2, "en"))
	checkLevel(t, c.readType("level"), "L2", "L3", evLocalFailing, chipFor(tiers.L3, "en"))
}

func TestResetAI(t *testing.T) {
	h := newFakeHealth(tiers.L3)
	ts := newTestServer(t, Config{Health: h})
	c, w := ts.start(t, "zh")
	if w.str("level") != "L3" {
		t.Fatalf("welcome = %v, want L3", w)
	}
	if chip, _ := w["chip"].(map[string]any); chip["text"] != "📋 模板模式" {
		t.Fatalf("welcome chip = %v, want the zh template chip", w["chip"])
	}
	c.send(map[string]any{"type": "reset_ai"})
	checkLevel(t, c.readType("level"), "L3", "L1", evReset, nil)
}

// TestHeartbeatLostAndRestore: a silent client drops to L4; its next
// message restores the level the health state supports.
func TestHeartbeatLostAndRestore(t *testing.T) {
	h := newFakeHealth(tiers.L2)
	ts := newTestServer(t, Config{Health: h, HeartbeatTimeout: 50 * time.Millisecond})
	c, _ := ts.start(t, "en")
	checkLevel(t, c.readType("level"), "L2", "L4", evHeartbeatLost, chipFor(tiers.L4, "en"))
	h.set(tiers.L1, tiers.Signal{Event: evRecovered, Level: tiers.L1})
	c.send(map[string]any{"type": "ping", "t": 1})
	checkLevel(t, c.readType("level"), "L4", "L1", evRestore, nil)
}

// TestNewSessionStartsAtSupportedLevel: a known outage is not paid again.
func TestNewSessionStartsAtSupportedLevel(t *testing.T) {
	h := newFakeHealth(tiers.L2)
	ts := newTestServer(t, Config{Health: h})
	_, w := ts.start(t, "en")
	if w.str("level") != "L2" {
		t.Fatalf("welcome level = %v, want L2", w["level"])
	}
	if chip, _ := w["chip"].(map[string]any); chip["text"] != "⚡ Lite mode" {
		t.Fatalf("welcome chip = %v", w["chip"])
	}
}
