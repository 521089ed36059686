package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

// refusing is a relaying Store that, while down is set, fails as a
// database out of connections does: its relay's Publish, and its thread
// reads too when reads is set; or, when lost is set, it closes each new
// subscription at once instead, as sqlstore does when its LISTEN
// connection fails.
type refusing struct {
	relayStore
	down        atomic.Bool
	reads, lost bool
}

var errRefused = errors.New("failed to connect: FATAL: sorry, too many clients already (SQLSTATE 53300)")

func (s *refusing) GetThread(ctx context.Context, id string) (store.Thread, error) {
	if s.reads && s.down.Load() {
		return store.Thread{}, errRefused
	}
	return s.relayStore.GetThread(ctx, id)
}

func (s *refusing) ListMessages(ctx context.Context, threadID string) ([]store.Message, error) {
	if s.reads && s.down.Load() {
		return nil, errRefused
	}
	return s.relayStore.ListMessages(ctx, threadID)
}

func (s *refusing) Publish(ctx context.Context, topic string, p []byte) error {
	if !s.lost && s.down.Load() {
		return errRefused
	}
	return s.relayStore.Publish(ctx, topic, p)
}

func (s *refusing) Subscribe(ctx context.Context, topic string) (<-chan []byte, error) {
	if s.lost && s.down.Load() {
		ch := make(chan []byte)
		close(ch)
		return ch, nil
	}
	return s.relayStore.Subscribe(ctx, topic)
}

// A resume on instance B of a stream running on A, while the database
// refuses B, is an error the client can show, on both routes, not 204:
// the AI SDK takes 204 for "no stream", as if the answer had ended. Once
// the database answers again the same resume gets the stream: nothing
// was lost.
func TestAResumeWhileTheStoreRefusesIsAnErrorNotNoStream(t *testing.T) {
	for _, route := range relayRoutes {
		for _, what := range []string{"store", "relay", "subscription"} {
			t.Run(route.name+"/"+what, func(t *testing.T) {
				shared := memstore.New()
				sb := &refusing{relayStore: shared, reads: what == "store", lost: what == "subscription"}
				open := make(chan struct{})
				turn := fake.Turn{fake.Text("First. "), gate(open), fake.Text("Second.")}
				a, b := twoInstances(t, shared, sb, fake.New(turn, turn))
				defer close(open)
				head, _ := startOn(t, a, route)
				path := route.resume(route.idOf(t, head))

				sb.down.Store(true)
				resp := b.do("GET", path, "alice", "")
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusInternalServerError {
					t.Fatalf("resume while the store refuses: %d %q, want 500", resp.StatusCode, body)
				}
				if strings.Contains(string(body), "too many clients") || strings.Contains(string(body), "SQLSTATE") {
					t.Errorf("the store's error reached the client: %q", body)
				}
				if route.name == "NDJSON" {
					var e struct {
						Error struct{ Code string } `json:"error"`
					}
					if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "internal" {
						t.Errorf("body %q (%v), want the internal error", body, err)
					}
				} else if !strings.Contains(string(body), "Please try again") {
					t.Errorf("body %q, want the safe message as text", body)
				}

				sb.down.Store(false)
				r := resumeOn(t, b, route, head)
				defer r.Body.Close()
				line := make([]byte, 1)
				if _, err := r.Body.Read(line); err != nil {
					t.Fatalf("the resumed stream after the store came back: %v", err)
				}
			})
		}
	}
}

// An id that can name no stored row (not valid UTF-8) is no stream, 204,
// without a read: PostgreSQL fails such a lookup, which would otherwise
// let anyone signed in cause 500s and error logs at will.
func TestAResumeOfAnIDThatNamesNoRowReadsNothing(t *testing.T) {
	s := &refusing{relayStore: memstore.New(), reads: true}
	s.down.Store(true) // any read would fail
	_, b := twoInstances(t, memstore.New(), s, fake.New())
	for _, path := range []string{"/api/chat/threads/%ff/stream", "/api/chat/ui/%ff/stream"} {
		if got := discard(b.do("GET", path, "bob", "")); got != http.StatusNoContent {
			t.Errorf("GET %s: %d, want 204", path, got)
		}
	}
}
