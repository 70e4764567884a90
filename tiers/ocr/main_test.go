package ocr

import (
	"os"
	"os/exec"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// needTesseract fails the test under CI=true when tesseract or its
// languages are missing (scripts/test installs them), else skips it.
func needTesseract(t testing.TB) {
	t.Helper()
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err == nil && contains(string(out), "eng") && contains(string(out), "chi_sim") {
		return
	}
	msg := "tesseract with eng and chi_sim is not installed (Debian: tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim; scripts/test installs them)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
