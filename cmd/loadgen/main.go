// Command loadgen opens many concurrent Poise sessions over real WebSockets
// and measures what candidates would feel: memory per idle session on the
// server, and how long a level change takes from the server's FSM
// transition to the client.
//
//	loadgen -server http://127.0.0.1:8080 -sessions 5000 [-fault l1_down]
//
// -fault needs a server started with -demo (it switches a simulated fault
// through /ops/api/demo/faults). It only talks to the server you name; run
// it against loopback addresses only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type options struct {
	server     string
	sessions   int
	dialers    int
	lang       string
	fault      string
	settle     time.Duration
	faultLimit time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&o.server, "server", "http://127.0.0.1:8080", "Poise base `URL` (loopback)")
	fs.IntVar(&o.sessions, "sessions", 1000, "concurrent sessions")
	fs.IntVar(&o.dialers, "dialers", 64, "sessions opened at once")
	fs.StringVar(&o.lang, "lang", "en", "profile language")
	fs.StringVar(&o.fault, "fault", "", "demo fault to switch on after connecting (l1_down, l2_slow, templates_down), then off")
	fs.DurationVar(&o.settle, "settle", 3*time.Second, "wait after connecting before measuring memory")
	fs.DurationVar(&o.faultLimit, "fault-wait", 60*time.Second, "how long to wait for every session's level change")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return measure(ctx, o, out)
}
