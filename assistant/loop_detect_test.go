package assistant_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

func TestTheSameCallMoreThanThreeTimesIsALoop(t *testing.T) {
	// The same arguments written four ways: key order and spacing differ.
	args := []string{`{"city":"Rome"}`, `{ "city": "Rome" }`, `{"city":"Rome"}`, `{"city" :"Rome"}`}
	var turns []fake.Turn
	for i, a := range args {
		turns = append(turns, fake.Turn{fake.CallTool("c"+string(rune('1'+i)), "get_weather", a)})
	}
	turns = append(turns, fake.Turn{fake.Text("Enough.")})
	h := newHarness(t, fake.New(turns...), func(c *assistant.Config) { c.MaxToolRounds = 6 })
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.runs["get_weather"].Load(); n != 3 {
		t.Errorf("the tool ran %d times, want 3", n)
	}
	res := find(streamed, blocks.ToolResult)
	if len(res) != 4 || res[3].ErrorCode != string(tools.CodeLoopDetected) {
		t.Errorf("results %+v, want the fourth identical call refused with LOOP_DETECTED", res)
	}
}

func TestEveryToolCallIsAuditedWithoutItsArguments(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Quito"}`), fake.CallTool("c2", "admin_stats", `{}`)},
		fake.Turn{fake.Text("ok")},
	)
	h := newHarness(t, p)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditToolCall})
	if len(ev) != 2 {
		t.Fatalf("%d tool-call audit rows, want 2 (refused calls too)", len(ev))
	}
	byTool := map[string]map[string]any{}
	for _, e := range ev {
		if e.ActorID != "alice" || e.ThreadID != reply.ThreadID || strings.Contains(string(e.Data), "Quito") {
			t.Errorf("audit row %+v: want alice's thread and no raw arguments", e)
		}
		var d map[string]any
		_ = json.Unmarshal(e.Data, &d)
		byTool[d["tool"].(string)] = d
		// Written as a map of the same fields would be: sorted keys, so
		// rows from before and after read alike.
		if again, _ := json.Marshal(d); string(again) != string(e.Data) {
			t.Errorf("audit data %s, want %s", e.Data, again)
		}
	}
	if w := byTool["get_weather"]; w["ok"] != true || len(w["args_sha256"].(string)) != 64 || w["transport"] != "chat" {
		t.Errorf("get_weather row %v", w)
	}
	if s := byTool["admin_stats"]; s["ok"] != false || s["code"] != "UNKNOWN_TOOL" {
		t.Errorf("admin_stats row %v, want the refusal recorded", s)
	}
}

func TestAHugeToolResultIsClampedForTheModel(t *testing.T) {
	big := tools.Must(tools.New(tools.Spec{Name: "list_all", Description: "Lists everything."},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			rows := make([]string, 20_000)
			for i := range rows {
				rows[i] = "row"
			}
			return tools.OK("20000 rows", rows), nil
		}))
	p := fake.New(fake.Turn{fake.CallTool("c1", "list_all", `{}`)}, fake.Turn{fake.Text("Many rows.")})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Tools, _ = tools.NewSet(big)
		c.Authorizer = assistant.RoleAuthorizer{Everyone: []string{"*"}}
		c.ContextWindow = 8192 // a 4 KiB result budget
	})
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "x"}); err != nil {
		t.Fatal(err)
	}
	msgs := p.Requests()[1].Messages
	got := msgs[len(msgs)-1].Content
	if len(got) > 4096+512 || !strings.Contains(got, "_truncated") || !strings.Contains(got, "of 20000 items") {
		t.Errorf("the model got %d bytes (%.80q...), want about 4 KiB with a note", len(got), got)
	}
}
