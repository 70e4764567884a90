package ocrtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Need stops a test that needs Tesseract with its English and Simplified
// Chinese data when they are missing: it fails under CI=true (scripts/test
// installs them), and skips elsewhere.
func Need(t testing.TB) {
	t.Helper()
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err == nil && strings.Contains(string(out), "eng") && strings.Contains(string(out), "chi_sim") {
		return
	}
	msg := "tesseract with eng and chi_sim is not installed (Debian: tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim; scripts/test installs them)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
