package main

import "net/http"

// defaultCSP is the Content-Security-Policy of every response that is not
// a page: nothing may load from it and nothing may frame it. The pages
// (package web) replace it with their own, which allows their /static
// scripts and styles and nothing inline.
const defaultCSP = "default-src 'none'; frame-ancestors 'none'"

// securityHeaders sets the security headers on every response before the
// handler runs, so that handlers may override them (web sets the pages'
// CSP). It does not wrap the ResponseWriter: the WebSocket upgrade
// (Hijacker) and the gateway's SSE (Flusher) see the server's own writer.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", defaultCSP)
		next.ServeHTTP(w, r)
	})
}
