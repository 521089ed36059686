package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/mcptools"
)

type remote struct {
	writes atomic.Int32 // calls of the server's changing tools
	reads  atomic.Int32
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// connect runs an MCP server in process, over the in-memory transport, and
// returns a client session to it.
func connect(t *testing.T) (*mcp.ClientSession, *remote) {
	t.Helper()
	r := &remote{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	add := func(tl *mcp.Tool, h mcp.ToolHandler) {
		if tl.InputSchema == nil {
			tl.InputSchema = obj
		}
		srv.AddTool(tl, h)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add(&mcp.Tool{Name: "read_file", Description: "Read a file.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.reads.Add(1)
			var in struct{ Path string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return text("contents of " + in.Path + "\nsecond line"), nil
		})
	add(&mcp.Tool{Name: "search", Description: "Search (live).", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.reads.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "2 hits"}}, StructuredContent: map[string]any{"hits": 2}}, nil
		})
	add(&mcp.Tool{Name: "write_file", Description: "Write a file.", Annotations: &mcp.ToolAnnotations{DestructiveHint: no()}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.writes.Add(1)
			return text("written"), nil
		})
	add(&mcp.Tool{Name: "rm.rf", Description: "Delete a tree.", Annotations: &mcp.ToolAnnotations{DestructiveHint: yes()}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.writes.Add(1)
			return text("deleted"), nil
		})
	add(&mcp.Tool{Name: "deploy"}, // no annotations, no description
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.writes.Add(1)
			return text("deployed"), nil
		})
	add(&mcp.Tool{Name: "fails", Description: "Always fails.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}, nil
		})
	add(&mcp.Tool{Name: "huge", Description: "A large result.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Repeat("é", 1<<16)), nil
		})
	add(&mcp.Tool{Name: "bad_schema", Description: "Its schema points outside.", InputSchema: json.RawMessage(`{"type":"object","$ref":"http://example.com/schema.json"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("?"), nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "parley-test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs, r
}

func byName(t *testing.T, ts []tools.BaseTool) map[string]tools.BaseTool {
	t.Helper()
	m := map[string]tools.BaseTool{}
	for _, tl := range ts {
		m[tl.Spec().Name] = tl
	}
	return m
}

func TestImportTakesEffectsFromAnnotations(t *testing.T) {
	cs, _ := connect(t)
	ts, err := mcptools.Import(t.Context(), cs, mcptools.Options{Prefix: "fs_"})
	if err != nil {
		t.Fatal(err)
	}
	got := byName(t, ts)
	want := map[string]tools.Effect{
		"fs_read_file": tools.Read, "fs_search": tools.Read, "fs_fails": tools.Read, "fs_huge": tools.Read,
		"fs_write_file": tools.Mutate, "fs_rm_rf": tools.Destructive, "fs_deploy": tools.Mutate,
	}
	if len(got) != len(want) {
		t.Errorf("imported %d tools, want %d (bad_schema left out)", len(got), len(want))
	}
	for name, effect := range want {
		tl, ok := got[name]
		if !ok {
			t.Errorf("%s not imported", name)
			continue
		}
		s := tl.Spec()
		if s.Effect != effect || s.Category != mcptools.DefaultCategory || s.Reuse != 0 {
			t.Errorf("%s: effect %q category %q reuse %v, want %q %q 0", name, s.Effect, s.Category, s.Reuse, effect, mcptools.DefaultCategory)
		}
	}
	if d := got["fs_deploy"].Spec().Description; !strings.Contains(d, "deploy") {
		t.Errorf("deploy's description %q does not name it", d)
	}
	if _, err := tools.NewSet(ts...); err != nil {
		t.Errorf("the imported tools are not a valid registry: %v", err)
	}
}

func TestOnlyIdempotentReadsAreReused(t *testing.T) {
	cs, _ := connect(t)
	ts, err := mcptools.Import(t.Context(), cs, mcptools.Options{Reuse: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for name, tl := range byName(t, ts) {
		want := time.Duration(0)
		if name == "read_file" {
			want = time.Minute
		}
		if got := tl.Spec().Reuse; got != want {
			t.Errorf("%s: Reuse %v, want %v", name, got, want)
		}
	}
}

func TestImportedToolsCallTheServer(t *testing.T) {
	cs, r := connect(t)
	reg, err := mcptools.NewRegistry(t.Context(), cs, mcptools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(name, args string, approved bool) tools.Result {
		t.Helper()
		tl, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		res, err := tools.Invoke(t.Context(), tl, tools.Call{ID: "c1", Args: json.RawMessage(args), Approved: approved})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := invoke("read_file", `{"path":"a.txt"}`, false); !res.OK || res.Summary != "contents of a.txt" {
		t.Errorf("read_file: %+v", res)
	}
	if res := invoke("search", `{}`, false); !res.OK || string(tools.MarshalForModel(res)) == "" || !strings.Contains(string(tools.MarshalForModel(res)), `"hits":2`) {
		t.Errorf("search: %s, want the structured content as data", tools.MarshalForModel(res))
	}
	res := invoke("fails", `{}`, false)
	if res.OK || res.Error == nil || res.Error.Code != tools.CodeInternal || strings.Contains(res.Error.Message, "no such file") ||
		!strings.Contains(string(tools.MarshalForModel(res)), "no such file") {
		t.Errorf("fails: %s, want a failure with the server's text in data only", tools.MarshalForModel(res))
	}
	if res := invoke("huge", `{}`, false); !res.OK || len(tools.MarshalForModel(res)) > mcptools.DefaultMaxResultBytes+1024 {
		t.Errorf("huge: %d bytes, want at most about %d", len(tools.MarshalForModel(res)), mcptools.DefaultMaxResultBytes)
	}
	for _, name := range []string{"write_file", "rm_rf", "deploy"} {
		if res := invoke(name, `{}`, false); res.OK || res.Error.Code != tools.CodeNeedsApproval {
			t.Errorf("unapproved %s: %+v, want NEEDS_APPROVAL", name, res)
		}
	}
	if n := r.writes.Load(); n != 0 {
		t.Fatalf("unapproved changes reached the server %d times", n)
	}
	if res := invoke("rm_rf", `{}`, true); !res.OK {
		t.Errorf("approved rm_rf: %+v", res)
	}
	if n := r.writes.Load(); n != 1 {
		t.Errorf("the server ran %d changes, want the approved one", n)
	}
	tl, _ := reg.Lookup("read_file")
	reads := r.reads.Load()
	res, err = tools.Invoke(t.Context(), tl, tools.Call{Args: json.RawMessage(`{"path":7}`)})
	if !errors.Is(err, tools.ErrInvalidArgs) || res.OK || res.Error.Code != tools.CodeInvalidArgs || r.reads.Load() != reads {
		t.Errorf("read_file with a number: %+v %v, want INVALID_ARGS before the server", res, err)
	}
}

func TestClosedSessionIsAnErrorNotAPanic(t *testing.T) {
	cs, _ := connect(t)
	reg, err := mcptools.NewRegistry(t.Context(), cs, mcptools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	tl, _ := reg.Lookup("read_file")
	res, err := tools.Invoke(t.Context(), tl, tools.Call{Args: json.RawMessage(`{}`)})
	if !errors.Is(err, mcp.ErrConnectionClosed) || res.OK {
		t.Errorf("call on a closed session: %+v %v, want ErrConnectionClosed", res, err)
	}
	if _, err := mcptools.Import(t.Context(), cs, mcptools.Options{}); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("Import on a closed session: %v, want ErrConnectionClosed", err)
	}
	if _, err := mcptools.Import(t.Context(), nil, mcptools.Options{}); !errors.Is(err, mcptools.ErrNoSession) {
		t.Errorf("Import(nil): %v, want ErrNoSession", err)
	}
}

func TestEffectOfUnknownIsMutate(t *testing.T) {
	cases := []struct {
		a    *mcp.ToolAnnotations
		want tools.Effect
	}{
		{nil, tools.Mutate},
		{&mcp.ToolAnnotations{}, tools.Mutate},
		{&mcp.ToolAnnotations{IdempotentHint: true}, tools.Mutate},
		{&mcp.ToolAnnotations{DestructiveHint: no()}, tools.Mutate},
		{&mcp.ToolAnnotations{DestructiveHint: yes()}, tools.Destructive},
		{&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: yes()}, tools.Read},
	}
	for _, c := range cases {
		if got := mcptools.EffectOf(c.a); got != c.want {
			t.Errorf("EffectOf(%+v) = %q, want %q", c.a, got, c.want)
		}
	}
}

func TestNameMakesAValidToolName(t *testing.T) {
	cases := map[[2]string]string{
		{"", "read_file"}:                "read_file",
		{"gh_", "repos/list"}:            "gh_repos_list",
		{"", "a.b c\x00d"}:               "a_b_c_d",
		{"", "héllo"}:                    "h_llo",
		{"x_", strings.Repeat("a", 100)}: "x_" + strings.Repeat("a", 62),
	}
	for in, want := range cases {
		if got := mcptools.Name(in[0], in[1]); got != want {
			t.Errorf("Name(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"read_file", "a.b/c", "\x00", "héllo", strings.Repeat("z", 70), "\xff\xfe"} {
		f.Add("p_", s)
	}
	f.Fuzz(func(t *testing.T, prefix, remote string) {
		name := mcptools.Name(prefix, remote)
		if prefix == "" && remote == "" {
			if name != "" {
				t.Fatalf("Name of nothing = %q", name)
			}
			return
		}
		spec := tools.Spec{Name: name, Description: "d"}
		if err := spec.Validate(); err != nil {
			t.Fatalf("Name(%q, %q) = %q: %v", prefix, remote, name, err)
		}
		if mcptools.Name("", name) != name {
			t.Fatalf("Name is not idempotent on %q", name)
		}
	})
}
