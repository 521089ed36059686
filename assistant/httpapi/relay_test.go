package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/sqlstore"
)

// relayRoute is one resume route and how a test drives it.
type relayRoute struct {
	name    string
	post    string                                 // the route that streams
	body    func(t *testing.T) string              // a turn's request
	resume  func(id string) string                 // the resume path of a stream
	idOf    func(t *testing.T, head []byte) string // the stream's id, from its first lines
	tooLong string                                 // in the chunk that ends a stream no longer followed
	started func(line string) bool                 // the line after which the turn waits
}

var relayRoutes = []relayRoute{
	{
		name: "UI", post: "/api/chat/ui",
		body:    func(t *testing.T) string { return uiBody(t, "relayed", "submit-message", "", userMsg("u1", "hi")) },
		resume:  func(id string) string { return "/api/chat/ui/" + id + "/stream" },
		idOf:    func(*testing.T, []byte) string { return "relayed" },
		tooLong: "too long to resume here",
		started: func(line string) bool { return strings.Contains(line, "First") },
	},
	{
		name: "NDJSON", post: "/api/chat/stream",
		body:   func(t *testing.T) string { return streamBody(t, httpapi.StreamRequest{Message: "hi"}) },
		resume: func(id string) string { return "/api/chat/threads/" + id + "/stream" },
		idOf: func(t *testing.T, head []byte) string {
			return threadIDOf(t, parseLines(t, head))
		},
		tooLong: "too long to follow here",
		started: func(line string) bool { return strings.Contains(line, "First") },
	},
}

// relayStores are the Stores of two instances: one shared memstore, or
// two sqlstores over one PostgreSQL schema, each counting what it
// publishes.
type relayStores func(t *testing.T) (a, b store.Store, published func() int64)

func memRelay(t *testing.T) (store.Store, store.Store, func() int64) {
	st := &counting{relayStore: memstore.New()}
	return st, st, st.published.Load
}

func postgresRelay(t *testing.T) (store.Store, store.Store, func() int64) {
	dsn := sqltest.PostgresDSN(t) // skips without PARLEY_TEST_POSTGRES_DSN
	open := func() *counting {
		st, err := sqlstore.New(sqltest.OpenPostgres(t, dsn), sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return &counting{relayStore: st}
	}
	a, b := open(), open()
	return a, b, func() int64 { return a.published.Load() + b.published.Load() }
}

// counting is a relaying Store that counts what it publishes.
type counting struct {
	relayStore
	published atomic.Int64
}

type relayStore interface {
	store.Store
	store.Relay
}

func (c *counting) Publish(ctx context.Context, topic string, p []byte) error {
	c.published.Add(1)
	return c.relayStore.Publish(ctx, topic, p)
}

// twoInstances returns two Handlers, as two app instances sharing a
// database would run them: a over sa, where turns run, and b over sb.
func twoInstances(t *testing.T, sa, sb store.Store, model *fake.Provider) (a, b *harness) {
	t.Helper()
	a = newHarness(t, model, withEngine(func(c *assistant.Config) {
		c.Store = sa
		c.MaxTurnOutputBytes, c.MaxTurnOutputTokens = 64<<20, 1<<30
	}))
	b = newHarness(t, model, withEngine(func(c *assistant.Config) { c.Store = sb }))
	return a, b
}

// startOn posts route's turn on h as alice and reads it up to the line
// started marks; it returns what it read and a reader of the rest.
func startOn(t *testing.T, h *harness, route relayRoute) ([]byte, *bufio.Reader) {
	t.Helper()
	resp := h.request(t.Context(), "POST", route.post, "alice", route.body(t))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", route.post, discard(resp))
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	var head []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before its first text: %v", err)
		}
		head = append(head, line...)
		if route.started(line) {
			return head, br
		}
	}
}

func TestRelayResumesAStreamOfAnotherInstanceOnOneMemstore(t *testing.T) {
	testRelayResume(t, memRelay)
}

func TestPostgresRelayResumesAStreamOfAnotherInstance(t *testing.T) {
	testRelayResume(t, postgresRelay)
}

// testRelayResume: a stream running on A resumes on B, for both routes:
// B's body means what A's whole stream does, replayed (its text deltas
// merged in A's copy) then followed live, and ends as A's does. Another
// user gets 204 on B, and so does a resume after the end; no goroutine
// outlives the streams by more than the linger.
func testRelayResume(t *testing.T, stores relayStores) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			sa, sb, published := stores(t)
			open := make(chan struct{})
			model := fake.New(fake.Turn{fake.Text("Zero. "), fake.Delay(time.Millisecond),
				fake.Text("First. And a sentence past the Engine's prose chunk, sent at once. "), gate(open), fake.Text("Second, ", "and third.")})
			a, b := twoInstances(t, sa, sb, model)
			base := sqltest.Goroutines()
			head, rest := startOn(t, a, route)
			path := route.resume(route.idOf(t, head))
			if code := discard(b.do("GET", path, "bob", "")); code != http.StatusNoContent {
				t.Errorf("bob resumed alice's stream on B: %d", code)
			}
			start := time.Now()
			resumed := b.do("GET", path, "alice", "")
			t.Logf("B answered its resume %v after the request", time.Since(start))
			if resumed.StatusCode != http.StatusOK {
				t.Fatalf("resume on B: %d", discard(resumed))
			}
			close(open)
			tail, err := io.ReadAll(rest)
			if err != nil {
				t.Fatal(err)
			}
			onA := append(head, tail...)
			onB, err := io.ReadAll(resumed.Body)
			resumed.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			sameMeaning(t, route.name == "NDJSON", "B's resumed body", onB, onA)
			t.Logf("%d payloads published for one resumed stream of %d bytes (A's stream %d)", published(), len(onB), len(onA))
			if code := discard(b.do("GET", path, "alice", "")); code != http.StatusNoContent {
				t.Errorf("resume on B after the stream ended: %d", code)
			}
			settled := time.Now()
			noLeaks(t, base, a, b)
			t.Logf("goroutines settled %v after the end", time.Since(settled))
		})
	}
}

