package assistant_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// lastSystem is the system prompt of the provider's last request.
func lastSystem(p *fake.Provider) string {
	reqs := p.Requests()
	return reqs[len(reqs)-1].System
}

func TestActiveStoredPromptReplacesCustomInstructions(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p, func(c *assistant.Config) {
		c.CustomInstructions = "Config instructions."
		c.AssistantName, c.Organization = "Ada", "Acme"
	})
	ctx := context.Background()
	ask := func() string {
		t.Helper()
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err != nil {
			t.Fatal(err)
		}
		return lastSystem(p)
	}
	if s := ask(); !strings.Contains(s, "Config instructions.") {
		t.Fatalf("no stored prompt active, want Config.CustomInstructions:\n%s", s)
	}
	if _, err := h.eng.CreateSystemPrompt(ctx, alice, "x", "y"); !errors.Is(err, assistant.ErrForbidden) {
		t.Errorf("a user without ManagePrompts created a prompt: %v", err)
	}
	first, err := h.eng.CreateSystemPrompt(ctx, sam, "Support\nteam", "You are {assistant_name} of {organization}. Keep {braces} and {unknown}.")
	if err != nil {
		t.Fatal(err)
	}
	if first.Active || first.Name != "Support team" || first.CreatedBy != "sam" {
		t.Errorf("created %+v", first)
	}
	if s := ask(); strings.Contains(s, "Keep {braces}") {
		t.Fatal("an inactive prompt was used")
	}
	if err := h.eng.ActivateSystemPrompt(ctx, sam, first.ID); err != nil {
		t.Fatal(err)
	}
	s := ask()
	if !strings.Contains(s, "You are Ada of Acme. Keep {braces} and {unknown}.") || strings.Contains(s, "Config instructions.") {
		t.Fatalf("the active prompt is not in the system prompt, placeholders filled and unknown ones literal:\n%s", s)
	}
	second, err := h.eng.CreateSystemPrompt(ctx, sam, "Second", "Second instructions.")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.eng.ActivateSystemPrompt(ctx, sam, second.ID); err != nil {
		t.Fatal(err)
	}
	if s := ask(); !strings.Contains(s, "Second instructions.") || strings.Contains(s, "Keep {braces}") {
		t.Fatalf("activation did not switch:\n%s", s)
	}
	ps, err := h.eng.SystemPrompts(ctx, sam)
	if err != nil || len(ps) != 2 || !ps[0].Active || ps[1].Active {
		t.Fatalf("SystemPrompts = %+v, %v", ps, err)
	}
	if err := h.eng.ActivateSystemPrompt(ctx, sam, ""); !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("activating the empty id: %v", err)
	}
	if err := h.eng.DeactivateSystemPrompts(ctx, sam); err != nil {
		t.Fatal(err)
	}
	if s := ask(); !strings.Contains(s, "Config instructions.") {
		t.Fatal("after deactivation the Config instructions are not back")
	}
	if err := h.eng.ActivateSystemPrompt(ctx, sam, "missing"); !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("activating a missing prompt: %v", err)
	}
	if err := h.eng.DeleteSystemPrompt(ctx, sam, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.DeleteSystemPrompt(ctx, sam, first.ID); !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	for _, bad := range []string{"", "  ", "a\x00b", strings.Repeat("x", assistant.MaxPromptTextBytes+1)} {
		if _, err := h.eng.CreateSystemPrompt(ctx, sam, "n", bad); err == nil {
			t.Errorf("created a prompt of %d bytes that should be refused", len(bad))
		}
	}
	audit, _ := h.store.ListAudit(ctx, store.AuditFilter{Kind: assistant.AuditPrompt})
	if len(audit) != 6 { // create, activate, create, activate, deactivate, delete
		t.Errorf("%d prompt audit rows, want 6", len(audit))
	}
}

// failingPrompts is a store whose active-prompt read fails.
type failingPrompts struct{ store.Store }

func (failingPrompts) CreateSystemPrompt(context.Context, *store.SystemPrompt) error { return nil }
func (failingPrompts) GetSystemPrompt(context.Context, string) (store.SystemPrompt, error) {
	return store.SystemPrompt{}, store.ErrNotFound
}
func (failingPrompts) ListSystemPrompts(context.Context) ([]store.SystemPrompt, error) {
	return nil, nil
}
func (failingPrompts) ActivateSystemPrompt(context.Context, string) error { return nil }
func (failingPrompts) DeactivateSystemPrompts(context.Context) error      { return nil }
func (failingPrompts) DeleteSystemPrompt(context.Context, string) error   { return nil }
func (failingPrompts) ActiveSystemPrompt(context.Context) (store.SystemPrompt, error) {
	return store.SystemPrompt{}, errors.New("connection refused")
}

