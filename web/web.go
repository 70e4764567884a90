package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// assets holds every file the pages use; static/ is served as /static/.
//
//go:embed static
var assets embed.FS

// pages maps the page routes to the files that render them. The server
// serves /ops/login in place of /ops to a browser that has not signed in
// while an ops token is configured.
var pages = map[string]string{
	"/":          "static/copilot.html",
	"/ops":       "static/ops.html",
	"/ops/login": "static/ops-login.html",
}

// contentTypes are the types the pages rely on; ES modules must be served
// as JavaScript or browsers refuse to run them.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// contentSecurityPolicy keeps the pages to their own origin: scripts and
// styles from /static only (no inline script, style or event handler
// attribute in any page: web_test checks), network to the same host (the
// WebSocket included), media from the capture streams the page itself
// opens. It is the one CSP of the pages; the server gives every other
// response a stricter one.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self' ws: wss:; media-src 'self' blob: mediastream:; " +
	"worker-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

// FS returns the embedded assets, rooted so that "static/copilot.js" is
// served as /static/copilot.js.
func FS() fs.FS { return assets }

// Handler serves the copilot page at /, the ops page at /ops (and its
// sign-in page at /ops/login) and the embedded assets under /static/, for GET and HEAD; anything else is 404
// (or 405 for another method). Responses carry their content type, an ETag
// and Cache-Control: no-cache, so a browser revalidates each load (cheap,
// 304) and never runs stale modules during development or after a deploy.
// It is safe for concurrent use and holds no state besides the embedded
// files.
func Handler() http.Handler {
	h := &handler{etags: make(map[string]string)}
	fs.WalkDir(assets, "static", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, rerr := assets.ReadFile(name); rerr == nil {
				sum := sha256.Sum256(b)
				h.etags[name] = `"` + hex.EncodeToString(sum[:8]) + `"`
			}
		}
		return nil
	})
	return h
}

type handler struct {
	etags map[string]string // file name → strong ETag; read-only after Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := h.resolve(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := assets.ReadFile(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	if ct, ok := contentTypes[path.Ext(name)]; ok {
		hdr.Set("Content-Type", ct)
	} else {
		hdr.Set("Content-Type", "application/octet-stream")
	}
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	if strings.HasSuffix(name, ".html") {
		hdr.Set("Content-Security-Policy", contentSecurityPolicy)
		hdr.Set("Permissions-Policy", "microphone=(self), display-capture=(self), camera=()")
	}
	hdr.Set("ETag", h.etags[name])
	// ServeContent answers If-None-Match with 304, HEAD and ranges.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// resolve maps a request path to an embedded file name.
func (h *handler) resolve(p string) (string, bool) {
	if name, ok := pages[p]; ok {
		return name, true
	}
	if p == "/ops/" {
		return pages["/ops"], true
	}
	rest, ok := strings.CutPrefix(p, "/static/")
	if !ok || rest == "" || strings.HasSuffix(rest, ".html") {
		return "", false
	}
	name := path.Join("static", path.Clean("/" + rest)[1:])
	_, ok = h.etags[name]
	return name, ok
}
