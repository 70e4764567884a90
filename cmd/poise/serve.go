package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/poise-dev/poise/web"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

const (
	shutdownTimeout   = 10 * time.Second // for clients to get their going-away close
	readHeaderTimeout = 10 * time.Second
)

type serveFlags struct {
	config    string
	addr      string
	demo      bool
	insecure  bool // anonymous sessions from any address (no auth.secret on a public address)
	logFormat string
	logLevel  string
}

// serveFlagSet is the flags of `poise serve`, parsed into f.
func serveFlagSet(f *serveFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.config, "config", "", "YAML config `file` (default: embedded defaults)")
	fs.StringVar(&f.addr, "addr", "", "listen `address`, overrides the config (127.0.0.1:0 picks a free port)")
	fs.BoolVar(&f.demo, "demo", false, "run simulated vendors in-process and allow fault injection from /ops")
	fs.BoolVar(&f.insecure, "insecure", false, "without auth.secret, listen on a non-loopback address anyway and accept anonymous sessions from any client")
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or console")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return fs
}

// parseServeFlags parses the flags of `poise serve`; -h prints the usage
// on stdout and returns errHelp.
func parseServeFlags(args []string, stdout io.Writer) (serveFlags, error) {
	var f serveFlags
	pos, err := parseFlags(serveFlagSet(&f), args, stdout)
	if err != nil {
		return f, err
	}
	if len(pos) > 0 {
		return f, usagef("serve: unexpected argument %q", pos[0])
	}
	return f, nil
}

func newLogger(format, level string, stdout, stderr io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("-log-level: %w", err)
	}
	var w io.Writer
	switch format {
	case "json":
		w = stdout
	case "console":
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly}
	default:
		return zerolog.Nop(), fmt.Errorf("-log-format must be json or console, got %q", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// serve runs the server until ctx is done, then shuts down gracefully: stop
// accepting, close every client with 1001, wait at most shutdownTimeout.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseServeFlags(args, stdout)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f.config, getenv)
	if err != nil {
		return err
	}
	if f.addr != "" {
		cfg.Addr = f.addr
	}
	if err := checkSecret(cfg); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log, err := newLogger(f.logFormat, f.logLevel, stdout, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := checkExposure(cfg, f, ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	log.Info().Str("addr", ln.Addr().String()).Str("url", url).Msg("poise listening on " + url)
	logAccess(log, cfg, f)

	app, err := build(cfg, f, log)
	if err != nil {
		ln.Close()
		return err
	}
	startupGarbage.Do(debug.FreeOSMemory)
	srv := &http.Server{Handler: app.routes(), ReadHeaderTimeout: readHeaderTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err = <-served:
		app.close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err = errors.Join(srv.Shutdown(sctx), app.hub.Shutdown(sctx))
	app.close()
	<-served
	log.Info().Err(err).Msg("stopped")
	return err
}

// startupGarbage returns the first build's garbage to the operating
// system once per process: loading and indexing the template bank
// allocates about 300 MB, of which the index keeps a small part
// (docs/benchmarks.md, "Template recall"), and the runtime would otherwise
// keep the rest mapped: a fresh node held 155 MB of RSS instead of 73.
var startupGarbage sync.Once

// checkExposure refuses to serve anonymous sessions on a non-loopback
// address: without auth.secret anyone who reaches it could open sessions
// that spend the vendor budget. -insecure allows it.
func checkExposure(cfg config, f serveFlags, addr net.Addr) error {
	if cfg.Auth.Secret != "" || f.insecure || isLoopbackAddr(addr) {
		return nil
	}
	return fmt.Errorf("serve: refusing to listen on %s (%s) without auth.secret: anyone who can reach it could open "+
		"anonymous sessions that spend your vendor budget; set auth.secret (README, \"Authentication\"), "+
		"listen on 127.0.0.1, or pass -insecure to accept anonymous sessions from any address", cfg.Addr, addr)
}

// routes is every endpoint of the server, behind the security headers.
// Public: the copilot page and its assets, /ws (which authenticates each
// hello), /healthz, /readyz, the coach scripts, the sign-in and sign-out
// of the ops page, and the gateway (/v1/*, which checks its own keys).
// Everything else under /ops and /metrics is for operators (opsauth.go).
func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /ws", a.localTrust(a.cfg.Auth.Secret == "" && !a.insecure, a.hub))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.hub.Ready() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /coach/scripts.json", scriptsFile())
	mux.HandleFunc("GET /coach/types.json", typesFile())
	gw := a.localTrust(len(a.cfg.Gateway.Keys) == 0, a.gw)
	mux.Handle("POST /v1/chat/completions", gw)
	mux.Handle("GET /v1/models", gw)
	a.opsAPI(mux)
	a.demoAPI(mux)
	a.pprofRoutes(mux)
	pages := web.Handler()
	mux.Handle("/", pages)
	mux.Handle("GET /ops", a.opsPage(pages))
	mux.Handle("GET /ops/{$}", a.opsPage(pages))
	mux.Handle("POST /ops/login", a.opsLogin())
	mux.Handle("POST /ops/logout", a.opsLogout())
	mux.Handle("/ops/", a.opsOnly(http.NotFoundHandler())) // the rest of /ops, known or not, is for operators
	mux.Handle("GET /metrics", a.opsOnly(promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg})))
	return securityHeaders(mux)
}

// localTrust puts next behind access.Trust when it is served without a
// credential (on): a foreign Host, or a cross-site write, gets 403 before
// next runs. The ops endpoints check it in opsAuth.
func (a *app) localTrust(on bool, next http.Handler) http.Handler {
	if !on {
		return next
	}
	return a.trust.Guard(next)
}
