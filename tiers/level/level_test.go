package level

import "testing"

func TestParseRoundTrips(t *testing.T) {
	t.Parallel()
	for l := L1; l <= L4; l++ {
		got, ok := Parse(l.String())
		if !ok || got != l {
			t.Fatalf("Parse(%q) = %v, %v", l.String(), got, ok)
		}
	}
	if _, ok := Parse("L5"); ok {
		t.Fatal("Parse(L5) succeeded")
	}
}

func TestDownEvent(t *testing.T) {
	t.Parallel()
	want := map[Level]string{L1: VendorAllDown, L2: LocalFailing, L3: TemplatesFailing, L4: "", None: ""}
	for l, ev := range want {
		if got := DownEvent(l); got != ev {
			t.Fatalf("DownEvent(%v) = %q, want %q", l, got, ev)
		}
	}
}
