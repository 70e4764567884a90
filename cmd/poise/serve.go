package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/poise-dev/poise/coach"
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
	logFormat string
	logLevel  string
}

func parseServeFlags(args []string, stderr io.Writer) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "YAML config `file` (default: embedded defaults)")
	fs.StringVar(&f.addr, "addr", "", "listen `address`, overrides the config (127.0.0.1:0 picks a free port)")
	fs.BoolVar(&f.demo, "demo", false, "run simulated vendors in-process and allow fault injection from /ops")
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or console")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
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
	f, err := parseServeFlags(args, stderr)
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
	log, err := newLogger(f.logFormat, f.logLevel, stdout, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	log.Info().Str("addr", ln.Addr().String()).Str("url", url).Msg("poise listening on " + url)
	if cfg.Auth.Secret == "" && !isLoopbackAddr(ln.Addr()) {
		log.Warn().Msg("auth.secret is empty: only loopback clients can open sessions")
	}

	app, err := build(cfg, f, log)
	if err != nil {
		ln.Close()
		return err
	}
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

func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /ws", a.hub)
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
	mux.HandleFunc("GET /coach/scripts.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(coach.ScriptsJSON())
	})
	mux.Handle("POST /v1/chat/completions", a.gw)
	mux.Handle("GET /v1/models", a.gw)
	a.opsAPI(mux)
	a.demoAPI(mux)
	mux.Handle("/", web.Handler())
	mux.Handle("GET /ops", a.opsOnly(web.Handler()))
	mux.Handle("GET /metrics", a.opsOnly(promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg})))
	return mux
}

// opsOnly guards operator endpoints: the bearer ops.token when configured,
// else loopback clients only.
func (a *app) opsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := a.cfg.Ops.Token; tok != "" {
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+tok)) != 1 {
				http.Error(w, "ops token required", http.StatusUnauthorized)
				return
			}
		} else if !isLoopbackRemote(r.RemoteAddr) {
			http.Error(w, "ops endpoints are for loopback clients unless ops.token is set", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackRemote(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackAddr(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
