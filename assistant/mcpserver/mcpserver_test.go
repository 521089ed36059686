package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/mcpserver"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

var users = map[string]parley.User{
	"alice": {ID: "alice", Roles: []string{"user"}},
	"bob":   {ID: "bob", Roles: []string{"user"}},
	"sam":   {ID: "sam", Roles: []string{"user", "staff"}},
	"eve":   {ID: "eve", Roles: []string{"banned"}},
}

func authenticate(r *http.Request) (parley.User, error) {
	u, ok := users[r.Header.Get("X-Demo-User")]
	if !ok {
		return parley.User{}, errors.New("unknown user")
	}
	return u, nil
}

type harness struct {
	t       *testing.T
	url     string
	eng     *assistant.Engine
	store   *memstore.Store
	deletes atomic.Int32 // runs of delete_note
	renames atomic.Int32 // runs of rename_note
	reads   atomic.Int32 // runs of weather
}

type note struct {
	ID string `json:"id"`
}

func newHarness(t *testing.T, cfg mcpserver.Config, mods ...func(*assistant.Config)) *harness {
	t.Helper()
	h := &harness{t: t, store: memstore.New()}
	weather := tools.Must(tools.New(tools.Spec{Name: "weather", Description: "Weather in a city.", Category: "general",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":100}},"required":["city"],"additionalProperties":false}`)},
		func(ctx context.Context, c tools.Call, in struct{ City string }) (tools.Result, error) {
			h.reads.Add(1)
			return tools.OK("Sunny in "+in.City, map[string]string{"city": in.City}), nil
		}))
	report := tools.Must(tools.New(tools.Spec{Name: "staff_report", Description: "Report for staff.", Category: "admin"},
		func(ctx context.Context, c tools.Call, in struct{}) (tools.Result, error) {
			return tools.OK("report", nil), nil
		}))
	del := tools.Must(tools.New(tools.Spec{Name: "delete_note", Description: "Delete a note.", Category: "general", Effect: tools.Destructive,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","maxLength":40}},"required":["id"],"additionalProperties":false}`)},
		func(ctx context.Context, c tools.Call, in note) (tools.Result, error) {
			if !c.Approved {
				return tools.Fail(tools.CodeNeedsApproval, "not approved"), nil
			}
			h.deletes.Add(1)
			return tools.OK("Deleted note "+in.ID, nil), nil
		}))
	rename := tools.Must(tools.New(tools.Spec{Name: "rename_note", Description: "Rename a note.", Category: "general", Effect: tools.Mutate},
		func(ctx context.Context, c tools.Call, in struct{}) (tools.Result, error) {
			h.renames.Add(1)
			return tools.OK("Renamed", nil), nil
		}))
	broken := tools.Must(tools.New(tools.Spec{Name: "broken", Description: "Always fails.", Category: "general"},
		func(ctx context.Context, c tools.Call, in struct{}) (tools.Result, error) {
			return tools.Result{}, errors.New("dial tcp 10.0.0.7:5432: secret internal detail")
		}))
	client := tools.Must(tools.New(tools.Spec{Name: "pick_file", Description: "Runs in the browser.", Category: "general", ClientSide: true},
		func(ctx context.Context, c tools.Call, in struct{}) (tools.Result, error) {
			return tools.OK("", nil), nil
		}))
	reg, err := tools.NewSet(weather, report, del, rename, broken, client)
	if err != nil {
		t.Fatal(err)
	}
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("Done.")})
	ecfg := assistant.Config{
		Provider: model,
		Store:    h.store,
		Tools:    reg,
		Authorizer: assistant.RoleAuthorizer{
			Enabled: []string{"user"},
			Tools:   map[string][]string{"user": {"category:general"}, "staff": {"*"}},
			Staff:   []string{"staff"},
		},
		MaxMessageBytes: 4096,
	}
	for _, m := range mods {
		m(&ecfg)
	}
	h.eng, err = assistant.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Authenticate = authenticate
	mh, err := mcpserver.New(h.eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mh)
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// userTransport sends every request as user.
type userTransport struct{ user string }

func (u userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if u.user != "" {
		r.Header.Set("X-Demo-User", u.user)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a session as user; elicit, when set, answers the
// server's elicitations (the client then advertises the capability).
func (h *harness) connect(user string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	h.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	cs, err := c.Connect(h.t.Context(), &mcp.StreamableClientTransport{
		Endpoint: h.url, HTTPClient: &http.Client{Transport: userTransport{user}}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		h.t.Fatalf("connect as %s: %v", user, err)
	}
	h.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
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

type envelope struct {
	OK      bool            `json:"ok"`
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, envelope, error) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, envelope{}, err
	}
	var e envelope
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T, want text", name, res.Content[0])
	}
	if err := json.Unmarshal([]byte(text.Text), &e); err != nil {
		t.Fatalf("%s: %q is not an envelope: %v", name, text.Text, err)
	}
	return res, e, nil
}

func (h *harness) audit(t *testing.T) []map[string]any {
	t.Helper()
	ev, err := h.store.ListAudit(t.Context(), store.AuditFilter{Kind: assistant.AuditToolCall})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range ev {
		var m map[string]any
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		m["actor"] = e.ActorID
		out = append(out, m)
	}
	return out
}

func TestListShowsExactlyTheToolsTheUserMayUse(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	alice := toolNames(t, h.connect("alice", nil))
	if want := []string{"broken", "delete_note", "rename_note", "weather"}; !slices.Equal(alice, want) {
		t.Errorf("alice sees %v, want %v (no staff tools, no client-side tools)", alice, want)
	}
	sam := toolNames(t, h.connect("sam", nil))
	if !slices.Contains(sam, "staff_report") || slices.Contains(sam, "pick_file") {
		t.Errorf("sam sees %v, want staff_report and no client-side tool", sam)
	}
}

func TestListAnnotatesWhatNeedsApproval(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	res, err := h.connect("alice", nil).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		a := tl.Annotations
		switch tl.Name {
		case "weather":
			if !a.ReadOnlyHint {
				t.Errorf("weather: %+v, want read-only", a)
			}
		case "delete_note":
			if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
				t.Errorf("delete_note: %+v, want destructive", a)
			}
		}
	}
}

