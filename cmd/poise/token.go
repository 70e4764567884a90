package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/poise-dev/poise/session"
)

// token implements `poise token issue -subject ID -ttl 2h [-config FILE]`:
// it prints a session token signed with auth.secret.
func token(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "issue" {
		return errors.New("usage: poise token issue -subject ID -ttl 2h [-config FILE]")
	}
	fs := flag.NewFlagSet("token issue", flag.ContinueOnError)
	subject := fs.String("subject", "", "the token's `subject` (a candidate or account id)")
	ttl := fs.Duration("ttl", 2*time.Hour, "how long the token is valid")
	path := fs.String("config", "", "config `file` holding auth.secret")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := loadConfig(*path, getenv)
	if err != nil {
		return err
	}
	if cfg.Auth.Secret == "" {
		return errors.New("token issue: auth.secret is not set in the config")
	}
	tok, err := session.IssueToken(cfg.Auth.Secret, *subject, *ttl, time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
