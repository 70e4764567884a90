package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// subcommands are what every usage text must list.
var subcommands = []string{"[serve]", "ops levels|watch", "templates match", "token issue", "version", "help"}

// runCLI runs poise in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := exitCode(run(context.Background(), args, getenv, &out, &errOut), &errOut)
	return code, out.String(), errOut.String()
}

func requireUsage(t *testing.T, text string) {
	t.Helper()
	for _, c := range subcommands {
		if !strings.Contains(text, "poise "+c) {
			t.Errorf("usage lacks %q:\n%s", "poise "+c, text)
		}
	}
}

// TestCLIHelp: -h, --help and help, alone or on any command, print the
// usage with every subcommand on stdout and exit 0.
func TestCLIHelp(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"-h": {"-h"}, "--help": {"--help"}, "help": {"help"}, "help serve": {"help", "serve"},
		"serve --help": {"serve", "--help"}, "serve -h": {"serve", "-h"}, "serve -demo -h": {"serve", "-demo", "-h"},
		"ops -h": {"ops", "-h"}, "ops levels -h": {"ops", "levels", "-h"}, "ops watch --help": {"ops", "watch", "--help"},
		"templates -h": {"templates", "-h"}, "templates match -h": {"templates", "match", "-h"},
		"templates match TEXT --help": {"templates", "match", "hello", "--help"},
		"token -h":                    {"token", "-h"}, "token issue -h": {"token", "issue", "-h"}, "version -h": {"version", "-h"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, noEnv, args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing on stderr", code, errOut)
			}
			requireUsage(t, out)
		})
	}
	t.Run("command flags", func(t *testing.T) {
		_, out, _ := runCLI(t, noEnv, "serve", "--help")
		for _, f := range []string{"-config", "-addr", "-demo", "-insecure", "-log-format"} {
			if !strings.Contains(out, f) {
				t.Errorf("serve --help does not list %s:\n%s", f, out)
			}
		}
	})
}

// TestCLIUsageErrors: an unknown command, a bad flag or a missing argument
// prints the usage on stderr and exits 2.
func TestCLIUsageErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		want string
	}{
		"unknown command":   {[]string{"bogus"}, `unknown command "bogus"`},
		"help bogus":        {[]string{"help", "bogus"}, `unknown command "bogus"`},
		"bad serve flag":    {[]string{"serve", "-nope"}, "flag provided but not defined: -nope"},
		"serve argument":    {[]string{"serve", "extra"}, `unexpected argument "extra"`},
		"ops without verb":  {[]string{"ops"}, "poise ops levels|watch"},
		"templates no text": {[]string{"templates", "match", "-lang", "zh"}, "TEXT is required"},
		"templates bad lang after text": {[]string{"templates", "match", "hello", "-lang", "fr"},
			`-lang must be zh or en, got "fr"`},
		"token without verb": {[]string{"token"}, "poise token issue"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, noEnv, c.args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing on stdout", code, out)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, errOut)
			}
			requireUsage(t, errOut)
		})
	}
}

// TestCLIVersion: `poise version` prints the module version, the VCS
// revision when the build has one, and the Go version.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, noEnv, "version")
	if code != 0 || !strings.HasPrefix(out, "poise ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version: exit %d, %q; want 0 and poise … %s", code, out, runtime.Version())
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
		{Key: "vcs.time", Value: "2026-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "poise v1.2.3 (revision 0123abcd, 2026-05-01T10:00:00Z, modified) go1.26.0"
	if got := versionLine(bi); got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	if got := versionLine(&debug.BuildInfo{GoVersion: "go1.26.0"}); !strings.Contains(got, "revision unknown") {
		t.Errorf("versionLine without VCS = %q, want it to say the revision is unknown", got)
	}
}

