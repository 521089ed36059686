package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

type envelope struct {
	OK      bool            `json:"ok"`
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (h *harness) execute(user, tool, body string) (int, envelope, string) {
	h.t.Helper()
	resp := h.do("POST", "/api/chat/tools/"+tool+"/execute", user, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e envelope
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e, string(raw)
}

func TestExecuteRunsAToolTheUserMayUse(t *testing.T) {
	h := newHarness(t, fake.New())
	status, e, raw := h.execute("alice", "weather", `{"args":{"city":"Lima"}}`)
	if status != http.StatusOK || !e.OK {
		t.Fatalf("%d %s, want 200 ok", status, raw)
	}
	ev, _ := h.store.ListAudit(t.Context(), store.AuditFilter{Kind: assistant.AuditToolCall})
	if len(ev) != 1 || !strings.Contains(string(ev[0].Data), `"transport":"http"`) || strings.Contains(string(ev[0].Data), "Lima") {
		t.Errorf("audit = %+v, want one http tool call without its arguments", ev)
	}
}

func TestExecuteRefusesToolsTheUserMayNotUseAsNotFound(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, tool := range []string{"staff_report", "no_such_tool", "billing_lookup"} { // staff-only, missing, page-only
		status, _, raw := h.execute("alice", tool, `{}`)
		if status != http.StatusNotFound {
			t.Errorf("alice executing %s: %d %s, want 404", tool, status, raw)
		}
	}
	if status, e, raw := h.execute("sam", "staff_report", `{}`); status != http.StatusOK || !e.OK {
		t.Errorf("staff executing staff_report: %d %s", status, raw)
	}
}

func TestExecuteReportsBadArgumentsInTheEnvelope(t *testing.T) {
	h := newHarness(t, fake.New())
	status, e, raw := h.execute("alice", "weather", `{"args":{"town":"Lima"}}`)
	if status != http.StatusOK || e.OK || e.Error == nil || e.Error.Code != "INVALID_ARGS" {
		t.Errorf("%d %s, want 200 with INVALID_ARGS", status, raw)
	}
	if status, _, _ := h.execute("alice", "weather", `{"args":`); status != http.StatusBadRequest {
		t.Errorf("malformed body: %d, want 400", status)
	}
	if status, _, _ := h.execute("", "weather", `{}`); status != http.StatusUnauthorized {
		t.Errorf("no user: %d, want 401", status)
	}
}

// runCounts counts the runs of each tool effectTools makes.
type runCounts map[string]*atomic.Int64

func (rc runCounts) total() int64 {
	var n int64
	for _, c := range rc {
		n += c.Load()
	}
	return n
}

// effectTools is one counted tool per effect, all offered to every user:
// weather (Read), add_item (Mutate) and drop_all (Destructive); and
// purge_all (Destructive) in the admin category, which only staff may use.
func effectTools(t *testing.T, runs runCounts) *tools.Set {
	t.Helper()
	var ts []tools.BaseTool
	for _, s := range []tools.Spec{
		{Name: "weather", Category: "general", Description: "The weather in a city.", Effect: tools.Read},
		{Name: "add_item", Category: "general", Description: "Add an item.", Effect: tools.Mutate},
		{Name: "drop_all", Category: "general", Description: "Drop every item.", Effect: tools.Destructive},
		{Name: "purge_all", Category: "admin", Description: "Purge every account.", Effect: tools.Destructive},
	} {
		n := &atomic.Int64{}
		runs[s.Name] = n
		ts = append(ts, tools.Must(tools.New(s, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			n.Add(1)
			return tools.OK("done", nil), nil
		})))
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestExecutePolicyBoundsWhatRunsWithoutACard(t *testing.T) {
	allowed := map[httpapi.ExecutePolicy]map[string]bool{
		httpapi.ExecuteReadAndMutate: {"weather": true, "add_item": true, "drop_all": false},
		httpapi.ExecuteReadOnly:      {"weather": true, "add_item": false, "drop_all": false},
		httpapi.ExecuteAll:           {"weather": true, "add_item": true, "drop_all": true},
	}
	for policy, want := range allowed {
		for tool, ok := range want {
			t.Run(fmt.Sprintf("policy %d %s", policy, tool), func(t *testing.T) {
				runs := runCounts{}
				h := newHarness(t, fake.New(),
					withEngine(func(c *assistant.Config) { c.Tools = effectTools(t, runs) }),
					withAPI(func(c *httpapi.Config) { c.Execute = policy }))
				status, e, raw := h.execute("alice", tool, `{}`)
				if ok {
					if status != http.StatusOK || !e.OK || runs[tool].Load() != 1 {
						t.Errorf("%d %s, %d runs: want 200 ok and one run", status, raw, runs[tool].Load())
					}
					return
				}
				resp := h.do("POST", "/api/chat/tools/"+tool+"/execute", "alice", `{}`)
				msg := wantError(t, resp, http.StatusForbidden, assistant.CodeForbidden)
				if want := `Direct execution of the tool "` + tool + `" is not allowed.`; msg != want {
					t.Errorf("message %q, want %q", msg, want)
				}
				if n := runs.total(); n != 0 {
					t.Errorf("a refused tool ran: %d runs", n)
				}
			})
		}
	}
}

func TestZeroExecutePolicyRefusesDestructiveTools(t *testing.T) {
	var cfg httpapi.Config
	if cfg.Execute != httpapi.ExecuteReadAndMutate {
		t.Fatalf("zero Execute is %d, want ExecuteReadAndMutate", cfg.Execute)
	}
	for eff, want := range map[tools.Effect]bool{"": true, tools.Read: true, tools.Mutate: true, tools.Destructive: false, "unknown": false} {
		if got := cfg.Execute.Allows(eff); got != want {
			t.Errorf("Allows(%q) = %v, want %v", eff, got, want)
		}
	}
}

// The policy never reveals a tool the user may not see: a hidden
// Destructive tool is 404, as any hidden tool is.
func TestExecutePolicyDoesNotRevealHiddenTools(t *testing.T) {
	runs := runCounts{}
	h := newHarness(t, fake.New(), withEngine(func(c *assistant.Config) { c.Tools = effectTools(t, runs) }))
	if msg := wantError(t, h.do("POST", "/api/chat/tools/purge_all/execute", "alice", `{}`), http.StatusNotFound, assistant.CodeNotFound); msg != "There is no such tool." {
		t.Errorf("message %q, want the Engine's answer for any tool the user may not use", msg)
	}
	wantError(t, h.do("POST", "/api/chat/tools/purge_all/execute", "sam", `{}`), http.StatusForbidden, assistant.CodeForbidden)
	if n := runs.total(); n != 0 {
		t.Errorf("tools ran %d times", n)
	}
}