func TestReadToolRunsAndIsAuditedAsMCP(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	res, e, err := call(t, h.connect("alice", nil), "weather", map[string]string{"city": "Lima"})
	if err != nil || res.IsError || !e.OK || h.reads.Load() != 1 {
		t.Fatalf("weather: %v %+v %+v, runs %d", err, res, e, h.reads.Load())
	}
	a := h.audit(t)
	if len(a) != 1 || a[0]["transport"] != mcpserver.Transport || a[0]["actor"] != "alice" || a[0]["ok"] != true {
		t.Fatalf("audit = %v, want one ok mcp row of alice", a)
	}
	raw, _ := json.Marshal(a)
	if strings.Contains(string(raw), "Lima") {
		t.Errorf("audit %s holds the raw arguments", raw)
	}
}

func TestStaffToolIsUnknownToAUserAndTheRefusalIsAudited(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	_, _, err := call(t, h.connect("alice", nil), "staff_report", map[string]any{})
	if !isRPCError(err, jsonrpc.CodeInvalidParams) {
		t.Fatalf("alice calling staff_report: %v, want an invalid-params protocol error", err)
	}
	a := h.audit(t)
	if len(a) != 1 || a[0]["code"] != string(tools.CodeUnknownTool) || a[0]["tool"] != "staff_report" || a[0]["transport"] != "mcp" {
		t.Fatalf("audit = %v, want alice's refused call", a)
	}
	if _, e, err := call(t, h.connect("sam", nil), "staff_report", map[string]any{}); err != nil || !e.OK {
		t.Errorf("sam calling staff_report: %v %+v", err, e)
	}
}

