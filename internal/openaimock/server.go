package openaimock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxStall bounds a Stall fault so a client that never disconnects cannot
// hang httptest.Server.Close forever.
const maxStall = 30 * time.Second

// Server is an http.Handler speaking the chat-completions streaming protocol
// at any path ending in /chat/completions.
type Server struct {
	mu       sync.Mutex
	script   []*prepared
	next     int
	fallback *prepared
	received []recorded
}

var _ http.Handler = (*Server)(nil)

// New returns a Server answering requests with responses, in order.
func New(responses ...Response) *Server {
	s := &Server{}
	s.Enqueue(responses...)
	return s
}

// Enqueue appends responses to the script.
func (s *Server) Enqueue(responses ...Response) {
	ps := make([]*prepared, len(responses))
	for i, r := range responses {
		ps[i] = prepare(r)
	}
	s.mu.Lock()
	s.script = append(s.script, ps...)
	s.mu.Unlock()
}

// SetFallback sets the response for every request beyond the script, as a
// benchmark needs. Without one, such requests get HTTP 500.
func (s *Server) SetFallback(r Response) {
	p := prepare(r)
	s.mu.Lock()
	s.fallback = p
	s.mu.Unlock()
}

// Start serves s on a new httptest.Server closed when tb ends.
func (s *Server) Start(tb testing.TB) *httptest.Server {
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return ts
}

// Requests returns the requests received so far, decoded, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	rs := s.received[:len(s.received):len(s.received)]
	s.mu.Unlock()
	out := make([]Request, len(rs))
	for i, r := range rs {
		out[i] = r.decode()
	}
	return out
}

// ServeHTTP answers one chat-completions request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, APIError{Message: fmt.Sprintf("openaimock: no route for %s %s", r.Method, r.URL.Path), Type: "invalid_request_error"}, nil)
		return
	}
	// Recording keeps the raw bytes; decoding waits for Requests so a
	// benchmark does not pay for it.
	s.mu.Lock()
	s.received = append(s.received, recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
	var p *prepared
	if s.next < len(s.script) {
		p = s.script[s.next]
		s.next++
	} else {
		p = s.fallback
	}
	s.mu.Unlock()

	if p == nil {
		h := http.Header{"X-Should-Retry": {"false"}}
		writeError(w, http.StatusInternalServerError, APIError{Message: "openaimock: script exhausted", Type: "server_error"}, h)
		return
	}
	if p.resp.Status != 0 {
		for k, vs := range p.resp.Header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(p.resp.Status)
		w.Write(p.errBody)
		return
	}

	var opts struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &opts); err != nil {
		writeError(w, http.StatusBadRequest, APIError{Message: "openaimock: body is not JSON: " + err.Error(), Type: "invalid_request_error"}, nil)
		return
	}
	if !opts.Stream {
		writeError(w, http.StatusBadRequest, APIError{Message: "openaimock: only stream=true is supported", Type: "invalid_request_error"}, nil)
		return
	}

	h := w.Header()
	for k, vs := range p.resp.Header {
		h[k] = vs
	}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	usage := opts.StreamOptions.IncludeUsage
	if p.resp.Fault == NoFault {
		if usage {
			w.Write(p.withUsage)
		} else {
			w.Write(p.plain)
		}
		return
	}
	s.serveFault(w, r, p, usage)
}

// serveFault streams chunk by chunk, flushing each, and breaks the stream
// after FaultAfter deltas.
func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, p *prepared, usage bool) {
	rc := http.NewResponseController(w)
	chunks := p.chunks
	if usage {
		chunks = p.chunksNull
	}
	n := min(1+max(p.resp.FaultAfter, 0), len(chunks)) // the role chunk goes first
	for _, c := range chunks[:n] {
		w.Write(c)
	}
	rc.Flush()
	switch p.resp.Fault {
	case Drop:
		conn, _, err := rc.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler) // aborts the connection as well
		}
		conn.Close()
		return
	case Stall:
		t := time.NewTimer(maxStall)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		return
	case Malformed:
		w.Write(p.malformed)
	}
	for _, c := range chunks[n:] {
		w.Write(c)
	}
	if usage {
		w.Write(p.usage)
	}
	w.Write(doneEvent)
}

func writeError(w http.ResponseWriter, status int, e APIError, h http.Header) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(mustJSON(map[string]APIError{"error": e}))
}