func TestUnreadableActivePromptFailsTheTurn(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p)
	h2 := newHarness(t, p, func(c *assistant.Config) { c.Store = failingPrompts{h.store} })
	_, _, err := h2.collect(t, alice, assistant.Request{Message: "hi"})
	if !errors.Is(err, assistant.ErrInternal) {
		t.Fatalf("turn without its operator instructions: %v", err)
	}
	if p.Calls() != 0 {
		t.Errorf("the model was called without the operator's instructions")
	}
}

func TestAddendumAndCalibration(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p, func(c *assistant.Config) {
		c.OperatorAddendum = "Jobs over 24h are not allowed at {organization}."
		c.Organization = "Lab"
		c.ModelFamily = assistant.ModelFamilyAnthropic
	})
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	s := lastSystem(p)
	if !strings.Contains(s, "Jobs over 24h are not allowed at Lab.") || !strings.Contains(s, "## Reading these instructions") {
		t.Fatalf("addendum or calibration missing:\n%s", s)
	}
	g := newHarness(t, p)
	if _, _, err := g.collect(t, alice, assistant.Request{Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lastSystem(p), "## Reading these instructions") {
		t.Error("the generic family got the calibration note")
	}
	if _, err := assistant.New(assistant.Config{Provider: p, Store: g.store, Authorizer: assistant.RoleAuthorizer{}, ModelFamily: "gpt"}); err == nil {
		t.Error("an unknown ModelFamily was accepted")
	}
}

// The stable sections come first: across the turns of a thread, whatever
// changes (time, a summary, waiting cards, the page context), the system
// prompt starts with the same bytes through the tool list, so a provider's
// prefix cache hits.
func TestSystemPromptPrefixIsStableAcrossTurns(t *testing.T) {
	p := fake.New()
	clk := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	h := newHarness(t, p, func(c *assistant.Config) {
		c.CustomInstructions = "Be brief."
		c.OperatorAddendum = "Site rule."
		c.Now = func() time.Time { clk.add(7 * time.Minute); return clk.Now() }
	})
	p.Append(fake.Turn{fake.Text("hello")})
	r, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.Text("I will add it."), fake.CallTool("c1", "add_note", `{}`)})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Message: "add a note", PageContext: "Looking at note 7"}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetSummary(context.Background(), r.ThreadID, "Earlier: hi.", 2, 0); err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.Text("ok")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Message: "and then?"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	first := reqs[0].System
	end := strings.Index(first, "## Tools available to this user")
	if end < 0 {
		t.Fatalf("no tool list:\n%s", first)
	}
	end += strings.Index(first[end:], "\n\n") // through the tool list
	prefix := first[:end]
	for _, want := range []string{"Be brief.", "Site rule.", "## Scope", "get_weather"} {
		if !strings.Contains(prefix, want) {
			t.Errorf("the stable prefix lacks %q", want)
		}
	}
	for i, req := range reqs[1:] {
		if !strings.HasPrefix(req.System, prefix) {
			t.Errorf("turn %d: the system prompt's first %d bytes changed", i+2, len(prefix))
		}
	}
	// The provider is told where the part shared by every user ends.
	for i, req := range reqs {
		if req.SystemStable <= 0 || !strings.Contains(req.System[:req.SystemStable], "## Scope") ||
			req.System[:req.SystemStable] != first[:reqs[0].SystemStable] {
			t.Errorf("request %d: SystemStable %d does not end the shared stable part", i+1, req.SystemStable)
		}
	}
	if strings.Contains(first[:reqs[0].SystemStable], "get_weather") {
		t.Error("the user's tool list sits inside the part shared by every user")
	}
	last := reqs[len(reqs)-1].System
	if strings.Index(last, "Earlier: hi.") < len(prefix) || strings.Index(last, "## Waiting for the user's decision") < len(prefix) {
		t.Error("a volatile section sits inside the stable prefix")
	}
}

// The prompt's time is read just before the first model call: a decision's
// tool may run for a while after admission, and the model must not be told
// a time from before it.
func TestPromptTimeIsReadBeforeTheFirstModelCall(t *testing.T) {
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	slow := tools.Must(tools.New(tools.Spec{Name: "archive_all", Description: "Archives.", Category: "weather", Effect: tools.Mutate},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			clock.Add(int64(10 * time.Minute)) // a long job
			return tools.OK("archived", nil), nil
		}))
	p := fake.New(fake.Turn{fake.CallTool("a1", "archive_all", `{}`)}, fake.Turn{fake.Text("Done.")})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		set, err := tools.NewSet(slow, onlyWeather(c.Tools))
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = set
	})
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "archive everything"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 {
		t.Fatalf("want one card, got %d", len(cards))
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
		Decision: &assistant.Decision{Token: cards[0].ID, Apply: true}}); err != nil {
		t.Fatal(err)
	}
	want := "Current time: " + start.Add(10*time.Minute).Format(time.RFC3339)
	if s := lastSystem(p); !strings.Contains(s, want) {
		t.Errorf("the decision turn's prompt does not say %q: it was read before the tool ran", want)
	}
}
