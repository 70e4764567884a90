package main

import (
	"encoding/json"
	"net/http"
	"strconv"
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
		writeJSON(w, a.health.Backends(), nil)
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
