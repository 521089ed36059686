package main

import (
	"log/slog"
	"net/http"
	"time"
)

// timeouts bound how long the server waits on a slow client. None bounds
// a response: a turn streams for as long as the model writes, and the
// Engine bounds that.
type timeouts struct {
	// header is how long a request's headers may take to arrive
	// (http.Server.ReadHeaderTimeout); the connection is closed after it.
	header time.Duration
	// body is how long a request's body may take after its headers. It is
	// a read deadline set per request (bodyDeadline), not
	// http.Server.ReadTimeout, which would also cut the read the server
	// keeps open during a stream to notice a client leaving.
	body time.Duration
	idle time.Duration // http.Server.IdleTimeout
}

// defaultTimeouts fit a chat server: the largest body (the AI SDK route's
// 8 MiB conversation) arrives well within body on a slow link, a chat
// message in a fraction of it.
var defaultTimeouts = timeouts{header: 10 * time.Second, body: 60 * time.Second, idle: 2 * time.Minute}

// newServer is the example's http.Server for h.
func newServer(h http.Handler, t timeouts, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(t.body, h),
		ReadHeaderTimeout: t.header,
		IdleTimeout:       t.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// bodyDeadline gives a request with a body d to send it: a read past the
// deadline fails, and the connection is closed. It does not cut a
// streamed answer: at the body's end the server lifts the read deadline
// to watch for the client leaving (TestServerBodyDeadlineDoesNotCutAStream
// pins that).
func bodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && d > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}