// resumeOn resumes on h, as alice, route's stream whose first lines are
// head, and wants it found.
func resumeOn(t *testing.T, h *harness, route relayRoute, head []byte) *http.Response {
	t.Helper()
	r := h.do("GET", route.resume(route.idOf(t, head)), "alice", "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", discard(r))
	}
	return r
}

// noLeaks waits until the goroutines are back to base, the Handlers'
// listening for follow requests included (it lingers a few seconds); pgx's
// background readers of pooled connections do not count
// (sqltest.Goroutines).
func noLeaks(t *testing.T, base int, hs ...*harness) {
	t.Helper()
	sqltest.SettleGoroutines(t, base, 10*time.Second, func() {
		for _, h := range hs {
			h.srv.Client().CloseIdleConnections()
		}
	})
}

func TestRelayEndsAStreamPastTheReplayLimitWithTheErrorChunk(t *testing.T) {
	testRelayOver(t, memRelay)
}

func TestPostgresRelayEndsAStreamPastTheReplayLimitWithTheErrorChunk(t *testing.T) {
	testRelayOver(t, postgresRelay)
}

// testRelayOver: a stream followed on B that passes the replay limit on A
// ends on B with the route's error chunk, never as if it were whole.
func testRelayOver(t *testing.T, stores relayStores) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			sa, sb, _ := stores(t)
			open := make(chan struct{})
			var chunks []string
			for range httpapi.ReplayLimit()/(100<<10) + 3 {
				chunks = append(chunks, strings.Repeat("y", 100<<10))
			}
			model := fake.New(fake.Turn{fake.Text("First. "), gate(open), fake.Text(chunks...)})
			a, b := twoInstances(t, sa, sb, model)
			head, rest := startOn(t, a, route)
			resumed := resumeOn(t, b, route, head)
			drained := make(chan struct{})
			go func() { // A's client keeps reading, or A's stream stalls
				defer close(drained)
				_, _ = io.Copy(io.Discard, rest)
			}()
			close(open)
			onB, _ := io.ReadAll(resumed.Body)
			resumed.Body.Close()
			<-drained
			if !strings.Contains(string(onB[max(0, len(onB)-300):]), route.tooLong) {
				t.Errorf("B's resume of a stream past the replay limit ends with %q, want the error chunk", onB[max(0, len(onB)-300):])
			}
		})
	}
}

func TestRelayResumesALongAnswerOnOneMemstore(t *testing.T) {
	testRelayLong(t, memRelay)
}

func TestPostgresRelayResumesALongAnswer(t *testing.T) {
	testRelayLong(t, postgresRelay)
}

// testRelayLong: an answer of 600 KB already streamed on A, in 600
// deltas, resumes whole on B (about a hundred frames through the store),
// then follows the rest live.
func testRelayLong(t *testing.T, stores relayStores) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			sa, sb, published := stores(t)
			open := make(chan struct{})
			var long []string
			for i := range 600 {
				long = append(long, fmt.Sprintf("Sentence %d %s. ", i, strings.Repeat("w", 1000)))
			}
			// The last text before the pause is long enough for the Engine
			// to send it at once.
			last := "Last, and a sentence past the Engine's prose chunk, sent at once. "
			model := fake.New(fake.Turn{fake.Text("First. "), fake.Text(long...), fake.Text(last), gate(open), fake.Text("The end.")})
			a, b := twoInstances(t, sa, sb, model)
			head, rest := startOn(t, a, route)
			// A's client reads on; B resumes once A has streamed it all.
			var onA bytes.Buffer
			onA.Write(head)
			read := make(chan struct{})
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				marked := false
				for {
					line, err := rest.ReadString('\n')
					onA.WriteString(line)
					if !marked && (strings.Contains(line, "sent at once") || err != nil) {
						marked = true
						close(read) // or the stream ended short: the comparison says so
					}
					if err != nil {
						return
					}
				}
			}()
			<-read
			start := time.Now()
			resumed := resumeOn(t, b, route, head)
			close(open)
			onB, err := io.ReadAll(resumed.Body)
			resumed.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("B read %d bytes in %v, %d payloads published", len(onB), time.Since(start), published())
			<-drained
			sameMeaning(t, route.name == "NDJSON", "B's resume of a long answer", onB, onA.Bytes())
		})
	}
}
