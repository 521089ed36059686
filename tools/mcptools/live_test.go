package mcptools_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/mcptools"
)

// TestLiveFollowsTheServersList: a tool the server adds after the client
// connected is offered once the server says its list changed, and a tool
// it removes is gone; joined with the host's tools, the host's own keep
// their names.
func TestLiveFollowsTheServersList(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	answer := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: obj}, answer)
	live := mcptools.NewLive(mcptools.Options{Prefix: "r_"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "parley-test", Version: "1"}, &mcp.ClientOptions{ToolListChangedHandler: live.OnListChanged})
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	if err := live.Refresh(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	host, err := tools.NewSet(tools.Must(tools.New(tools.Spec{Name: "r_search", Description: "The host's own.", Category: "general"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.OK("host", nil), nil })))
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.Join(host, live)
	if got := names(reg.All()); !slices.Equal(got, []string{"r_search"}) {
		t.Fatalf("joined tools %v, want the host's r_search only", got)
	}
	srv.AddTool(&mcp.Tool{Name: "fetch", InputSchema: obj}, answer)
	waitFor(t, func() bool { _, ok := reg.Lookup("r_fetch"); return ok }, "the added tool")
	srv.RemoveTools("fetch")
	waitFor(t, func() bool { _, ok := reg.Lookup("r_fetch"); return !ok }, "the removed tool to go")
	if tl, _ := reg.Lookup("r_search"); tl.Spec().Description != "The host's own." {
		t.Errorf("r_search is %q, want the host's", tl.Spec().Description)
	}
}

func names(ts []tools.BaseTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}
