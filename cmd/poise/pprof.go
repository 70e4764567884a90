package main

import (
	"net/http"
	"net/http/pprof"
)

// pprofRoutes mounts Go's profiler under /ops/debug/pprof/, guarded like
// every ops endpoint (ops.token, or a client on this host when none is
// set): a CPU profile costs the node CPU while it runs and a heap profile
// shows its allocations, so they are for operators only.
func (a *app) pprofRoutes(mux *http.ServeMux) {
	mux.Handle("GET /ops/debug/pprof/", a.opsOnly(http.StripPrefix("/ops", http.HandlerFunc(pprof.Index))))
	mux.Handle("GET /ops/debug/pprof/cmdline", a.opsOnly(http.HandlerFunc(pprof.Cmdline)))
	mux.Handle("GET /ops/debug/pprof/profile", a.opsOnly(http.HandlerFunc(pprof.Profile)))
	mux.Handle("GET /ops/debug/pprof/symbol", a.opsOnly(http.HandlerFunc(pprof.Symbol)))
	mux.Handle("GET /ops/debug/pprof/trace", a.opsOnly(http.HandlerFunc(pprof.Trace)))
}
