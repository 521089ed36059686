package assistant_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Regressions from the review of thread management and feedback.

// A hard delete on one instance stops a turn running on another within its
// poll, like Cancel: nothing more of it runs or is charged.
func TestPostgresDeleteThreadStopsATurnOnAnotherInstance(t *testing.T) {
	a, b, _, _ := instances(t, fake.New(slowTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	start := time.Now()
	if err := b.DeleteThread(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	bs := <-rest
	d := time.Since(start)
	last := bs[len(bs)-1]
	t.Logf("turn on the other instance ended %v after the delete; %d more blocks; last %s %q", d, len(bs), last.Kind, last.ErrorCode)
	if d > time.Second {
		t.Errorf("the turn on the other instance ran on for %v after its thread was deleted, want stopped like Cancel (< 1s)", d)
	}
	_ = a.Wait(context.Background())
}

// A local hard delete stops the running turn and waits for it; the turn's
// writes that find the rows gone are no errors, and the user is told the
// conversation was deleted.
func TestDeleteThreadWhileATurnRunsIsQuiet(t *testing.T) {
	var logs syncBuf
	h := newHarness(t, fake.New(slowTurn()), func(c *assistant.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	if err := h.eng.DeleteThread(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	bs := <-rest
	_ = h.eng.Wait(context.Background())
	last := bs[len(bs)-1]
	t.Logf("user saw last block %s %+v", last.Kind, last)
	t.Logf("logs:\n%s", logs.String())
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a deleted thread's stopped turn logged errors")
	}
	if last.Kind != blocks.Error || last.Content != "This conversation was deleted." {
		t.Errorf("the stream ended with %+v, want the conversation-deleted block", last)
	}
}

// The comment's limit holds after invalid UTF-8 is replaced, which can
// triple its length.
func TestFeedbackCommentLimitCountsReplacedBytes(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, p)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "q"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.SetFeedback(context.Background(), alice, reply.ThreadID, reply.MessageID,
		assistant.FeedbackInput{Rating: store.RatingDown, Comment: strings.Repeat("\xffa", assistant.MaxFeedbackCommentBytes/2)})
	if !errors.Is(err, assistant.ErrTooLarge) {
		t.Errorf("a comment of %d bytes once made valid: err = %v, want ErrTooLarge", 2*assistant.MaxFeedbackCommentBytes, err)
	}
}
