// Command loadgen opens many concurrent Poise sessions over real WebSockets
// and measures what candidates would feel.
//
// Traffic (the default): every session follows a profile, streaming a WAV
// in real time and/or typing questions on a seeded schedule, and loadgen
// reports per question the time to first useful content and the answer's
// level and source, per utterance the caption latency, every error
// message and every lost or doubled seq:
//
//	loadgen -server http://127.0.0.1:8080 -sessions 200 -profiles typist,listener -duration 30s -json out.json
//
// Idle (-idle): memory per idle session from the server's /metrics, and
// with -fault (a server started with -demo) the time from each session's
// FSM transition to its level message:
//
//	loadgen -idle -server http://127.0.0.1:8080 -sessions 5000 [-fault l1_down] [-resumes 100]
//
// -resumes drops that many sessions' sockets at once after the memory is
// read and reports how long their resumes (with last_seq) took.
//
// It only talks to the servers you name; run it against loopback
// addresses.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
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
	servers    []string
	sessions   int
	dialers    int
	profiles   string
	duration   time.Duration
	seed       int64
	sla        time.Duration
	allowance  time.Duration
	wav        string
	boundaries string
	jsonOut    string

	idle    bool
	lang    string
	fault   string
	settle  time.Duration
	resumes int
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	var servers string
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&servers, "server", "http://127.0.0.1:8080", "Poise base `URLs`, comma-separated (loopback); sessions spread over them and resume on the next")
	fs.IntVar(&o.sessions, "sessions", 100, "concurrent sessions")
	fs.IntVar(&o.dialers, "dialers", 24, "sessions opened at once (keep it under the server's pre_hello_per_address, 32)")
	fs.StringVar(&o.profiles, "profiles", "typist", "comma-separated session profiles, taken in turn: "+strings.Join(profileNames(), ", "))
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "traffic time (a drain follows)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of question texts, gaps and audio offsets")
	fs.DurationVar(&o.sla, "sla", 1500*time.Millisecond, "the server's sla_ms")
	fs.DurationVar(&o.allowance, "allowance", 0, "delivery allowance added to the SLA when counting content within it")
	fs.StringVar(&o.wav, "wav", "asr/testdata/en_questions.wav", "16 kHz mono WAV streamed by audio profiles")
	fs.StringVar(&o.boundaries, "boundaries", "asr/testdata/boundaries.json", "utterance boundaries of -wav")
	fs.StringVar(&o.jsonOut, "json", "", "write the full result as JSON to this `file`")
	fs.BoolVar(&o.idle, "idle", false, "measure memory per idle session instead of running traffic")
	fs.StringVar(&o.lang, "lang", "en", "profile language of idle sessions")
	fs.StringVar(&o.fault, "fault", "", "idle: demo fault to switch on after connecting (l1_down, l2_slow, templates_down), then off")
	fs.DurationVar(&o.settle, "settle", 3*time.Second, "idle: wait after connecting before measuring memory")
	fs.IntVar(&o.resumes, "resumes", 0, "idle: then drop this many sessions' sockets at once and time their resumes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.servers = strings.Split(servers, ",")
	if o.idle {
		return measureIdle(ctx, o, out)
	}
	return traffic(ctx, o, out)
}
