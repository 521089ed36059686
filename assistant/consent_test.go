package assistant_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

func TestExecuteForAProgramRunsAChangeOnlyWithTheUsersConsent(t *testing.T) {
	h := newHarness(t, fake.New())
	ctx := context.Background()
	asked := 0
	answer := func(c assistant.Consent) assistant.ConfirmFunc {
		return func(_ context.Context, conf assistant.Confirmation) assistant.Consent {
			asked++
			if conf.Tool != "add_note" || conf.Effect != tools.Mutate || conf.Summary == "" {
				t.Errorf("asked to confirm %+v", conf)
			}
			return c
		}
	}
	run := func(c assistant.Consent) tools.Result {
		t.Helper()
		r, err := h.eng.ExecuteTool(ctx, alice, assistant.ExecuteRequest{Tool: "add_note", Transport: "mcp", Confirm: answer(c)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(assistant.Declined); r.OK || r.Error.Code != tools.CodeDeclined || h.runs["add_note"].Load() != 0 {
		t.Fatalf("declined: %+v, ran %d", r, h.runs["add_note"].Load())
	}
	r := run(assistant.NoAnswer)
	if r.OK || r.Error.Code != tools.CodeNeedsApproval || h.runs["add_note"].Load() != 0 {
		t.Fatalf("unanswered: %+v, ran %d", r, h.runs["add_note"].Load())
	}
	raw, _ := json.Marshal(r.Data)
	var pending struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(raw, &pending); err != nil || pending.ThreadID == "" {
		t.Fatalf("unanswered: data %s names no thread", raw)
	}
	ps, err := h.eng.Proposals(ctx, alice, pending.ThreadID)
	if err != nil || len(ps) != 1 || ps[0].Tool != "add_note" {
		t.Fatalf("the app shows %+v %v, want add_note's card", ps, err)
	}
	// The call id is seen wherever the call is (blocks, model messages,
	// audit): none of the card's token is in it.
	stored, err := h.store.ListProposals(ctx, pending.ThreadID)
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored proposals %+v, %v", stored, err)
	}
	if id := strings.TrimPrefix(stored[0].CallID, "mcp_"); len(id) < 8 || strings.Contains(stored[0].Token, id[:8]) {
		t.Errorf("call id %q shares the card token's characters", stored[0].CallID)
	}
	if r := run(assistant.Approved); !r.OK || h.runs["add_note"].Load() != 1 || asked != 3 {
		t.Fatalf("approved: %+v, ran %d, asked %d", r, h.runs["add_note"].Load(), asked)
	}
	ev, _ := h.store.ListAudit(ctx, store.AuditFilter{Kind: assistant.AuditToolCall})
	approvals := map[string]int{}
	for _, e := range ev {
		var d struct{ Transport, Approval string }
		_ = json.Unmarshal(e.Data, &d)
		if d.Transport != "mcp" {
			t.Errorf("audit row %s, want transport mcp", e.Data)
		}
		approvals[d.Approval]++
	}
	if approvals["declined"] != 1 || approvals["pending"] != 1 || approvals["confirmed"] != 1 {
		t.Errorf("audit approvals %v", approvals)
	}
}

func TestExecuteForAProgramNeverAsksAboutAReadOrARefusedCall(t *testing.T) {
	h := newHarness(t, fake.New())
	ctx := context.Background()
	never := func(context.Context, assistant.Confirmation) assistant.Consent {
		t.Error("asked to confirm")
		return assistant.Approved
	}
	if r, err := h.eng.ExecuteTool(ctx, alice, assistant.ExecuteRequest{Tool: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`), Confirm: never}); err != nil || !r.OK {
		t.Errorf("read: %+v %v", r, err)
	}
	if r, err := h.eng.ExecuteTool(ctx, alice, assistant.ExecuteRequest{Tool: "add_note", Args: json.RawMessage(`{"x":1}`), Confirm: never}); err != nil || r.OK || r.Error.Code != tools.CodeInvalidArgs {
		t.Errorf("invalid arguments: %+v %v, want INVALID_ARGS", r, err)
	}
	if _, err := h.eng.ExecuteTool(ctx, alice, assistant.ExecuteRequest{Tool: "get_weather", Args: json.RawMessage(`{"city":"O\u0000slo"}`), Confirm: never}); !errors.Is(err, assistant.ErrInvalidRequest) {
		t.Errorf("NUL: %v, want ErrInvalidRequest", err)
	}
	if _, err := h.eng.ExecuteTool(ctx, alice, assistant.ExecuteRequest{Tool: "admin_stats", Transport: "mcp", Confirm: never}); !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("staff tool: %v, want ErrNotFound", err)
	}
	if h.runs["add_note"].Load() != 0 || h.runs["admin_stats"].Load() != 0 {
		t.Error("a refused call ran")
	}
}

func TestExecuteForAProgramSurvivesDeeplyNestedArguments(t *testing.T) {
	h := newHarness(t, fake.New())
	never := func(context.Context, assistant.Confirmation) assistant.Consent {
		t.Error("asked to confirm")
		return assistant.Approved
	}
	for _, depth := range []int{100, 5000} {
		args := json.RawMessage(`{"city":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
		for _, tool := range []string{"get_weather", "add_note"} {
			r, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: tool, Args: args, Transport: "mcp", Confirm: never})
			if err != nil && !errors.Is(err, assistant.ErrTooLarge) {
				t.Errorf("%s at depth %d: %v", tool, depth, err)
			}
			if r.OK {
				t.Errorf("%s at depth %d ran", tool, depth)
			}
		}
	}
	if h.runs["get_weather"].Load() != 0 || h.runs["add_note"].Load() != 0 {
		t.Error("nested arguments ran a tool")
	}
}
