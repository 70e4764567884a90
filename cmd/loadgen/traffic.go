package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/poise-dev/poise/cmd/loadgen/load"
)

// profiles are the named session profiles of -profiles.
var profiles = map[string]load.Profile{
	"typist":    {Name: "typist", Typed: true},
	"typist-zh": {Name: "typist-zh", Lang: "zh", Typed: true},
	"listener":  {Name: "listener", Audio: true, AutoAnswer: true},
	"mixed":     {Name: "mixed", Audio: true, Typed: true},
	"idle":      {Name: "idle"},
}

func profileNames() []string {
	var names []string
	for n := range profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func parseProfiles(list string) ([]load.Profile, bool, error) {
	var out []load.Profile
	audio := false
	for _, n := range strings.Split(list, ",") {
		p, ok := profiles[strings.TrimSpace(n)]
		if !ok {
			return nil, false, fmt.Errorf("unknown profile %q (want one of %s)", n, strings.Join(profileNames(), ", "))
		}
		audio = audio || p.Audio
		out = append(out, p)
	}
	return out, audio, nil
}

// traffic runs the sessions' traffic and prints the summary.
func traffic(ctx context.Context, o options, out io.Writer) error {
	ps, audio, err := parseProfiles(o.profiles)
	if err != nil {
		return err
	}
	cfg := load.Config{Servers: o.servers, Sessions: o.sessions, Profiles: ps, Duration: o.duration,
		Seed: o.seed, SLA: o.sla, Dialers: o.dialers}
	if audio {
		if cfg.Clip, err = load.LoadClip(o.wav, o.boundaries); err != nil {
			return err
		}
	}
	res, err := load.Measure(ctx, cfg)
	if err != nil {
		return err
	}
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(res, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	s := load.Summarize(res, o.allowance)
	printSummary(out, res, s)
	if s.NoContent+s.Errors+s.Lost+s.Doubled > 0 {
		return fmt.Errorf("%d questions without content, %d error messages, %d lost and %d doubled messages", s.NoContent, s.Errors, s.Lost, s.Doubled)
	}
	return nil
}

func printSummary(out io.Writer, res *load.Result, s load.Summary) {
	fmt.Fprintf(out, "sessions: %d opened of %d\n", res.Opened, res.Sessions)
	for i, f := range res.DialFailures {
		if i == 3 {
			fmt.Fprintf(out, "  ... %d more\n", len(res.DialFailures)-3)
			break
		}
		fmt.Fprintf(out, "  dial failure: %s\n", f)
	}
	fmt.Fprintf(out, "questions: %d counted (%d superseded, %d offline); first useful content within %.0f ms: %.2f%%; model or template within it: %.2f%%; none at all: %d\n",
		s.Questions, s.Superseded, s.Offline, res.SLAms, 100*s.FirstShare(), 100*s.ContentShare(), s.NoContent)
	fmt.Fprintf(out, "first useful content: p50 %.0f ms, p95 %.0f ms, p99 %.0f ms, max %.0f ms; by source %v; %d cut\n",
		s.FirstP50, s.FirstP95, s.FirstP99, s.FirstMax, s.ByFirst, s.Cut)
	if s.Captions > 0 || s.CaptionMissed > 0 {
		fmt.Fprintf(out, "captions: %d finals, latency p50 %.0f ms, p95 %.0f ms, p99 %.0f ms; %d missed; sources %v\n",
			s.Captions, s.CaptionP50, s.CaptionP95, s.CaptionP99, s.CaptionMissed, s.CaptionSources)
	}
	if s.Spoken > 0 {
		fmt.Fprintf(out, "spoken questions: %d, utterance end → first content p99 %.0f ms\n", s.Spoken, s.SpokenUttP99)
	}
	fmt.Fprintf(out, "messages: %d lost, %d doubled; %d error messages %v; %d reconnects, %d sessions lost\n",
		s.Lost, s.Doubled, s.Errors, s.ErrorCodes, s.Reconnects, s.SessionsLost)
}
