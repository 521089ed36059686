package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

// The soak is opt-in (PARLEY_SOAK=1) and asserts nothing about memory: it
// prints what the server grew to, for a person to compare. Run it alone,
// without -race:
//
//	PARLEY_SOAK=1 go test ./assistant/httpapi -run TestSoak -v -count=1

// TestSoakOversizedPageContextFromOneUser sends, on each streaming route,
// 100 concurrent requests with a large field from one user whose quota is
// used up, and prints the peak Go heap and RSS of the process (client and
// server are one process, but the client streams its bodies from a
// generator and holds none of them). The fields: an 8 MB page_context (the
// attack of issue 25), one of 500 KB (under every bound: decoded in full,
// then refused for the quota), and on the AI SDK route an 8 MB message.
func TestSoakOversizedPageContextFromOneUser(t *testing.T) {
	if os.Getenv("PARLEY_SOAK") == "" {
		t.Skip("soak: set PARLEY_SOAK=1 to run; it prints peak heap and RSS, and asserts nothing about them")
	}
	const requests = 100
	const uiMessage = `{"id":"u1","role":"user","parts":[{"type":"text","text":"`
	cases := []struct {
		name, path, prefix, suffix string
		size                       int
	}{
		{"ndjson 8 MB page_context", "/api/chat/stream", `{"message":"hi","page_context":"`, `"}`, 8_000_000},
		{"ndjson 500 KB page_context", "/api/chat/stream", `{"message":"hi","page_context":"`, `"}`, 500_000},
		{"aisdk 8 MB page_context", "/api/chat/ui", `{"id":"soak","trigger":"submit-message","page_context":"`,
			`","messages":[` + uiMessage + `hi"}]}]}`, 8_000_000},
		{"aisdk 500 KB page_context", "/api/chat/ui", `{"id":"soak","trigger":"submit-message","page_context":"`,
			`","messages":[` + uiMessage + `hi"}]}]}`, 500_000},
		{"aisdk 8 MB message", "/api/chat/ui", `{"id":"soak","trigger":"submit-message","messages":[` + uiMessage,
			`"}]}]}`, 8_000_000},
	}
	for _, rt := range cases {
		t.Run(rt.name, func(t *testing.T) {
			l, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(0)}})
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, fake.New(), withEngine(func(c *assistant.Config) { c.Ledger = l }))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: requests}}
			defer client.CloseIdleConnections()

			runtime.GC()
			debug.FreeOSMemory()
			base := sampleMemory()
			var peak memorySample
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					peak = peak.max(sampleMemory())
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()

			var statuses sync.Map // status -> *atomic.Int64
			var wg sync.WaitGroup
			began := time.Now()
			for range requests {
				wg.Go(func() {
					body := io.MultiReader(strings.NewReader(rt.prefix), &filler{n: rt.size}, strings.NewReader(rt.suffix))
					req, err := http.NewRequestWithContext(context.Background(), "POST", h.srv.URL+rt.path, body)
					if err != nil {
						t.Error(err)
						return
					}
					req.Header.Set("X-User", "alice")
					req.Header.Set("Content-Type", "application/json")
					status := "closed" // the server answered and closed before the client sent it all
					if resp, err := client.Do(req); err == nil {
						status = strconv.Itoa(resp.StatusCode)
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					n, _ := statuses.LoadOrStore(status, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				})
			}
			wg.Wait()
			took := time.Since(began)
			close(stop)
			<-sampled
			runtime.GC()
			after := sampleMemory()
			var answers []string
			statuses.Range(func(k, v any) bool {
				answers = append(answers, fmt.Sprintf("%s x%d", k, v.(*atomic.Int64).Load()))
				return true
			})
			t.Logf("%s, %s: %d requests from one user out of quota, in %s; answers %v",
				rt.path, rt.name, requests, took.Round(time.Millisecond), answers)
			t.Logf("  heap in use: %s before, peak %s, %s after GC", mb(base.heap), mb(peak.heap), mb(after.heap))
			t.Logf("  RSS:         %s before, peak %s, %s after GC", mb(base.rss), mb(peak.rss), mb(after.rss))
		})
	}
}

// filler reads as n bytes of 'x': a page_context streamed without being held.
type filler struct{ n int }

func (f *filler) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), f.n)
	for i := range k {
		p[i] = 'x'
	}
	f.n -= k
	return k, nil
}

type memorySample struct{ heap, rss uint64 }

func (a memorySample) max(b memorySample) memorySample {
	return memorySample{max(a.heap, b.heap), max(a.rss, b.rss)}
}

// sampleMemory reads the live heap objects' bytes (cheap: no stop the
// world) and the process's resident set from /proc (0 where there is none).
func sampleMemory() memorySample {
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	s := memorySample{heap: heap[0].Value.Uint64()}
	if raw, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 1 {
			pages, _ := strconv.ParseUint(f[1], 10, 64)
			s.rss = pages * uint64(os.Getpagesize())
		}
	}
	return s
}

func mb(n uint64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }
