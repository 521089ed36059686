package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant/mcpserver"
)

// initialize opens a session by hand, as any HTTP client can, and returns
// the status.
func initialize(t *testing.T, url, user string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Demo-User", user)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// One user holds at most MaxSessionsPerUser sessions; another user is not
// held back by them, and a closed session frees its place.
func TestSessionsPerUserAreBounded(t *testing.T) {
	h := newHarness(t, mcpserver.Config{MaxSessionsPerUser: 3})
	for i := range 3 {
		if code := initialize(t, h.url, "alice"); code != http.StatusOK {
			t.Fatalf("session %d: %d", i+1, code)
		}
	}
	if code := initialize(t, h.url, "alice"); code != http.StatusTooManyRequests {
		t.Fatalf("a fourth session: %d, want 429", code)
	}
	if code := initialize(t, h.url, "bob"); code != http.StatusOK {
		t.Fatalf("bob's first session: %d", code)
	}
	// A client's session closed (DELETE) frees a place.
	h2 := newHarness(t, mcpserver.Config{MaxSessionsPerUser: 1})
	cs := h2.connect("alice", nil)
	if code := initialize(t, h2.url, "alice"); code != http.StatusTooManyRequests {
		t.Fatalf("past the cap: %d, want 429", code)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if code := initialize(t, h2.url, "alice"); code != http.StatusOK {
		t.Fatalf("after closing: %d, want 200", code)
	}
}
