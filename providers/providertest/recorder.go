package providertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// Request is what a Recorder keeps of one request it received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// Recorder is a local server that answers every request with one
// text/event-stream body and keeps each request: a driver's test sends
// the same parameters through its SDK's own call and through its
// Provider, and compares what the server received.
type Recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []Request
}

// NewRecorder starts a Recorder answering with sse; it closes with t.
func NewRecorder(t testing.TB, sse string) *Recorder {
	rec := &Recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, Request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// Requests are the requests received so far, in order.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.got...)
}

// SameRequest drains sdk, a stream made through the SDK's own call that
// returns the stream's error, then p's stream of req, and fails t unless
// these were the Recorder's only two requests and they are the same. It
// returns the Provider's.
func (r *Recorder) SameRequest(t testing.TB, sdk func() error, p providers.Provider, req *providers.Request) Request {
	t.Helper()
	if err := sdk(); err != nil {
		t.Fatal(err)
	}
	for _, err := range p.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := r.Requests()
	if len(got) != 2 {
		t.Fatalf("got %d requests, want the SDK's and the Provider's", len(got))
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("the SDK sent\n%+v\nthe Provider sent\n%+v", got[0], got[1])
	}
	return got[1]
}
