package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"

	"github.com/poise-dev/poise/tiers/recall"
)

// templatesFlags are the flags of `poise templates match`.
type templatesFlags struct {
	seniority, lang string
	threshold       float64
}

func templatesFlagSet(f *templatesFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("templates match", flag.ContinueOnError)
	fs.StringVar(&f.seniority, "seniority", "mid", "junior, mid or senior")
	fs.StringVar(&f.lang, "lang", "en", "zh or en")
	fs.Float64Var(&f.threshold, "threshold", 0, "similarity for a hit (default the l3.threshold default)")
	return fs
}

// templates implements `poise templates match [-seniority S] [-lang L] TEXT`:
// it prints the best template match as one JSON object. Flags may follow
// the text.
func templates(ctx context.Context, args []string, stdout io.Writer) error {
	var f templatesFlags
	if len(args) == 0 || args[0] != "match" {
		if len(args) > 0 && isHelp(args[0]) {
			printHelp(stdout, templatesFlagSet(&f))
			return errHelp
		}
		return usagef("usage: poise templates match [-seniority junior|mid|senior] [-lang zh|en] TEXT")
	}
	pos, err := parseFlags(templatesFlagSet(&f), args[1:], stdout)
	if err != nil {
		return err
	}
	text := strings.Join(pos, " ")
	if strings.TrimSpace(text) == "" {
		return usagef("templates match: TEXT is required")
	}
	switch f.lang {
	case "zh", "en":
	default:
		return usagef("templates match: -lang must be zh or en, got %q", f.lang)
	}
	switch f.seniority {
	case "junior", "mid", "senior":
	default:
		return usagef("templates match: -seniority must be junior, mid or senior, got %q", f.seniority)
	}
	bank, err := recall.Load()
	if err != nil {
		return err
	}
	store, err := recall.NewStore(bank, recall.Config{Threshold: f.threshold}, nil)
	if err != nil {
		return err
	}
	m, err := store.Match(ctx, text, f.lang, f.seniority)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(m)
}
