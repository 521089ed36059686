package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

type promptOut struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Text      string    `json:"text"`
	Active    bool      `json:"active"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (h *harness) createPrompt(user, body string) promptOut {
	h.t.Helper()
	resp := h.do("POST", "/api/chat/prompts", user, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Content-Type") != "application/json" {
		h.t.Fatalf("POST /api/chat/prompts: %d %q, want 201 JSON; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var out struct {
		Prompt promptOut `json:"prompt"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Prompt.ID == "" {
		h.t.Fatalf("POST /api/chat/prompts answered %s (%v), want {\"prompt\"}", raw, err)
	}
	return out.Prompt
}

func (h *harness) listPrompts(user string) []promptOut {
	h.t.Helper()
	var out struct {
		Prompts []promptOut `json:"prompts"`
	}
	decodeJSON(h.t, h.do("GET", "/api/chat/prompts", user, ""), &out)
	if out.Prompts == nil {
		h.t.Fatal(`GET /api/chat/prompts: "prompts" is not a list`)
	}
	return out.Prompts
}

func (h *harness) noContent(method, path, user, body string) {
	h.t.Helper()
	if got := discard(h.do(method, path, user, body)); got != http.StatusNoContent {
		h.t.Fatalf("%s %s: %d, want 204", method, path, got)
	}
}

// activeNames lists the names of the active prompts.
func activeNames(ps []promptOut) []string {
	var out []string
	for _, p := range ps {
		if p.Active {
			out = append(out, p.Name)
		}
	}
	return out
}

// A staff user creates, lists, activates, deactivates and deletes stored
// prompts over HTTP, and the next turn's system prompt follows.
func TestPromptsOverHTTP(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model, withEngine(func(c *assistant.Config) { c.CustomInstructions = "CONFIG-INSTRUCTIONS" }))
	system := func() string {
		t.Helper()
		h.stream("alice", httpapi.StreamRequest{Message: "hi"})
		reqs := model.Requests()
		return reqs[len(reqs)-1].System
	}
	if ps := h.listPrompts("sam"); len(ps) != 0 {
		t.Fatalf("prompts before any was made: %+v", ps)
	}
	first := h.createPrompt("sam", `{"name":"Support\nteam","text":"  FIRST-PROMPT  "}`)
	if first.ID == "" || first.Name != "Support team" || first.Text != "FIRST-PROMPT" || first.Active || first.CreatedBy != "sam" ||
		first.CreatedAt.IsZero() || first.UpdatedAt.IsZero() {
		t.Errorf("created %+v, want an inactive prompt with a one-line name and trimmed text", first)
	}
	second := h.createPrompt("sam", `{"text":"SECOND-PROMPT"}`)
	if second.Name != "" || second.ID == first.ID {
		t.Errorf("created %+v", second)
	}
	if ps := h.listPrompts("sam"); len(ps) != 2 || ps[0].ID != second.ID || ps[1] != first {
		t.Errorf("listed %+v, want both, newest first, as created", ps)
	}
	if s := system(); strings.Contains(s, "FIRST-PROMPT") || !strings.Contains(s, "CONFIG-INSTRUCTIONS") {
		t.Fatalf("with none active the system prompt is\n%s", s)
	}

	h.noContent("POST", "/api/chat/prompts/"+first.ID+"/activate", "sam", "")
	if got := activeNames(h.listPrompts("sam")); len(got) != 1 || got[0] != "Support team" {
		t.Errorf("active after activating the first: %q", got)
	}
	if s := system(); !strings.Contains(s, "FIRST-PROMPT") || strings.Contains(s, "CONFIG-INSTRUCTIONS") {
		t.Fatalf("the active prompt is not the one used:\n%s", s)
	}
	h.noContent("POST", "/api/chat/prompts/"+second.ID+"/activate", "sam", `{}`)
	if got := activeNames(h.listPrompts("sam")); len(got) != 1 || got[0] != "" {
		t.Errorf("active after activating the second: %q, want only it", got)
	}
	if s := system(); !strings.Contains(s, "SECOND-PROMPT") || strings.Contains(s, "FIRST-PROMPT") {
		t.Fatalf("activation did not switch:\n%s", s)
	}

	h.noContent("POST", "/api/chat/prompts/deactivate", "sam", "")
	h.noContent("POST", "/api/chat/prompts/deactivate", "sam", `{}`) // with none active too
	if got := activeNames(h.listPrompts("sam")); len(got) != 0 {
		t.Errorf("active after deactivating: %q", got)
	}
	if s := system(); strings.Contains(s, "SECOND-PROMPT") || !strings.Contains(s, "CONFIG-INSTRUCTIONS") {
		t.Fatalf("after deactivation the Config instructions are not back:\n%s", s)
	}

	h.noContent("POST", "/api/chat/prompts/"+first.ID+"/activate", "sam", "")
	h.noContent("DELETE", "/api/chat/prompts/"+first.ID, "sam", "")
	if ps := h.listPrompts("sam"); len(ps) != 1 || ps[0].ID != second.ID || ps[0].Active {
		t.Errorf("after deleting the active prompt: %+v, want the second, inactive", ps)
	}
	if s := system(); strings.Contains(s, "FIRST-PROMPT") {
		t.Fatalf("a deleted prompt is still used:\n%s", s)
	}
	for _, r := range []struct{ method, path string }{
		{"DELETE", "/api/chat/prompts/" + first.ID},
		{"POST", "/api/chat/prompts/" + first.ID + "/activate"},
		{"DELETE", "/api/chat/prompts/no-such-prompt"},
		{"POST", "/api/chat/prompts/no-such-prompt/activate"},
	} {
		msg := wantError(t, h.do(r.method, r.path, "sam", ""), http.StatusNotFound, assistant.CodeNotFound)
		if msg != "That system prompt does not exist." {
			t.Errorf("%s %s: %q", r.method, r.path, msg)
		}
	}
}

