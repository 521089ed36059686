package assistant_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

var (
	alice = parley.User{ID: "alice", Roles: []string{"user"}}
	bob   = parley.User{ID: "bob", Roles: []string{"user"}}
	sam   = parley.User{ID: "sam", Roles: []string{"user", "staff"}}
)

// harness is an Engine over a memstore with counting tools.
type harness struct {
	eng   *assistant.Engine
	store *memstore.Store
	runs  map[string]*atomic.Int64 // tool name -> executions
	tools tools.Registry
}

// registry returns the harness's counting tools, for Engines built by hand.
func (h *harness) registry() tools.Registry { return h.tools }

type cityArgs struct {
	City string `json:"city"`
}

func newHarness(t testing.TB, p providers.Provider, mod ...func(*assistant.Config)) *harness {
	t.Helper()
	h := &harness{store: memstore.New(), runs: map[string]*atomic.Int64{}}
	counter := func(name string) *atomic.Int64 {
		c := new(atomic.Int64)
		h.runs[name] = c
		return c
	}
	weatherRuns, statsRuns, addRuns, panicRuns := counter("get_weather"), counter("admin_stats"), counter("add_note"), counter("explode")
	reg, err := tools.NewSet(
		// The weather may be reused for a while, within KnowledgeMaxAge:
		// the knowledge gate's tests and regressions rely on it.
		tools.Must(tools.New(tools.Spec{Name: "get_weather", Description: "Weather for a city.", Category: "weather", Reuse: 10 * time.Minute},
			func(_ context.Context, c tools.Call, in cityArgs) (tools.Result, error) {
				weatherRuns.Add(1)
				return tools.OK("sunny in "+in.City, map[string]any{"city": in.City, "sky": "sunny", "user": c.User.ID}), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "admin_stats", Description: "Staff only.", Category: "admin"},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				statsRuns.Add(1)
				return tools.OK("42 users", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "add_note", Description: "Adds a note.", Category: "weather", Effect: tools.Mutate},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				addRuns.Add(1)
				return tools.OK("added", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "explode", Description: "Panics.", Category: "weather"},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				panicRuns.Add(1)
				panic("boom: secret internal state")
			})),
	)
	if err != nil {
		t.Fatal(err)
	}
	h.tools = reg
	cfg := assistant.Config{
		Provider: p,
		Store:    h.store,
		Tools:    reg,
		Authorizer: assistant.RoleAuthorizer{
			Tools: map[string][]string{"user": {"category:weather"}, "staff": {"*"}},
			Staff: []string{"staff"},
		},
	}
	for _, m := range mod {
		m(&cfg)
	}
	h.eng, err = assistant.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) collect(t *testing.T, u parley.User, req assistant.Request) (assistant.Reply, []blocks.Block, error) {
	t.Helper()
	var streamed []blocks.Block
	seq := h.eng.Stream(context.Background(), u, req)
	reply, err := assistant.Collect(func(yield func(blocks.Block) bool) {
		for b := range seq {
			streamed = append(streamed, b)
			if !yield(b) {
				return
			}
		}
	})
	return reply, streamed, err
}

// messages returns the thread's stored messages.
func (h *harness) messages(t *testing.T, threadID string) []store.Message {
	t.Helper()
	msgs, err := h.store.ListMessages(context.Background(), threadID)
	if err != nil {
		t.Fatalf("ListMessages(%q): %v", threadID, err)
	}
	return msgs
}

// waitStatus polls until the message leaves the streaming status.
func (h *harness) waitStatus(t *testing.T, id string) store.Message {
	t.Helper()
	// A stopped turn's reply gets its status at once and its drained usage
	// at the end: wait for the turns to finish, then for the status.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = h.eng.Wait(ctx)
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := h.store.GetMessage(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != store.StatusStreaming {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s still streaming after 5s", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func kinds(bs []blocks.Block) []blocks.Kind {
	out := make([]blocks.Kind, len(bs))
	for i, b := range bs {
		out[i] = b.Kind
	}
	return out
}

func find(bs []blocks.Block, k blocks.Kind) []blocks.Block {
	var out []blocks.Block
	for _, b := range bs {
		if b.Kind == k {
			out = append(out, b)
		}
	}
	return out
}

// toolNames lists the host tools a request offered, sorted: the Engine's
// own tools (ask_user, search_tools) are left out.
func toolNames(req providers.Request) []string {
	var names []string
	for _, d := range req.Tools {
		if d.Name == assistant.AskUserName || d.Name == assistant.SearchToolsName {
			continue
		}
		names = append(names, d.Name)
	}
	slices.Sort(names)
	return names
}

// settleGoroutines waits until the goroutine count is back to at most
// base, not counting pgx's background readers (sqltest.Goroutines).
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	sqltest.SettleGoroutines(t, base, 3*time.Second, nil)
}
