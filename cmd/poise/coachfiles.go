package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/poise-dev/poise/coach"
)

// scriptsFile and typesFile serve the coach's two files; each is
// compressed once per process, however many servers it starts (the tests
// start dozens).
var (
	scriptsFile = sync.OnceValue(func() http.HandlerFunc { return coachFile(coach.ScriptsJSON()) })
	typesFile   = sync.OnceValue(func() http.HandlerFunc { return coachFile(coach.LexiconJSON()) })
)

// coachFile serves body, one of the coach's JSON files (built once, never
// changed), gzipped to a client that accepts it: the classifier's file
// holds the naive Bayes model's counts, about 216 KB, 62 KB gzipped.
func coachFile(body []byte) http.HandlerFunc {
	zipped := gzipped(body)
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "max-age=3600")
		h.Add("Vary", "Accept-Encoding")
		if zipped != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			w.Write(zipped)
			return
		}
		w.Write(body)
	}
}

// gzipped returns body compressed, or nil if compressing fails (it does
// not, into memory; the plain body is served then).
func gzipped(body []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level: no error
	if _, err := zw.Write(body); err != nil {
		return nil
	}
	if err := zw.Close(); err != nil {
		return nil
	}
	return b.Bytes()
}

// acceptsGzip reports whether an Accept-Encoding header value lists gzip
// (or *) with a q-value above 0 (absent means 1).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if (coding == "gzip" || coding == "*") && quality(params) > 0 {
			return true
		}
	}
	return false
}

// quality is the q-value among an Accept-Encoding entry's parameters: 1
// when there is none, 0 when it does not parse.
func quality(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0
			}
			return q
		}
	}
	return 1
}
