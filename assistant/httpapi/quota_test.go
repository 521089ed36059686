package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/store"
)

type usageOut struct {
	UserID string            `json:"user_id"`
	Daily  quota.PeriodUsage `json:"daily"`
	Weekly quota.PeriodUsage `json:"weekly"`
	Month  quota.PeriodUsage `json:"monthly"`
}

func withLedger(t *testing.T, defaults quota.Limits) (option, *memquota.Ledger) {
	t.Helper()
	l, err := memquota.New(quota.Policy{Defaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	return withEngine(func(c *assistant.Config) { c.Ledger = l }), l
}

func TestQuotaReadsOwnUsageAndResetTimes(t *testing.T) {
	opt, _ := withLedger(t, quota.Limits{Daily: quota.Limit(100_000)})
	model := fake.New(fake.Turn{fake.Text("hi"), fake.Usage(120, 30)})
	h := newHarness(t, model, opt)
	h.stream("alice", httpapi.StreamRequest{Message: "hello"})
	var u usageOut
	decodeJSON(t, h.do("GET", "/api/chat/quota", "alice", ""), &u)
	if u.UserID != "alice" || u.Daily.Used != 150 || u.Daily.Limit != 100_000 || u.Weekly.Limit != quota.Unlimited || u.Daily.ResetsAt.IsZero() {
		t.Errorf("usage = %+v, want alice, 150 used of 100000 daily, weekly unlimited, a reset time", u)
	}
}

func TestQuotaOfAnotherUserNeedsManageQuota(t *testing.T) {
	opt, _ := withLedger(t, quota.Limits{})
	h := newHarness(t, fake.New(), opt)
	resp := h.do("GET", "/api/chat/quota/bob", "alice", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice reading bob's quota: %d, want 404", resp.StatusCode)
	}
	var u usageOut
	decodeJSON(t, h.do("GET", "/api/chat/quota/bob", "sam", ""), &u)
	if u.UserID != "bob" {
		t.Errorf("staff read %+v, want bob's usage", u)
	}
}

func TestQuotaPutSetsKeepsAndResetsPerField(t *testing.T) {
	opt, l := withLedger(t, quota.Limits{Daily: quota.Limit(1000), Weekly: quota.Limit(5000)})
	h := newHarness(t, fake.New(), opt)

	resp := h.do("PUT", "/api/chat/quota/alice", "alice", `{"daily": 1}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a user setting limits: %d, want 403", resp.StatusCode)
	}
	var u usageOut
	decodeJSON(t, h.do("PUT", "/api/chat/quota/alice", "sam", `{"daily": 50, "monthly": -1}`), &u)
	if u.Daily.Limit != 50 || u.Weekly.Limit != 5000 || u.Month.Limit != quota.Unlimited {
		t.Errorf("after setting daily and monthly: %+v", u)
	}
	decodeJSON(t, h.do("PUT", "/api/chat/quota/alice", "sam", `{"weekly": 70}`), &u)
	if u.Daily.Limit != 50 || u.Weekly.Limit != 70 {
		t.Errorf("an absent key must leave its override: %+v", u)
	}
	decodeJSON(t, h.do("PUT", "/api/chat/quota/alice", "sam", `{"daily": null}`), &u)
	if u.Daily.Limit != 1000 || u.Weekly.Limit != 70 {
		t.Errorf("null must restore the default: %+v", u)
	}
	got, _ := l.Limits(t.Context(), "alice")
	if got.Daily != nil || got.Weekly == nil || *got.Weekly != 70 || got.Monthly == nil || *got.Monthly != -1 {
		t.Errorf("stored override = %+v", got)
	}
	for _, bad := range []string{`{"daily": -2}`, `{"daily": "a lot"}`, `{"hourly": 5}`, `{"daily": 1.5}`, `[1]`} {
		resp := h.do("PUT", "/api/chat/quota/alice", "sam", bad)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT %s: %d, want 400", bad, resp.StatusCode)
		}
	}
	audit, _ := h.store.ListAudit(t.Context(), store.AuditFilter{Kind: assistant.AuditQuotaSet})
	if len(audit) != 3 || audit[0].ActorID != "sam" {
		t.Errorf("audit of quota changes = %+v, want the 3 accepted PUTs by sam", audit)
	}
}

func TestQuotaExceededIs429WithTheResetMessage(t *testing.T) {
	opt, l := withLedger(t, quota.Limits{Daily: quota.Limit(10)})
	// Alice has used her whole daily allowance.
	hold, err := l.Reserve(t.Context(), "alice", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(t.Context(), hold, 10); err != nil {
		t.Fatal(err)
	}
	model := fake.New(fake.Turn{fake.Text("never")})
	h := newHarness(t, model, opt)
	resp := h.do("POST", "/api/chat/stream", "alice", `{"message":"hi"}`)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != http.StatusTooManyRequests || body.Error.Code != "quota_exceeded" ||
		!strings.Contains(body.Error.Message, "daily") || !strings.Contains(body.Error.Message, "resets") {
		t.Errorf("%d %s, want 429 quota_exceeded naming the daily period and its reset", resp.StatusCode, raw)
	}
	if model.Calls() != 0 {
		t.Error("the model was called")
	}
}

func TestQuotaWithoutALedgerIsNotFound(t *testing.T) {
	h := newHarness(t, fake.New())
	resp := h.do("GET", "/api/chat/quota", "alice", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /quota with no ledger: %d, want 404", resp.StatusCode)
	}
}
