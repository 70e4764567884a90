package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/poise-dev/poise/session"
	"go.yaml.in/yaml/v3"
)

// tokenFlags are the flags of `poise token issue`.
type tokenFlags struct {
	subject, config string
	ttl             time.Duration
}

func tokenFlagSet(f *tokenFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("token issue", flag.ContinueOnError)
	fs.StringVar(&f.subject, "subject", "", "the token's `subject` (a candidate or account id)")
	fs.DurationVar(&f.ttl, "ttl", 2*time.Hour, "how long the token is valid (at most auth.max_ttl_ms, default 24h)")
	fs.StringVar(&f.config, "config", "", "config `file` holding auth.secret")
	return fs
}

// token implements `poise token issue -subject ID -ttl 2h [-config FILE]`:
// it prints a session token signed with auth.secret.
func token(args []string, getenv func(string) string, stdout io.Writer) error {
	var f tokenFlags
	if len(args) == 0 || args[0] != "issue" {
		if len(args) > 0 && isHelp(args[0]) {
			printHelp(stdout, tokenFlagSet(&f))
			return errHelp
		}
		return usagef("usage: poise token issue -subject ID -ttl 2h [-config FILE]")
	}
	pos, err := parseFlags(tokenFlagSet(&f), args[1:], stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("token issue: unexpected argument %q", pos[0])
	}
	cfg, err := loadConfig(f.config, getenv)
	if err != nil {
		return err
	}
	if cfg.Auth.Secret == "" {
		return missingSecret(f.config)
	}
	if err := checkSecret(cfg); err != nil {
		return fmt.Errorf("token issue: %w", err)
	}
	if max := maxTokenTTL(cfg); f.ttl > max {
		return fmt.Errorf("token issue: -ttl %v is over auth.max_ttl_ms (%v): the server would refuse the token", f.ttl, max)
	}
	tok, err := session.IssueToken(cfg.Auth.Secret, f.subject, f.ttl, time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

// missingSecret says why auth.secret came out empty: no config, no
// auth.secret in it, or a ${VAR} in it whose variable is empty (named).
func missingSecret(path string) error {
	if path == "" {
		return errors.New("token issue: auth.secret is not set: pass -config FILE with auth.secret")
	}
	var raw struct {
		Auth struct {
			Secret string `yaml:"secret"`
		} `yaml:"auth"`
	}
	if doc, err := os.ReadFile(path); err == nil && yaml.Unmarshal(utf8Doc(doc), &raw) == nil {
		if refs := envRE.FindAllStringSubmatch(raw.Auth.Secret, -1); len(refs) > 0 {
			return fmt.Errorf("token issue: auth.secret is %s, which is empty or unset (%s); set %s", raw.Auth.Secret, path, refs[0][1])
		}
	}
	return fmt.Errorf("token issue: auth.secret is not set in %s", path)
}
