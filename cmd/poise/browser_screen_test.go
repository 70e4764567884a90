package main

import "testing"

// TestBrowserSecondScreen drives the copilot page at phone, tablet and
// laptop sizes, its status lines and auto-answer switch, and the ops page
// with the server gone, in headless Chromium against the real binary.
func TestBrowserSecondScreen(t *testing.T) {
	t.Parallel()
	env := newBrowserEnv(t, micWAV)
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		plain := env.startPoise(t, "")
		t.Run("layout", func(t *testing.T) { testSecondScreenLayout(t, env, plain) })
		t.Run("status language and save", func(t *testing.T) { testStatusLanguageAndSave(t, env, plain) })
	})
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		demo := env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig))
		t.Run("superseded mark", func(t *testing.T) { testSupersededMark(t, env, demo) })
		t.Run("audio and auto-answer", func(t *testing.T) { testAudioAndAutoAnswer(t, env, demo) })
	})
	t.Run("ask again and fade", func(t *testing.T) { t.Parallel(); testAskAgainAndFade(t, env) })
	t.Run("ops stale", func(t *testing.T) { t.Parallel(); testOpsStale(t, env) })
}
