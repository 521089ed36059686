package providertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
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
