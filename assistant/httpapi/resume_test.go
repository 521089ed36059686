package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
)

// A client that leaves an NDJSON stream (a page reloaded mid-answer) finds
// it again at GET /api/chat/threads/{id}/stream: replayed from its first
// block and followed to its end. Only its owner does, and only while it
// runs.
func TestStreamResumeReplaysTheRunningTurnToItsEnd(t *testing.T) {
	release := make(chan struct{})
	model := fake.New(fake.Turn{fake.Text("First. "), fake.Func(func(ctx context.Context, _ *providers.Request) fake.Turn {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return fake.Turn{fake.Text("Second.")}
	})})
	h := newHarness(t, model)
	if resp := h.do("GET", "/api/chat/threads/nothing/stream", "alice", ""); discard(resp) != http.StatusNoContent {
		t.Errorf("resume with nothing streaming: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	resp := h.request(ctx, "POST", "/api/chat/stream", "alice", streamBody(t, httpapi.StreamRequest{Message: "hi"}))
	br := bufio.NewReader(resp.Body)
	var thread string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		b, err := blocks.ParseNDJSON([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		if b.Kind == blocks.Meta && thread == "" {
			thread = b.Meta.ThreadID
		}
		if strings.Contains(b.Content, "First") {
			break
		}
	}
	cancel() // the page reloads
	resp.Body.Close()
	path := "/api/chat/threads/" + thread + "/stream"
	if r := h.do("GET", path, "bob", ""); discard(r) != http.StatusNoContent {
		t.Errorf("another user resumed alice's stream: %d", r.StatusCode)
	}
	resumed := h.do("GET", path, "alice", "")
	if resumed.StatusCode != http.StatusOK || resumed.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("resume: %d %q", resumed.StatusCode, resumed.Header.Get("Content-Type"))
	}
	close(release)
	raw, err := io.ReadAll(resumed.Body)
	resumed.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	bs := parseLines(t, raw)
	text := markdownOf(bs)
	first, last := bs[0], bs[len(bs)-1]
	if first.Kind != blocks.Meta || first.Meta.ThreadID != thread || first.Meta.MessageID == "" {
		t.Errorf("the resume does not start with the turn's meta block: %+v", first)
	}
	if text != "First. Second." || last.Kind != blocks.Meta || last.Meta.Finish == "" {
		t.Errorf("the resume did not follow the turn to its end: %q, last %+v", text, last)
	}
	if r := h.do("GET", path, "alice", ""); discard(r) != http.StatusNoContent {
		t.Errorf("resume after the end: %d", r.StatusCode)
	}
}
