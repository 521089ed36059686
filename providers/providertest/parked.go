package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// StallServer returns a server for ParkedStreamsHoldNoRequest: it reads
// and discards each request's body, answers 200 with contentType and the
// bytes of first (a stream's opening and one text delta, in the
// provider's wire format), and then holds the stream open until the
// client goes away or the test ends. It keeps nothing of a request.
func StallServer(t *testing.T, contentType, first string) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); ts.Close() })
	return ts
}

// ParkedStreamsHoldNoRequest checks that a stream parked after its first
// text delta holds none of its request. It parks streams of p, each asked
// with a system prompt of 256 KiB, and fails if the live heap grew by a
// quarter of that a stream: an HTTP client keeps the request it sent until
// the response ends, and an SDK's request keeps the body it could send
// again. p must answer with one text delta and then go quiet (see
// StallServer). Run it in a test that is not parallel: it reads the heap
// of the whole process.
func ParkedStreamsHoldNoRequest(t *testing.T, p providers.Provider) {
	t.Helper()
	const streams, prompt = 8, 256 << 10
	live := func() int64 {
		runtime.GC()
		runtime.GC() // and what sync.Pools kept through the first
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Warm: the client's pools, the SDK's lazily built tables.
	park(t, ctx, p, strings.Repeat("w", prompt))()
	before := live()
	var stops []func()
	for i := range streams {
		// Each prompt its own string, so no two share their bytes.
		stops = append(stops, park(t, ctx, p, strings.Repeat(string(rune('a'+i)), prompt)))
	}
	grown := live() - before
	for _, stop := range stops {
		stop()
	}
	if per := grown / streams; per > prompt/4 {
		t.Errorf("each parked stream holds %d KiB of heap, asked with a %d KiB prompt: the request is kept while the model talks", per>>10, prompt>>10)
	}
}

// park starts a stream of p and reads it up to its first text delta; the
// stream stays open until the returned func. It ranges over the stream
// on a goroutine of its own, as a caller would: iter.Pull2 would hold the
// sequence, and with it the request the provider's closure captured.
func park(t *testing.T, ctx context.Context, p providers.Provider, system string) (stop func()) {
	t.Helper()
	parked, release, done := make(chan error, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range p.Stream(ctx, &providers.Request{System: system, Messages: []providers.Message{{Role: providers.User, Content: "hi"}}}) {
			if err != nil {
				parked <- err
				return
			}
			if ev.Kind == providers.TextDelta {
				parked <- nil
				<-release
				return
			}
		}
		parked <- errors.New("the stream ended")
	}()
	if err := <-parked; err != nil {
		t.Fatalf("the stream ended before a text delta: %v", err)
	}
	return func() { close(release); <-done }
}
