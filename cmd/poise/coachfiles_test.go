package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/poise-dev/poise/coach"
)

func TestCoachFileGzip(t *testing.T) {
	t.Parallel()
	body := coach.LexiconJSON()
	serve := coachFile(body)
	for _, c := range []struct {
		accept string
		zipped bool
	}{
		{"", false}, {"gzip", true}, {"br, gzip;q=0.8", true}, {"GZIP", true}, {"*", true},
		{"gzip;q=0", false}, {"gzip; q=0.0, identity", false}, {"deflate, br", false},
	} {
		req := httptest.NewRequest("GET", "/coach/types.json", nil)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		rec := httptest.NewRecorder()
		serve(rec, req)
		got := rec.Body.Bytes()
		if zipped := rec.Header().Get("Content-Encoding") == "gzip"; zipped != c.zipped {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", c.accept, zipped, c.zipped)
			continue
		}
		if c.zipped {
			if len(got) >= len(body)/2 {
				t.Errorf("Accept-Encoding %q: %d bytes gzipped of %d", c.accept, len(got), len(body))
			}
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, body) {
			t.Errorf("Accept-Encoding %q: the body differs from the file", c.accept)
		}
		if rec.Header().Get("Vary") != "Accept-Encoding" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("Accept-Encoding %q: headers %v", c.accept, rec.Header())
		}
	}
}
