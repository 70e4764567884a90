package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerRoutes(t *testing.T) {
	h := Handler()
	tests := []struct {
		name, path, wantType, wantBody string
		wantCode                       int
	}{
		{"copilot page", "/", "text/html; charset=utf-8", `<script type="module" src="/static/copilot.js">`, 200},
		{"ops page", "/ops", "text/html; charset=utf-8", `<script type="module" src="/static/ops.js">`, 200},
		{"ops page with slash", "/ops/", "text/html; charset=utf-8", `/static/ops.js`, 200},
		{"ops sign-in page", "/ops/login", "text/html; charset=utf-8", `<script type="module" src="/static/ops-login.js">`, 200},
		{"module", "/static/copilot.js", "text/javascript; charset=utf-8", "import { Connection }", 200},
		{"worklet", "/static/pcm-worklet.js", "text/javascript; charset=utf-8", "registerProcessor('pcm-encoder'", 200},
		{"stylesheet", "/static/style.css", "text/css; charset=utf-8", ":root", 200},
		{"icon", "/static/favicon.svg", "image/svg+xml", "<svg", 200},
		{"unknown page", "/nope", "", "", 404},
		{"unknown asset", "/static/nope.js", "", "", 404},
		{"static dir", "/static/", "", "", 404},
		{"html only through its route", "/static/copilot.html", "", "", 404},
		{"dot dot", "/static/../web.go", "", "", 404},
		{"ops api is not ours", "/ops/api/sessions", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tt.path, nil)
			if rec.Code != tt.wantCode {
				t.Fatalf("GET %s: code %d, want %d", tt.path, rec.Code, tt.wantCode)
			}
			if tt.wantCode != 200 {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control %q, want no-cache", got)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Error("missing X-Content-Type-Options: nosniff")
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body does not contain %q", tt.wantBody)
			}
		})
	}
}

func TestHandlerPagesHaveCSP(t *testing.T) {
	h := Handler()
	for _, p := range []string{"/", "/ops", "/ops/login"} {
		csp := get(t, h, http.MethodGet, p, nil).Header().Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "style-src 'self'", "connect-src 'self' ws: wss:", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-") {
			t.Errorf("%s: CSP %q allows unsafe sources", p, csp)
		}
	}
}

// TestPagesHaveNoInlineCode: the CSP allows scripts and styles only from
// files, so a page with an inline script, a style element or attribute,
// an event-handler attribute or a javascript: URL would break in the
// browser. Every embedded HTML file is checked.
func TestPagesHaveNoInlineCode(t *testing.T) {
	scriptRE := regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script\s*>`)
	tagRE := regexp.MustCompile(`(?s)<[a-zA-Z][^>]*>`)
	handlerRE := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttrRE := regexp.MustCompile(`(?i)\sstyle\s*=`)
	pages := 0
	err := fs.WalkDir(FS(), "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".html" {
			return err
		}
		pages++
		b, err := fs.ReadFile(FS(), name)
		if err != nil {
			return err
		}
		html := string(b)
		scripts := scriptRE.FindAllStringSubmatch(html, -1)
		if len(scripts) != strings.Count(strings.ToLower(html), "<script") {
			t.Errorf("%s: a <script> element is not closed where expected", name)
		}
		for _, m := range scripts {
			if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
				t.Errorf("%s: inline script %q", name, m[0])
			}
		}
		if strings.Contains(strings.ToLower(html), "<style") {
			t.Errorf("%s: has a <style> element", name)
		}
		if strings.Contains(strings.ToLower(html), "javascript:") {
			t.Errorf("%s: has a javascript: URL", name)
		}
		for _, tag := range tagRE.FindAllString(html, -1) {
			if handlerRE.MatchString(tag) || styleAttrRE.MatchString(tag) {
				t.Errorf("%s: inline handler or style in %s", name, tag)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 3 {
		t.Fatalf("checked %d pages, want the copilot, ops and sign-in pages", pages)
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/static/conn.js", nil)
	etag := first.Header().Get("ETag")
	if etag == "" || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q, want a strong quoted tag", etag)
	}
	again := get(t, h, http.MethodGet, "/static/conn.js", map[string]string{"If-None-Match": etag})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("If-None-Match: code %d with %d bytes, want 304 and no body", again.Code, again.Body.Len())
	}
	other := get(t, h, http.MethodGet, "/static/view.js", nil).Header().Get("ETag")
	if other == etag {
		t.Fatalf("two different files share ETag %s", etag)
	}
}

func TestHandlerMethods(t *testing.T) {
	h := Handler()
	head := get(t, h, http.MethodHead, "/static/style.css", nil)
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "" {
		t.Fatalf("HEAD: code %d, body %d bytes, Content-Length %q", head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
	}
	post := get(t, h, http.MethodPost, "/", nil)
	if post.Code != http.StatusMethodNotAllowed || post.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST /: code %d, Allow %q", post.Code, post.Header().Get("Allow"))
	}
}

// TestModuleImportsResolve checks that every relative import and every
// /static/ reference in the pages and modules names an embedded file, so
// a renamed module cannot break a page silently.
func TestModuleImportsResolve(t *testing.T) {
	importRE := regexp.MustCompile(`(?:from|import)\s*\(?\s*'(\./[^']+)'`)
	staticRE := regexp.MustCompile(`["'](/static/[^"']+)["']`)
	h := Handler()
	imports := 0
	err := fs.WalkDir(FS(), "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), name)
		if err != nil {
			return err
		}
		for _, m := range importRE.FindAllStringSubmatch(string(b), -1) {
			imports++
			target := path.Join(path.Dir(name), m[1])
			if _, err := fs.Stat(FS(), target); err != nil {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
		for _, m := range staticRE.FindAllStringSubmatch(string(b), -1) {
			if rec := get(t, h, http.MethodGet, m[1], nil); rec.Code != 200 {
				t.Errorf("%s refers to %s, which answers %d", name, m[1], rec.Code)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if imports < 7 {
		t.Fatalf("found %d module imports; the pattern no longer matches how the modules import", imports)
	}
}

// TestStringsInBothLanguages checks that every data-i18n key the pages use
// is defined twice in i18n.js: once in en and once in zh.
func TestStringsInBothLanguages(t *testing.T) {
	keyRE := regexp.MustCompile(`data-i18n(?:-placeholder|-title)?="([A-Za-z]+)"`)
	i18n, err := fs.ReadFile(FS(), "static/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"static/copilot.html", "static/ops.html"} {
		b, err := fs.ReadFile(FS(), page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyRE.FindAllStringSubmatch(string(b), -1) {
			if n := strings.Count(string(i18n), "\n    "+m[1]+":"); n != 2 {
				t.Errorf("%s uses %q, defined %d times in i18n.js, want 2 (en and zh)", page, m[1], n)
			}
		}
	}
}
