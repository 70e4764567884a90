// Command poise is the Poise server and its operator tools:
//
//	poise [serve] [-config FILE] [-addr ADDR] [-demo] [-insecure] [-log-format json|console]
//	poise ops levels|watch [-redis URL] [-server URL]
//	poise templates match [-seniority junior|mid|senior] [-lang zh|en] TEXT
//	poise token issue -subject ID -ttl 2h [-config FILE]
//	poise version
//	poise help [COMMAND]
//
// -h or --help anywhere prints the usage on stdout and exits 0; a command
// line poise cannot run prints the usage on stderr and exits 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the first signal starts a graceful shutdown; a second one kills at once
	}()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr))
}

// exitCode reports err on stderr and returns the process's exit code: 0
// for none, 2 for a command line poise cannot run (with the usage), else 1.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "poise: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintln(stderr, "poise:", err)
		return 1
	}
}

// run dispatches a subcommand; ctx ends on the first SIGINT or SIGTERM.
// A request for help is not an error.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && (args[0][0] != '-' || isHelp(args[0]) || args[0] == "--version") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "-h", "-help", "--help", "help":
		return help(args, stdout)
	case "version", "--version":
		return version(args, stdout)
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "ops":
		return ops(ctx, args, getenv, stdout)
	case "templates":
		return templates(ctx, args, stdout)
	case "token":
		return token(args, getenv, stdout)
	default:
		return usagef("unknown command %q", cmd)
	}
}
