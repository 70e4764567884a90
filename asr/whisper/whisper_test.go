package whisper

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTranscribeSendsWhisperCppForm(t *testing.T) {
	wav := []byte("RIFF....WAVEfake")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/inference" {
			http.Error(w, "wrong route "+r.URL.Path, http.StatusNotFound)
			return
		}
		if r.ContentLength <= 0 || len(r.TransferEncoding) > 0 {
			http.Error(w, "want a body of known length", http.StatusBadRequest)
			return
		}
		f, hdr, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got, _ := io.ReadAll(f)
		if string(got) != string(wav) || hdr.Filename != "clip.wav" || hdr.Header.Get("Content-Type") != "audio/wav" {
			http.Error(w, "bad file part", http.StatusBadRequest)
			return
		}
		if r.FormValue("response_format") != "json" || r.FormValue("language") != "zh" {
			http.Error(w, "bad fields", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":" 你好\n"}`)
	}))
	defer srv.Close()
	c, err := New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.Transcribe(context.Background(), wav, "zh")
	if err != nil || text != " 你好\n" {
		t.Fatalf("got %q, %v", text, err)
	}
}

func TestTranscribeErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   *Error
	}{
		{"500 json", 500, `{"error":"failed to process audio"}`, &Error{500, "failed to process audio"}},
		{"503 text", 503, "Service Unavailable", &Error{503, "Service Unavailable"}},
		{"error in a 200", 200, `{"error":"no 'file' field in the request"}`, &Error{200, "no 'file' field in the request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, _ := New(srv.URL+"/", nil)
			_, err := c.Transcribe(context.Background(), []byte("x"), "")
			var e *Error
			if !errors.As(err, &e) || *e != *tt.want {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestTranscribeRejectsBodiesWithoutText(t *testing.T) {
	for _, body := range []string{"not json", `{"txt":"x"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, body)
		}))
		c, _ := New(srv.URL, nil)
		if _, err := c.Transcribe(context.Background(), []byte("x"), ""); err == nil {
			t.Errorf("body %q: no error", body)
		}
		srv.Close()
	}
}

func TestNewURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://h:8178", "http://h:8178/inference"},
		{"http://h:8178/", "http://h:8178/inference"},
		{"http://h/whisper/inference", "http://h/whisper/inference"},
	}
	for _, tt := range tests {
		c, err := New(tt.in, nil)
		if err != nil || c.URL() != tt.want {
			t.Errorf("New(%q) = %v, %v; want %s", tt.in, c, err, tt.want)
		}
	}
	if _, err := New("unix:///sock", nil); err == nil {
		t.Error("unix url accepted")
	}
}

func TestTranscribeHonoursContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := New(srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Transcribe(ctx, []byte("x"), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestFormBodyReadsAsItWrites: the form's body gives the same bytes read
// in small pieces as written at once, and a fresh body reads them again.
func TestFormBodyReadsAsItWrites(t *testing.T) {
	f, err := newForm([]byte("RIFF....WAVEfake audio"), "en")
	if err != nil {
		t.Fatal(err)
	}
	want := string(f.head) + "RIFF....WAVEfake audio" + string(f.tail)
	var small strings.Builder
	r, p := f.body(), make([]byte, 3)
	for {
		n, err := r.Read(p)
		small.Write(p[:n])
		if err == io.EOF {
			break
		}
	}
	var whole strings.Builder
	if n, err := f.body().(io.WriterTo).WriteTo(&whole); err != nil || n != f.size() {
		t.Fatalf("WriteTo: %d bytes, %v; want %d", n, err, f.size())
	}
	if small.String() != want || whole.String() != want {
		t.Errorf("read %q, written %q, want %q", small.String(), whole.String(), want)
	}
}
