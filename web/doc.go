// Package web is Poise's browser UI, embedded with go:embed and served by
// Handler: the copilot page at /, the ops page at /ops and their static
// assets (plain HTML, CSS and ES modules, no build step) under /static/.
//
// The copilot page speaks WebSocket protocol v1 on /ws and fetches
// /coach/scripts.json and /coach/types.json (the question-type classifier: its lexicon and its model's counts),
// which it caches to coach on its own when the server is unreachable; the ops page polls /ops/api/*. Package web imports
// nothing else of Poise's: the server routes to it, never the reverse.
package web