// Every prompt route is 403 to a user without ManagePrompts, and changes
// nothing.
func TestPromptsNeedManagePrompts(t *testing.T) {
	h := newHarness(t, fake.New())
	p := h.createPrompt("sam", `{"name":"rules","text":"RULES"}`)
	h.noContent("POST", "/api/chat/prompts/"+p.ID+"/activate", "sam", "")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/chat/prompts", ""},
		{"POST", "/api/chat/prompts", `{"name":"mine","text":"MINE"}`},
		{"POST", "/api/chat/prompts/" + p.ID + "/activate", ""},
		{"POST", "/api/chat/prompts/no-such-prompt/activate", ""}, // 403, not 404: no probing for ids
		{"POST", "/api/chat/prompts/deactivate", ""},
		{"DELETE", "/api/chat/prompts/" + p.ID, ""},
	} {
		for _, user := range []string{"alice", "eve"} {
			t.Run(r.method+" "+r.path+" as "+user, func(t *testing.T) {
				wantError(t, h.do(r.method, r.path, user, r.body), http.StatusForbidden, assistant.CodeForbidden)
			})
		}
	}
	if ps := h.listPrompts("sam"); len(ps) != 1 || ps[0].ID != p.ID || !ps[0].Active {
		t.Errorf("after refused changes: %+v, want the one prompt, still active", ps)
	}
}

