package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// serveOn runs newServer(h, t) on a loopback port until the test ends.
func serveOn(tb testing.TB, h http.Handler, t timeouts) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := newServer(h, t, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	tb.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dialStalled opens a connection, writes head and stalls. The deadline is
// a generous test timeout, not a measurement.
func dialStalled(t *testing.T, addr, head string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

// wantClosed reads until the server closes the connection, failing if the
// test's deadline comes first.
func wantClosed(t *testing.T, r *bufio.Reader) {
	t.Helper()
	if _, err := io.Copy(io.Discard, r); err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatal("the server kept the connection open")
		}
	}
}

func TestServerClosesAConnectionWhoseHeadersAreTooSlow(t *testing.T) {
	served := make(chan struct{}, 1)
	addr := serveOn(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served <- struct{}{} }),
		timeouts{header: 50 * time.Millisecond, body: time.Minute, idle: time.Minute})
	_, r := dialStalled(t, addr, "GET / HTTP/1.1\r\nHost: example.test\r\n")
	wantClosed(t, r)
	select {
	case <-served:
		t.Error("a request with unfinished headers reached the handler")
	default:
	}
}

func TestServerClosesAConnectionWhoseBodyIsTooSlow(t *testing.T) {
	readErr := make(chan error, 1)
	addr := serveOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}), timeouts{header: time.Minute, body: 50 * time.Millisecond, idle: time.Minute})
	_, r := dialStalled(t, addr, "POST / HTTP/1.1\r\nHost: example.test\r\nContent-Length: 10\r\n\r\nabc")
	if err := <-readErr; err == nil {
		t.Error("the body read did not fail at the deadline")
	}
	wantClosed(t, r)
}

// The body deadline is lifted once the body is read: an answer that
// streams for longer than it, and a client that stays to read it, are
// not cut.
func TestServerBodyDeadlineDoesNotCutAStream(t *testing.T) {
	const deadline = 20 * time.Millisecond
	addr := serveOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc := http.NewResponseController(w)
		for i := range 5 {
			select {
			case <-r.Context().Done():
				return // the server took the client for gone
			case <-time.After(deadline):
			}
			fmt.Fprintf(w, "line %d\n", i)
			_ = rc.Flush()
		}
	}), timeouts{header: time.Minute, body: deadline, idle: time.Minute})
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || strings.Count(string(body), "line") != 5 {
		t.Fatalf("stream cut: %q, %v", body, err)
	}
}

func TestPageIsServedWithASecurityPolicy(t *testing.T) {
	srv := newTestServer(t)
	for _, path := range []string{"/", "/api/chat/threads"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self' 'sha256-", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: Content-Security-Policy allows unsafe code: %q", path, csp)
		}
		for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s: %q, want %q", path, k, got, v)
			}
		}
	}
}

func TestPagePolicyHashesEachInlineScriptAndStyle(t *testing.T) {
	page := fstest.MapFS{"index.html": {Data: []byte(`<!doctype html><style>p{}</style>
<SCRIPT type="module">a()</script><script src="x.js"></script><p style="x">`)}}
	csp, err := pagePolicy(page, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"script-src 'self' 'sha256-qVpDBgj7bpq5hMAcGp3AOc79J3Y1Z4HvySTwKrWDoy4=';", // a(), and nothing for x.js
		"style-src 'self' 'sha256-gG2yISYereRMiG2lMXrbiUgi0Ubw9p7QCeWcroOvy9Y=';",  // p{}; style attributes stay blocked
	} {
		if !strings.Contains(csp, want) {
			t.Errorf("policy %q lacks %q", csp, want)
		}
	}
}
