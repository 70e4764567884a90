package main

import "testing"

// TestBrowserSecondScreen drives the copilot page at phone, tablet and
// laptop sizes, its status lines and auto-answer switch, and the ops page
// with the server gone, in headless Chromium against the real binary.
func TestBrowserSecondScreen(t *testing.T) {
	env := newBrowserEnv(t, "")
	plain := env.startPoise(t, "")
	t.Run("layout", func(t *testing.T) { testSecondScreenLayout(t, env, plain) })
}
