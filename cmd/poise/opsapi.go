package main

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/health"
)

// maxTransitionsAPI bounds one transitions request.
const maxTransitionsAPI = 10000

// opsAPI serves the ops view as JSON under /ops/api (ops-guarded).
func (a *app) opsAPI(mux *http.ServeMux) {
	mux.Handle("GET /ops/api/sessions", a.opsOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		recs, err := a.store.Sessions(r.Context())
		writeJSON(w, recs, err)
	})))
	mux.Handle("GET /ops/api/transitions", a.opsOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		switch {
		case n <= 0:
			n = 100
		case n > maxTransitionsAPI:
			n = maxTransitionsAPI
		}
		ts, err := a.store.Transitions(r.Context(), n)
		writeJSON(w, ts, err)
	})))
	mux.Handle("GET /ops/api/backends", a.opsOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, a.backends(), nil)
	})))
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// backendView is a backend's shared health record with the level it serves.
type backendView struct {
	health.BackendState
	Level string `json:"level"`
}

// backends lists the health records of the backends, with their levels.
func (a *app) backends() []backendView {
	level := map[string]string{tiers.TemplatesBackend: tiers.L3.String()}
	for _, v := range a.cfg.Engine.L1.Vendors {
		level[v.Name] = tiers.L1.String()
	}
	if a.cfg.Engine.L2.BaseURL != "" {
		level[a.cfg.Engine.L2.Name] = tiers.L2.String()
	}
	var out []backendView
	for _, b := range a.health.Backends() {
		out = append(out, backendView{BackendState: b, Level: level[b.Name]}) // "": a backend of no level
	}
	return out
}
