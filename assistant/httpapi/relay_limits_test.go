package httpapi_test

import (
	"bufio"
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers/fake"
)

func startUIAs(t *testing.T, h *harness, user, chat string) {
	t.Helper()
	resp := h.request(t.Context(), "POST", "/api/chat/ui", user, uiBody(t, chat, "submit-message", "", userMsg("u1", "hi")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post: %d", discard(resp))
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "First") {
			go func() { _, _ = br.WriteTo(discardW{}) }()
			return
		}
	}
}

type discardW struct{}

func (discardW) Write(p []byte) (int, error) { return len(p), nil }

// Bob resumes his own stream on B 64 times and leaves each time: A relays
// at most maxRelaysPerOwner of one user's streams at once, and stops a
// relay whose follower said it left, so alice's resume of her live stream
// on B still gets it.
func TestRelayOneUsersResumesLeaveSlotsForOthers(t *testing.T) {
	for _, stores := range []struct {
		name string
		f    relayStores
	}{{"mem", memRelay}, {"pg", postgresRelay}} {
		t.Run(stores.name, func(t *testing.T) {
			sa, sb, published := stores.f(t)
			open := make(chan struct{})
			turn := fake.Turn{fake.Text("First. "), gate(open), fake.Text("Second.")}
			model := fake.New(turn, turn)
			a, b := twoInstances(t, sa, sb, model)
			defer close(open)
			startUIAs(t, a, "bob", "bobchat")
			startUIAs(t, a, "alice", "alicechat")
			g0 := runtime.NumGoroutine()
			for i := range 64 {
				ctx, cancel := context.WithCancel(context.Background())
				resp := b.request(ctx, "GET", "/api/chat/ui/bobchat/stream", "bob", "")
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("bob resume %d: %d", i, resp.StatusCode)
				}
				cancel()
				resp.Body.Close()
			}
			time.Sleep(500 * time.Millisecond)
			t.Logf("goroutines after bob's 64 resumes left: %d more than before; payloads published so far %d", runtime.NumGoroutine()-g0, published())
			start := time.Now()
			resp := b.do("GET", "/api/chat/ui/alicechat/stream", "alice", "")
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("alice's resume of her live stream on B: %d after %v, want 200", resp.StatusCode, time.Since(start))
			}
		})
	}
}
