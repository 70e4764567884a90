// Command chaos proves Poise's promise under failure: it builds poise and
// vendorsim, starts one simulator per backend (vendor-a, vendor-b, local,
// whisper and a cloud speech-to-text), and runs named, seeded, repeatable
// scenarios against real poise processes (and a real redis-server where
// needed) while cmd/loadgen's sessions stream audio and ask questions.
// Then it measures the largest load the machine holds within the SLA. It
// writes a markdown report, a JSON summary, each scenario's full result and
// a PNG chart of sessions per level during the L1 outage:
//
//	go run ./cmd/chaos -out artifacts/chaos
//
// -only runs some scenarios, -short runs the CI subset with few sessions
// and no load benchmark. It exits 1 when a scenario missed a target.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}
