package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
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
// (or *) without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		if q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000" {
			return true
		}
	}
	return false
}
