package mcptools_test

import (
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools/mcptools"
)

// In an Engine, imported tools are gated like the host's: a change becomes
// a confirm card and never reaches the server, and only an idempotent read
// is answered again from the knowledge gate.
func TestEngineGatesImportedTools(t *testing.T) {
	cs, r := connect(t)
	reg, err := mcptools.NewRegistry(t.Context(), cs, mcptools.Options{Reuse: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	model := fake.New(
		fake.Turn{fake.CallTool("c1", "read_file", `{"path":"a"}`)}, fake.Turn{fake.Text("Read.")},
		fake.Turn{fake.CallTool("c2", "read_file", `{"path":"a"}`)}, fake.Turn{fake.Text("Read again.")},
		fake.Turn{fake.CallTool("c3", "search", `{}`)}, fake.Turn{fake.Text("Searched.")},
		fake.Turn{fake.CallTool("c4", "search", `{}`)}, fake.Turn{fake.Text("Searched again.")},
		fake.Turn{fake.CallTool("c5", "rm_rf", `{"path":"/"}`)},
	)
	eng, err := assistant.New(assistant.Config{
		Provider:   model,
		Store:      memstore.New(),
		Tools:      reg,
		Authorizer: assistant.RoleAuthorizer{Tools: map[string][]string{"user": {"category:" + mcptools.DefaultCategory}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	u := parley.User{ID: "alice", Roles: []string{"user"}}
	thread := ""
	turn := func(msg string) assistant.Reply {
		t.Helper()
		rep, err := assistant.Collect(eng.Stream(t.Context(), u, assistant.Request{ThreadID: thread, Message: msg}))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		thread = rep.ThreadID
		return rep
	}
	turn("read a")
	turn("read a again")
	if n := r.reads.Load(); n != 1 {
		t.Errorf("read_file (idempotent read) reached the server %d times, want 1 (then reused)", n)
	}
	turn("search")
	turn("search again")
	if n := r.reads.Load(); n != 3 {
		t.Errorf("the server ran %d reads, want 3: search (not idempotent) is never reused", n)
	}
	rep := turn("delete everything")
	cards := 0
	for _, b := range rep.Blocks {
		if b.Kind == blocks.Confirm && b.Name == "rm_rf" && b.Effect == "destructive" {
			cards++
		}
	}
	if cards != 1 || r.writes.Load() != 0 {
		t.Errorf("rm_rf: %d destructive cards, %d runs; want a card and no run", cards, r.writes.Load())
	}
}
