package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestParseProfiles(t *testing.T) {
	ps, audio, err := parseProfiles("typist, listener")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "typist" || !ps[1].Audio || !ps[1].AutoAnswer || !audio {
		t.Errorf("profiles %+v, audio %v", ps, audio)
	}
	if _, audio, _ := parseProfiles("typist,idle"); audio {
		t.Error("typist and idle stream audio")
	}
	if _, _, err := parseProfiles("typist,shouter"); err == nil || !strings.Contains(err.Error(), "shouter") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-profiles", "nobody"}, {"-sessions", "0"}, {"-no-such-flag"}} {
		if err := run(context.Background(), append(args, "-server", "http://127.0.0.1:1"), io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestSpread(t *testing.T) {
	if got := spread(4, 10); !slices.Equal(got, []int{0, 2, 5, 7}) {
		t.Errorf("spread(4, 10) = %v", got)
	}
	if got := spread(5, 3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("spread(5, 3) = %v", got)
	}
}