// A prompt body names what is wrong with it; a text over the Engine's
// limit is 413. Nothing is stored.
func TestPromptBodiesAreChecked(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, c := range []struct{ body, want string }{
		{`{"name":"n","text":"t","active":true}`, `unknown field "active"`},
		{`{"name":"n"}`, "text is required"},
		{`{"name":"n","text":"  \n "}`, "text is empty"},
		{`{"name":"n","text":7}`, "text must be a string, not a number"},
		{`{"name":["n"],"text":"t"}`, "name must be a string, not an array"},
		{`{"name":"a\u0000b","text":"t"}`, "name contains a NUL character"},
		{`{"name":"n","text":"a\u0000b"}`, "text contains a NUL character"},
		{`{"name":"n","text":"t"`, "the JSON body ends early"},
		{``, "the body is empty"},
	} {
		t.Run(c.body, func(t *testing.T) {
			wantInvalid(t, h.do("POST", "/api/chat/prompts", "sam", c.body), c.want)
		})
	}
	long := strings.Repeat("x", assistant.MaxPromptTextBytes+1)
	msg := wantError(t, h.do("POST", "/api/chat/prompts", "sam", `{"name":"n","text":"`+long+`"}`), http.StatusRequestEntityTooLarge, assistant.CodeTooLarge)
	if !strings.Contains(msg, "The prompt is too long") {
		t.Errorf("too long a text: %q", msg)
	}
	h.createPrompt("sam", `{"name":"n","text":"`+long[1:]+`"}`) // at the limit
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/chat/prompts/deactivate"},
		{"POST", "/api/chat/prompts/some-id/activate"},
	} {
		wantInvalid(t, h.do(r.method, r.path, "sam", `{"id":"x"}`), `unknown field "id"`)
	}
	if ps := h.listPrompts("sam"); len(ps) != 1 || len(ps[0].Text) != assistant.MaxPromptTextBytes {
		t.Errorf("stored %d prompts, want only the one at the limit", len(ps))
	}
}

// promptlessStore is a Store that does not keep system prompts.
type promptlessStore struct{ store.Store }

// With a Store that does not implement store.SystemPrompts the prompt
// routes are 404 for staff, and turns use the Config instructions.
func TestPromptsWithoutAPromptStoreAreNotFound(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model, withEngine(func(c *assistant.Config) {
		c.Store = promptlessStore{memstore.New()}
		c.CustomInstructions = "CONFIG-INSTRUCTIONS"
	}))
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/chat/prompts", ""},
		{"POST", "/api/chat/prompts", `{"name":"n","text":"t"}`},
		{"POST", "/api/chat/prompts/p1/activate", ""},
		{"POST", "/api/chat/prompts/deactivate", ""},
		{"DELETE", "/api/chat/prompts/p1", ""},
	} {
		msg := wantError(t, h.do(r.method, r.path, "sam", r.body), http.StatusNotFound, assistant.CodeNotFound)
		if msg != "Stored system prompts are not enabled." {
			t.Errorf("%s %s: %q", r.method, r.path, msg)
		}
	}
	h.stream("alice", httpapi.StreamRequest{Message: "hi"})
	if s := model.Requests()[0].System; !strings.Contains(s, "CONFIG-INSTRUCTIONS") {
		t.Errorf("system prompt without a prompt store:\n%s", s)
	}
}

// Each prompt change is audited as prompt.change, naming the actor.
func TestPromptChangesOverHTTPAreAudited(t *testing.T) {
	h := newHarness(t, fake.New())
	p := h.createPrompt("sam", `{"name":"n","text":"t"}`)
	h.noContent("POST", "/api/chat/prompts/"+p.ID+"/activate", "sam", "")
	h.noContent("POST", "/api/chat/prompts/deactivate", "sam", "")
	h.noContent("DELETE", "/api/chat/prompts/"+p.ID, "sam", "")
	evs, err := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditPrompt})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range evs {
		var data struct{ Action, Prompt string }
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		if ev.ActorID != "sam" || data.Prompt != p.ID && data.Action != "deactivate" {
			t.Errorf("audit event %+v %s, by sam on %s", ev, ev.Data, p.ID)
		}
		actions = append(actions, data.Action)
	}
	slices.Sort(actions)
	if want := []string{"activate", "create", "deactivate", "delete"}; !slices.Equal(actions, want) {
		t.Errorf("audited %q, want %q", actions, want)
	}
}