// TestCLIFlagsAfterArguments: a flag after the text is honoured, exactly
// as before it.
func TestCLIFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	match := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, noEnv, append([]string{"templates", "match"}, args...)...)
		if code != 0 {
			t.Fatalf("templates match %q: exit %d: %s", args, code, errOut)
		}
		var m struct{ Question string }
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("templates match %q: %v: %s", args, err, out)
		}
		return m.Question
	}
	before := match("-lang", "zh", "Tell me about yourself")
	after := match("Tell me about yourself", "-lang", "zh")
	en := match("Tell me about yourself")
	if before != after {
		t.Errorf("-lang zh after the text gives %q, before it %q", after, before)
	}
	if after == en || !strings.ContainsFunc(after, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
		t.Errorf("-lang zh after the text gives %q (English: %q); want the Chinese template", after, en)
	}
	if got := match("--", "-lang", "zh"); got == after {
		t.Errorf("after --, -lang was taken as a flag")
	}
}

// TestCLITokenEmptyVariable: auth.secret set to ${VAR} with VAR empty
// names the variable.
func TestCLITokenEmptyVariable(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "poise.yaml", "auth:\n  secret: ${POISE_AUTH_SECRET}\n")
	code, _, errOut := runCLI(t, noEnv, "token", "issue", "-subject", "c1", "-config", cfg)
	want := "auth.secret is ${POISE_AUTH_SECRET}, which is empty or unset"
	if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "set POISE_AUTH_SECRET") {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
	code, _, errOut = runCLI(t, noEnv, "token", "issue", "-subject", "c1", "-config", writeFile(t, "empty.yaml", "addr: 127.0.0.1:0\n"))
	if code != 1 || !strings.Contains(errOut, "auth.secret is not set in") {
		t.Errorf("no auth.secret: exit %d, stderr %q", code, errOut)
	}
	getenv := func(k string) string {
		if k == "POISE_AUTH_SECRET" {
			return strings.Repeat("s", 40)
		}
		return ""
	}
	code, out, errOut := runCLI(t, getenv, "token", "issue", "-config", cfg, "-subject", "c1")
	if code != 0 || strings.Count(out, ".") < 1 {
		t.Errorf("with the variable set: exit %d, %q, %q", code, out, errOut)
	}
}

// TestCLIBinaryExitCodes runs the built binary: --help exits 0 with the
// usage on stdout, an unknown command exits 2 with it on stderr.
func TestCLIBinaryExitCodes(t *testing.T) {
	t.Parallel()
	bin := poiseBinary(t)
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "--help")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		t.Fatalf("poise --help: %v, stderr %q", err, errOut.String())
	}
	requireUsage(t, out.String())
	out.Reset()
	errOut.Reset()
	cmd = exec.Command(bin, "bogus")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 || out.Len() > 0 {
		t.Fatalf("poise bogus: %v, stdout %q; want exit 2 and nothing on stdout", err, out.String())
	}
	requireUsage(t, errOut.String())
}

// TestCLIReadyHint: the start-up "ready" line says what to set for L1 when
// no L1 vendor is configured, and nothing of the kind when one is.
func TestCLIReadyHint(t *testing.T) {
	t.Parallel()
	ready := func(args ...string) map[string]any {
		t.Helper()
		sc, drain := serveLogs(t, noEnv, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
		defer drain()
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["message"] == "ready" {
				return l
			}
		}
		t.Fatal("no ready line")
		return nil
	}
	plain := ready()
	hint, _ := plain["hint"].(string)
	if plain["answer_level"] != "L3" || !strings.Contains(hint, "OPENAI_API_KEY") || !strings.Contains(hint, "l1.vendors") {
		t.Errorf("ready line without vendors %v: want answer_level L3 and a hint naming OPENAI_API_KEY and l1.vendors", plain)
	}
	cfg := writeFile(t, "l1.yaml", "l1:\n  vendors:\n    - {name: a, base_url: 'http://127.0.0.1:9/v1', api_key: k, model: m}\n")
	if l := ready("-config", cfg); l["hint"] != nil {
		t.Errorf("ready line with an L1 vendor has a hint: %v", l)
	}
}
