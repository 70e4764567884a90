package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/poise-dev/poise/tiers/recall"
)

// templates implements `poise templates match [-seniority S] [-lang L] TEXT`:
// it prints the best template match as one JSON object.
func templates(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "match" {
		return errors.New("usage: poise templates match [-seniority junior|mid|senior] [-lang zh|en] TEXT")
	}
	fs := flag.NewFlagSet("templates match", flag.ContinueOnError)
	seniority := fs.String("seniority", "mid", "junior, mid or senior")
	lang := fs.String("lang", "en", "zh or en")
	threshold := fs.Float64("threshold", 0, "similarity for a hit (default the l3.threshold default)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	text := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(text) == "" {
		return errors.New("templates match: TEXT is required")
	}
	switch *lang {
	case "zh", "en":
	default:
		return fmt.Errorf("templates match: -lang must be zh or en, got %q", *lang)
	}
	switch *seniority {
	case "junior", "mid", "senior":
	default:
		return fmt.Errorf("templates match: -seniority must be junior, mid or senior, got %q", *seniority)
	}
	bank, err := recall.Load()
	if err != nil {
		return err
	}
	store, err := recall.NewStore(bank, recall.Config{Threshold: *threshold}, nil)
	if err != nil {
		return err
	}
	m, err := store.Match(ctx, text, *lang, *seniority)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(m)
}
