package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/blocks"
)

// demoUserTransport sends every request as the demo user.
type demoUserTransport struct{ user string }

func (d demoUserTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Demo-User", d.user)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, srv *httptest.Server, user string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: demoUserTransport{user}}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp as %s: %v", user, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func mcpToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// mcpCall calls a tool and returns the envelope it answers.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) (ok bool, code string, data json.RawMessage) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var e struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *struct{ Code string }
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &e); err != nil {
		t.Fatal(err)
	}
	if e.Error != nil {
		code = e.Error.Code
	}
	return e.OK, code, e.Data
}

func TestDemoMCPServesEachUsersTools(t *testing.T) {
	srv := newTestServer(t)
	alice := mcpToolNames(t, mcpSession(t, srv, "alice"))
	if want := []string{"add_note", "delete_note", "get_time", "list_notes"}; !slices.Equal(alice, want) {
		t.Errorf("alice sees %v, want %v", alice, want)
	}
	if sam := mcpToolNames(t, mcpSession(t, srv, "sam")); !slices.Contains(sam, "admin_stats") {
		t.Errorf("sam sees %v, want admin_stats among them", sam)
	}
	resp := doReq(t, srv, "POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no X-Demo-User: %d, want 401", resp.StatusCode)
	}
}

func TestDemoMCPNoteWaitsForApprovalOnThePage(t *testing.T) {
	srv, a := newTestApp(t, settings{DatabasePath: testDatabase(t)})
	before, err := a.notes.list(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	ok, code, data := mcpCall(t, mcpSession(t, srv, "alice"), "add_note", map[string]string{"text": "buy milk"})
	if ok || code != "NEEDS_APPROVAL" {
		t.Fatalf("add_note over MCP: ok %v code %q, want NEEDS_APPROVAL", ok, code)
	}
	if ns, err := a.notes.list(t.Context(), "alice"); err != nil || len(ns) != len(before) {
		t.Fatalf("notes before approval: %v %v, want the %d seeded", ns, err, len(before))
	}
	var pending struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(data, &pending); err != nil || pending.ThreadID == "" {
		t.Fatalf("data %s names no thread", data)
	}
	resp := doReq(t, srv, "GET", "/api/chat/threads/"+pending.ThreadID, "alice", "")
	defer resp.Body.Close()
	var th struct {
		Messages []struct {
			Blocks []blocks.Block `json:"blocks"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&th); err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range th.Messages {
		for _, b := range m.Blocks {
			if b.Kind == blocks.Confirm {
				token = b.ID
			}
		}
	}
	if token == "" {
		t.Fatalf("no card on the page: %+v", th)
	}
	stream(t, srv, "alice", map[string]any{"thread_id": pending.ThreadID, "decision": map[string]any{"token": token, "apply": true}})
	if ns, err := a.notes.list(t.Context(), "alice"); err != nil || len(ns) != len(before)+1 || ns[len(ns)-1].Text != "buy milk" {
		t.Fatalf("notes after approval: %v %v, want buy milk added", ns, err)
	}
}

func TestDemoAttachesAnMCPServersTools(t *testing.T) {
	var wipes atomic.Int32
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	remote.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text.", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	remote.AddTool(&mcp.Tool{Name: "wipe", Description: "Wipe everything.", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wipes.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil
		})
	remoteSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil))
	t.Cleanup(remoteSrv.Close)

	srv, _ := newTestApp(t, settings{DatabasePath: testDatabase(t), MCPTools: remoteSrv.URL})
	cs := mcpSession(t, srv, "alice")
	names := mcpToolNames(t, cs)
	if !slices.Contains(names, "ext_echo") || !slices.Contains(names, "ext_wipe") {
		t.Fatalf("alice sees %v, want ext_echo and ext_wipe", names)
	}
	if ok, code, _ := mcpCall(t, cs, "ext_echo", map[string]string{"text": "hi"}); !ok {
		t.Errorf("ext_echo: %s", code)
	}
	if ok, code, _ := mcpCall(t, cs, "ext_wipe", map[string]string{}); ok || code != "NEEDS_APPROVAL" || wipes.Load() != 0 {
		t.Errorf("ext_wipe: ok %v code %q, ran %d; want NEEDS_APPROVAL and no run", ok, code, wipes.Load())
	}
	// The server's list is followed: a tool it adds later is offered, one
	// it removes is gone.
	remote.AddTool(&mcp.Tool{Name: "later", Description: "Added later.", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil
		})
	remote.RemoveTools("wipe")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		names = mcpToolNames(t, cs)
		if slices.Contains(names, "ext_later") && !slices.Contains(names, "ext_wipe") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice sees %v 10 s after the server's list changed, want ext_later and no ext_wipe", names)
		}
	}
}

func TestDemoRefusesABadMCPToolsURL(t *testing.T) {
	for _, v := range []string{"localhost:9000/mcp", "ftp://x/mcp", "http://"} {
		t.Setenv("PARLEY_MCP_TOOLS", v)
		if _, err := settingsFromEnv(); err == nil || !strings.Contains(err.Error(), "PARLEY_MCP_TOOLS") {
			t.Errorf("PARLEY_MCP_TOOLS=%q: %v, want an error naming the variable", v, err)
		}
	}
}
