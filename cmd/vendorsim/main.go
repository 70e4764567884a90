// Command vendorsim serves the fault-injecting model-backend simulator
// (OpenAI-compatible and whisper.cpp-compatible) for tests, demos and load
// runs. Its first stdout line is "vendorsim listening on http://ADDR", or
// https://ADDR with -tls-cert and -tls-key, which serve HTTPS, and HTTP/2
// to clients that offer it, as hosted vendors do. Faults are set at
// /_sim/faults.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/rs/zerolog"
)

const (
	defaultAddr       = "127.0.0.1:8090"
	readHeaderTimeout = 10 * time.Second
	shutdownTimeout   = 5 * time.Second // for requests in flight after held ones are released
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // the first signal is graceful; a second one kills
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run serves the simulator until ctx is done, then releases held
// requests and shuts down within shutdownTimeout. It writes the listening
// address as its first line to stdout and logs to stderr.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("vendorsim", flag.ContinueOnError)
	addr := fs.String("addr", defaultAddr, "listen address (127.0.0.1:0 picks a free port)")
	tokenDelay := fs.Duration("token-delay", 0, "delay between stream chunks (0: 20ms; negative: none)")
	firstTokenDelay := fs.Duration("first-token-delay", 0, "delay before headers and the first chunk")
	inferenceDelay := fs.Duration("inference-delay", 0, "decode delay of transcriptions and whisper /inference")
	transcriptsFile := fs.String("transcripts", "", "file of transcription texts, one per line, returned in turn")
	logLevel := fs.String("log-level", "info", "zerolog level: debug, info, warn, error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this `file` (for load runs)")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS (and HTTP/2) with this PEM certificate `file`; needs -tls-key")
	tlsKey := fs.String("tls-key", "", "the PEM private key `file` of -tls-cert")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("vendorsim: %w", err)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return errors.New("vendorsim: -tls-cert and -tls-key go together")
	}
	level, err := zerolog.ParseLevel(*logLevel)
	if err != nil {
		return fmt.Errorf("vendorsim: -log-level: %w", err)
	}
	log := zerolog.New(os.Stderr).Level(level).With().Timestamp().Str("svc", "vendorsim").Logger()
	transcripts, err := readLines(*transcriptsFile)
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}

	sim := vendorsim.New(vendorsim.Options{
		TokenDelay: *tokenDelay, FirstTokenDelay: *firstTokenDelay, InferenceDelay: *inferenceDelay,
		Transcripts: transcripts, Log: log,
	})
	ln, scheme, err := listen(*addr, *tlsCert, *tlsKey)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "vendorsim listening on %s://%s\n", scheme, ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("vendorsim: write address: %w", err)
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: readHeaderTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("vendorsim: serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("vendorsim: shutting down")
	sim.Close() // release stalled streams and NoAnswer requests, or Shutdown would wait for them
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("vendorsim: serve: %w", serveErr)
	}
	if err != nil {
		return fmt.Errorf("vendorsim: shutdown: %w", err)
	}
	return nil
}

// listen opens addr: plain TCP, or TLS with the certificate and key files
// when certFile is set, offering HTTP/2 and HTTP/1.1 by ALPN (http.Server
// serves HTTP/2 on a TLS listener that negotiated "h2"). It returns the
// listener and its URL scheme.
func listen(addr, certFile, keyFile string) (net.Listener, string, error) {
	var cfg *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, "", fmt.Errorf("vendorsim: -tls-cert: %w", err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("vendorsim: listen: %w", err)
	}
	if cfg == nil {
		return ln, "http", nil
	}
	return tls.NewListener(ln, cfg), "https", nil
}

// startCPUProfile profiles the process into path until the returned stop
// is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("vendorsim: -cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("vendorsim: -cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// readLines returns the non-empty lines of path; an empty path gives none.
func readLines(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vendorsim: -transcripts: %w", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vendorsim: -transcripts: %w", err)
	}
	return lines, nil
}
