package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// usage lists every subcommand; `poise -h`, `poise help` and each
// subcommand's -h print it (on stdout), an unknown command on stderr.
const usage = `Usage:
  poise [serve] [flags]                 run the server (the default command)
  poise ops levels|watch [flags]        live sessions by level, or follow the level changes
  poise templates match [flags] TEXT    the best template match for TEXT, as JSON
  poise token issue [flags]             print a session token signed with auth.secret
  poise version                         print the version and the build's VCS revision
  poise help [COMMAND]                  print this text, or a command's flags

Flags may come before or after the arguments. Run "poise COMMAND -h" for a
command's flags.
`

// errHelp says usage was asked for and printed: run returns nil for it.
var errHelp = errors.New("help requested")

// usageError is a command line that poise cannot run (an unknown command,
// a bad flag, a missing argument): main prints it with the usage on stderr
// and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// isHelp reports whether arg asks for usage.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// parseFlags parses fs from args, accepting flags before and after the
// positional arguments (everything after "--" is positional), and returns
// the positional ones. -h or --help prints the usage and fs's flags to
// stdout and returns errHelp; a bad flag is a usageError.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard) // the flag package's own usage is replaced by printHelp
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs)
			return nil, errHelp
		}
		if err != nil {
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// printHelp prints the usage, then the flags of fs when it is not nil.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	io.WriteString(w, usage)
	if fs == nil {
		return
	}
	fmt.Fprintf(w, "\nFlags of poise %s:\n", fs.Name())
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// help implements `poise help [COMMAND]`.
func help(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stdout, usage)
		return nil
	}
	fs, ok := commandFlags()[args[0]]
	if !ok {
		return usagef("help: unknown command %q", args[0])
	}
	printHelp(stdout, fs)
	return nil
}

// commandFlags are the flag sets of the commands, for `poise help COMMAND`.
func commandFlags() map[string]*flag.FlagSet {
	noEnv := func(string) string { return "" }
	return map[string]*flag.FlagSet{
		"serve":     serveFlagSet(new(serveFlags)),
		"ops":       opsFlagSet("levels|watch", noEnv, new(opsFlags)),
		"templates": templatesFlagSet(new(templatesFlags)),
		"token":     tokenFlagSet(new(tokenFlags)),
		"version":   flag.NewFlagSet("version", flag.ContinueOnError),
	}
}

// version implements `poise version`: the module version and the VCS
// revision the binary was built from (runtime/debug.ReadBuildInfo).
func version(args []string, stdout io.Writer) error {
	if _, err := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), args, stdout); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	_, err := fmt.Fprintln(stdout, versionLine(bi))
	return err
}

// versionLine formats bi as "poise VERSION (revision R, TIME[, modified]) GO".
func versionLine(bi *debug.BuildInfo) string {
	if bi == nil {
		return "poise (no build information)"
	}
	ver := bi.Main.Version
	if ver == "" {
		ver = "(devel)"
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	vcs := "revision unknown: built without VCS information"
	if rev := s["vcs.revision"]; rev != "" {
		parts := []string{"revision " + rev}
		if at := s["vcs.time"]; at != "" {
			parts = append(parts, at)
		}
		if s["vcs.modified"] == "true" {
			parts = append(parts, "modified")
		}
		vcs = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("poise %s (%s) %s", ver, vcs, bi.GoVersion)
}
