// Command poise is the Poise server and its operator tools:
//
//	poise [serve] [-config FILE] [-addr ADDR] [-demo] [-insecure] [-log-format json|console]
//	poise ops levels|watch [-redis URL] [-server URL]
//	poise templates match [-seniority junior|mid|senior] [-lang zh|en] TEXT
//	poise token issue -subject ID -ttl 2h [-config FILE]
package main

import (
	"context"
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
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "poise:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand; ctx ends on the first SIGINT or SIGTERM.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "ops":
		return ops(ctx, args, getenv, stdout)
	case "templates":
		return templates(ctx, args, stdout)
	case "token":
		return token(args, getenv, stdout)
	default:
		return fmt.Errorf("unknown command %q (want serve, ops, templates or token)", cmd)
	}
}
