package main

import (
	"path/filepath"
	"testing"
)

// TestBrowserSecondScreen drives the copilot page at phone, tablet and
// laptop sizes, its status lines and auto-answer switch, and the ops page
// with the server gone, in headless Chromium against the real binary.
func TestBrowserSecondScreen(t *testing.T) {
	wav, err := filepath.Abs(micWAV)
	if err != nil {
		t.Fatal(err)
	}
	env := newBrowserEnv(t, wav)
	plain := env.startPoise(t, "")
	demo := env.startPoise(t, "", "-demo", "-config", writeFile(t, "demo.yaml", demoConfig))
	t.Run("layout", func(t *testing.T) { testSecondScreenLayout(t, env, plain) })
	t.Run("status language and save", func(t *testing.T) { testStatusLanguageAndSave(t, env, plain) })
	t.Run("superseded mark", func(t *testing.T) { testSupersededMark(t, env, demo) })
	t.Run("ask again and fade", func(t *testing.T) { testAskAgainAndFade(t, env) })
	t.Run("audio and auto-answer", func(t *testing.T) { testAudioAndAutoAnswer(t, env, demo) })
	t.Run("ops stale", func(t *testing.T) { testOpsStale(t, env) })
}