func TestDestructiveCallWithoutElicitationWaitsForTheAppAndAnotherUserCannotApproveIt(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	res, e, err := call(t, h.connect("alice", nil), "delete_note", map[string]string{"id": "n1"})
	if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeNeedsApproval) {
		t.Fatalf("delete_note: %v %+v, want a needs-approval error result", err, e)
	}
	if n := h.deletes.Load(); n != 0 {
		t.Fatalf("delete_note ran %d times before approval", n)
	}
	var data struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || data.ThreadID == "" {
		t.Fatalf("data %s: no thread", e.Data)
	}
	if strings.Contains(string(e.Data), "token") {
		t.Errorf("the MCP result carries the card's token: %s", e.Data)
	}
	ctx := t.Context()
	_, msgs, err := h.eng.Thread(ctx, users["alice"], data.ThreadID, assistant.ThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind == blocks.Confirm {
				token = b.ID
			}
		}
	}
	if token == "" {
		t.Fatalf("no confirm card in %+v", msgs)
	}
	a := h.audit(t)
	if len(a) != 1 || a[0]["approval"] != "pending" || a[0]["transport"] != "mcp" {
		t.Fatalf("audit = %v, want one pending mcp row", a)
	}

	// Bob holds the token: he can neither decide it on his own thread nor
	// reach alice's.
	bobThread, err := h.eng.NewThread(ctx, users["bob"])
	if err != nil {
		t.Fatal(err)
	}
	_, err = assistant.Collect(h.eng.Stream(ctx, users["bob"], assistant.Request{ThreadID: bobThread.ID, Decision: &assistant.Decision{Token: token, Apply: true}}))
	if !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("bob applying alice's card: %v, want ErrNotFound", err)
	}
	_, err = assistant.Collect(h.eng.Stream(ctx, users["bob"], assistant.Request{ThreadID: data.ThreadID, Decision: &assistant.Decision{Token: token, Apply: true}}))
	if !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("bob applying on alice's thread: %v, want ErrNotFound", err)
	}
	if n := h.deletes.Load(); n != 0 {
		t.Fatalf("delete_note ran %d times on bob's decision", n)
	}

	// Alice approves in the app: it runs once, and only once.
	if _, err := assistant.Collect(h.eng.Stream(ctx, users["alice"], assistant.Request{ThreadID: data.ThreadID, Decision: &assistant.Decision{Token: token, Apply: true}})); err != nil {
		t.Fatal(err)
	}
	_, err = assistant.Collect(h.eng.Stream(ctx, users["alice"], assistant.Request{ThreadID: data.ThreadID, Decision: &assistant.Decision{Token: token, Apply: true}}))
	if !errors.Is(err, assistant.ErrConflict) {
		t.Errorf("second apply: %v, want ErrConflict", err)
	}
	if n := h.deletes.Load(); n != 1 {
		t.Fatalf("delete_note ran %d times after one approval, want 1", n)
	}
}

func isRPCError(err error, code int64) bool {
	jerr, ok := errors.AsType[*jsonrpc.Error](err)
	return ok && jerr.Code == code
}

func accept(action string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: action}, nil
	}
}

func TestElicitationApprovesOrDeclinesTheCall(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	var asked atomic.Int32
	var message string
	yes := h.connect("alice", func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		message = r.Params.Message
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	if _, e, err := call(t, yes, "delete_note", map[string]string{"id": "n1"}); err != nil || !e.OK {
		t.Fatalf("approved delete_note: %v %+v", err, e)
	}
	if asked.Load() != 1 || h.deletes.Load() != 1 || !strings.Contains(message, "delete_note") {
		t.Fatalf("asked %d times (%q), ran %d times; want 1, 1", asked.Load(), message, h.deletes.Load())
	}
	for _, action := range []string{"decline", "cancel"} {
		res, e, err := call(t, h.connect("alice", accept(action)), "delete_note", map[string]string{"id": "n2"})
		if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeDeclined) {
			t.Errorf("%s: %v %+v, want a declined error result", action, err, e)
		}
	}
	if n := h.deletes.Load(); n != 1 {
		t.Errorf("delete_note ran %d times, want only the approved call", n)
	}
	a := h.audit(t)
	approvals := []string{}
	for _, row := range a {
		approvals = append(approvals, row["approval"].(string))
	}
	slices.Sort(approvals)
	if !slices.Equal(approvals, []string{"confirmed", "declined", "declined"}) {
		t.Errorf("audit approvals = %v", approvals)
	}
}

