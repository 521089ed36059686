package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
)

// Staff reading alice's thread, as NDJSON blocks or as AI SDK history,
// see her pending card and its state but never its token; alice does.
func TestStaffReadThreadsWithoutCardTokens(t *testing.T) {
	model := fake.New(fake.Turn{fake.CallTool("c1", "add_item", `{"name":"milk"}`)})
	var runs atomic.Int64
	h := newHarness(t, model, counted(&runs))
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "add milk"})
	thread := threadIDOf(t, bs)
	token := ofKind(bs, blocks.Confirm)[0].ID

	staff := h.getThread("sam", thread)
	var card blocks.Block
	for _, m := range staff.Messages {
		if cs := ofKind(m.Blocks, blocks.Confirm); len(cs) > 0 {
			card = cs[0]
		}
	}
	if card.Kind != blocks.Confirm || card.ID == token || card.Name != "add_item" {
		t.Errorf("staff's card %+v, want add_item without the token %q", card, token)
	}
	if len(staff.Proposals) != 1 || staff.Proposals[0].Token != card.ID || staff.Proposals[0].Status != "pending" {
		t.Errorf("staff's proposals %+v, want the card's stand-in, pending", staff.Proposals)
	}
	history := func(user string) string {
		resp := h.do(http.MethodGet, "/api/chat/ui/"+thread, user, "")
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: history %d %s", user, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := history("sam"); strings.Contains(got, token) || !strings.Contains(got, card.ID) {
		t.Errorf("staff's AI SDK history shows the token, or not the card: %s", got)
	}

	own := h.getThread("alice", thread)
	if len(own.Proposals) != 1 || own.Proposals[0].Token != token {
		t.Errorf("alice's proposals %+v, want her token", own.Proposals)
	}
	if got := history("alice"); !strings.Contains(got, token) {
		t.Errorf("alice's AI SDK history lacks her token: %s", got)
	}
}
