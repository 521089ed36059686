package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
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