func TestNoElicitationSendsEveryChangeToTheApp(t *testing.T) {
	h := newHarness(t, mcpserver.Config{NoElicitation: true})
	var asked atomic.Int32
	cs := h.connect("alice", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	_, e, err := call(t, cs, "rename_note", map[string]any{})
	if err != nil || e.Error == nil || e.Error.Code != string(tools.CodeNeedsApproval) || asked.Load() != 0 || h.renames.Load() != 0 {
		t.Fatalf("rename_note: %v %+v, asked %d, ran %d", err, e, asked.Load(), h.renames.Load())
	}
}

func TestToolFailureIsAnErrorResultWithoutInternalText(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	res, e, err := call(t, h.connect("alice", nil), "broken", map[string]any{})
	if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeInternal) {
		t.Fatalf("broken: %v %+v", err, e)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if strings.Contains(text, "10.0.0.7") || strings.Contains(text, "secret") {
		t.Errorf("result %q shows the internal error", text)
	}
}

func TestMissingOrUnknownUserIsRefusedBeforeAnything(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Lima"}}}`
	for _, user := range []string{"", "mallory"} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if user != "" {
			req.Header.Set("X-Demo-User", user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("user %q: %d, want 401", user, resp.StatusCode)
		}
	}
	if h.reads.Load() != 0 || len(h.audit(t)) != 0 {
		t.Errorf("an unauthenticated call ran (%d) or was audited (%v)", h.reads.Load(), h.audit(t))
	}
}

func TestUserTheAuthorizerDisablesGetsNoTools(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	cs := h.connect("eve", nil)
	if _, err := cs.ListTools(t.Context(), nil); !isRPCError(err, jsonrpc.CodeInvalidRequest) {
		t.Errorf("eve listing tools: %v, want an invalid-request protocol error", err)
	}
	res, e, err := call(t, cs, "weather", map[string]string{"city": "Lima"})
	if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeNotAuthorized) || h.reads.Load() != 0 {
		t.Errorf("eve calling weather: %v %+v, ran %d", err, e, h.reads.Load())
	}
}

// post sends one raw JSON-RPC body as user, outside any session.
func (h *harness) post(t *testing.T, user, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Demo-User", user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestOversizedBodyIsRefusedBeforeDecoding(t *testing.T) {
	h := newHarness(t, mcpserver.Config{MaxBodyBytes: 64 << 10})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":"` + strings.Repeat("x", 100<<10) + `"}}}`
	if status := h.post(t, "alice", body); status != http.StatusRequestEntityTooLarge || h.reads.Load() != 0 {
		t.Errorf("a 100 KiB body: %d, ran %d; want 413 and nothing run", status, h.reads.Load())
	}
}

// The SDK's decoder refuses a body nested past its depth limit; the
// Engine's gate never sees it.
func TestDeeplyNestedArgumentsAreRefused(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":` +
		strings.Repeat("[", 1900) + strings.Repeat("]", 1900) + `}}}`
	if status := h.post(t, "alice", body); status != http.StatusBadRequest || h.reads.Load() != 0 {
		t.Errorf("deeply nested arguments: %d, ran %d; want 400 and nothing run", status, h.reads.Load())
	}
}

func TestAnotherUserCannotUseASession(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	alice := h.connect("alice", nil)
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_note","arguments":{"id":"n1"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), "POST", h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Demo-User", "bob")
	req.Header.Set("Mcp-Session-Id", alice.ID())
	req.Header.Set("Mcp-Protocol-Version", alice.InitializeResult().ProtocolVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob on alice's session: %d, want 403", resp.StatusCode)
	}
	if len(h.audit(t)) != 0 {
		t.Errorf("bob's call reached the Engine: %v", h.audit(t))
	}
}

func TestHostileArgumentsRunNothing(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	cs := h.connect("alice", accept("accept"))
	cases := []struct {
		name string
		tool string
		args any
	}{
		{"NUL in a value", "weather", map[string]string{"city": "Li\x00ma"}},
		{"NUL in a key", "weather", map[string]string{"ci\x00ty": "Lima"}},
		{"oversized", "weather", map[string]string{"city": strings.Repeat("x", 8000)}},
		{"not an object", "weather", []int{1, 2}},
		{"schema refuses", "delete_note", map[string]any{"id": 7}},
		{"extra property", "delete_note", map[string]any{"id": "n1", "drop": true}},
		{"NUL on a change", "delete_note", map[string]string{"id": "n\x001"}},
	}
	for _, c := range cases {
		res, e, err := call(t, cs, c.tool, c.args)
		if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeInvalidArgs) {
			t.Errorf("%s: %v %+v, want an error result", c.name, err, e)
		}
	}
	for _, name := range []string{"no_such_tool", "weather\x00", strings.Repeat("w", 10000), "../weather", ""} {
		if _, _, err := call(t, cs, name, map[string]any{}); !isRPCError(err, jsonrpc.CodeInvalidParams) {
			t.Errorf("tool %.20q: %v, want an invalid-params protocol error", name, err)
		}
	}
	if h.reads.Load() != 0 || h.deletes.Load() != 0 {
		t.Errorf("hostile calls ran tools: reads %d, deletes %d", h.reads.Load(), h.deletes.Load())
	}
}

func TestNewRefusesAMissingAuthenticate(t *testing.T) {
	if _, err := mcpserver.New(nil, mcpserver.Config{}); !errors.Is(err, mcpserver.ErrConfig) {
		t.Errorf("New(nil): %v, want ErrConfig", err)
	}
}

func TestCallsCountAgainstTheToolRate(t *testing.T) {
	h := newHarness(t, mcpserver.Config{}, func(c *assistant.Config) {
		c.RateLimiter = &memquota.RateLimiter{}
		c.ToolRate = quota.Rate{Calls: 1, Per: time.Hour}
	})
	cs := h.connect("alice", nil)
	if _, e, err := call(t, cs, "weather", map[string]string{"city": "Lima"}); err != nil || !e.OK {
		t.Fatalf("first call: %v %+v", err, e)
	}
	res, e, err := call(t, cs, "weather", map[string]string{"city": "Quito"})
	if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeRateLimited) || h.reads.Load() != 1 {
		t.Errorf("second call: %v %+v, ran %d; want RATE_LIMITED and one run", err, e, h.reads.Load())
	}
}

func TestGuardRefusesACredentialInTheArguments(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	cs := h.connect("alice", accept("accept"))
	for tool, args := range map[string]map[string]string{
		"weather":     {"city": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"},
		"delete_note": {"id": "sk-proj-abcdefghijklmnopqrstuvwxyz0123"},
	} {
		res, e, err := call(t, cs, tool, args)
		if err != nil || !res.IsError || e.Error == nil || e.Error.Code != string(tools.CodeBlocked) {
			t.Errorf("%s with a key: %v %+v, want BLOCKED", tool, err, e)
		}
	}
	if h.reads.Load() != 0 || h.deletes.Load() != 0 {
		t.Errorf("a call with a key ran")
	}
	ev, err := h.store.ListAudit(t.Context(), store.AuditFilter{Kind: assistant.AuditGuardToolArgs})
	if err != nil || len(ev) == 0 {
		t.Errorf("guard audit = %v %v, want the findings", ev, err)
	}
}

// headerTransport sends every request as user over its own connections.
type headerTransport struct {
	user string
	base *http.Transport
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Demo-User", h.user)
	return h.base.RoundTrip(r)
}

func TestClosedSessionsLeaveNoGoroutines(t *testing.T) {
	h := newHarness(t, mcpserver.Config{})
	base := runtime.NumGoroutine()
	for range 3 {
		tr := &http.Transport{}
		c := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: accept("decline")})
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: &http.Client{Transport: headerTransport{"alice", tr}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		toolNames(t, cs)
		call(t, cs, "weather", map[string]string{"city": "Lima"})
		call(t, cs, "delete_note", map[string]string{"id": "n1"})
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
	}
	// Polls, without a timing claim: the count must come back.
	for i := 0; runtime.NumGoroutine() > base; i++ {
		if i == 1000 {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProbingUnknownToolsIsBoundedByTheToolRate(t *testing.T) {
	h := newHarness(t, mcpserver.Config{}, func(c *assistant.Config) {
		c.RateLimiter = &memquota.RateLimiter{}
		c.ToolRate = quota.Rate{Calls: 2, Per: time.Hour}
	})
	cs := h.connect("alice", nil)
	for range 5 {
		if _, _, err := call(t, cs, "staff_report", map[string]any{}); !isRPCError(err, jsonrpc.CodeInvalidParams) {
			t.Fatalf("staff_report: %v, want unknown tool", err)
		}
	}
	if a := h.audit(t); len(a) != 2 {
		t.Errorf("%d audit rows for 5 probes, want 2 (the rate)", len(a))
	}
	if _, e, err := call(t, cs, "weather", map[string]string{"city": "Lima"}); err != nil || e.Error == nil || e.Error.Code != string(tools.CodeRateLimited) {
		t.Errorf("weather after the probes: %v %+v, want RATE_LIMITED", err, e)
	}
}

func TestCrossOriginBrowserRequestIsRefused(t *testing.T) {
	h := newHarness(t, mcpserver.Config{TrustedOrigins: []string{"https://app.example.com"}})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for origin, want := range map[string]int{"https://evil.example": http.StatusForbidden, "https://app.example.com": http.StatusOK} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Demo-User", "alice")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
	}
	if _, err := mcpserver.New(h.eng, mcpserver.Config{Authenticate: authenticate, TrustedOrigins: []string{"not a url"}}); !errors.Is(err, mcpserver.ErrConfig) {
		t.Errorf("a malformed origin: %v, want ErrConfig", err)
	}
}
