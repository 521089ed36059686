package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
)

// The flows in this file end a turn waiting for the user (a confirm card, a
// form, a client-side tool) and answer it with a second POST to the stream
// endpoint.

// refused posts body as user, expecting a JSON error rather than a stream,
// and returns its status, code and message.
func refused(t *testing.T, srv *httptest.Server, user string, body map[string]any) (status int, code, message string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp := doReq(t, srv, "POST", "/api/chat/stream", user, string(raw))
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(got, &e); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: status %d, type %q, body %s: want a JSON error", raw, resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	return resp.StatusCode, e.Error.Code, e.Error.Message
}

func decision(thread, token string, apply bool) map[string]any {
	return map[string]any{"thread_id": thread, "decision": map[string]any{"token": token, "apply": apply}}
}

func formAnswer(thread, id string, values map[string]any) map[string]any {
	return map[string]any{"thread_id": thread, "form": map[string]any{"id": id, "values": values}}
}

func finishOf(bs []blocks.Block) string { return bs[len(bs)-1].Meta.Finish }

// card returns the turn's one confirm block, checking that the turn ended
// on it with nothing run.
func card(t *testing.T, bs []blocks.Block) blocks.Block {
	t.Helper()
	cards := blocksOf(bs, blocks.Confirm)
	if len(cards) != 1 || finishOf(bs) != "approval" {
		t.Fatalf("confirm blocks %+v, finish %q: want one card ending the turn", cards, finishOf(bs))
	}
	if r := blocksOf(bs, blocks.ToolResult); len(r) != 0 {
		t.Fatalf("a tool result before the decision: %+v", r)
	}
	return cards[0]
}

// firstAfterMeta is the first block of a continuation turn after its
// opening meta block: the answer to what the last turn left waiting.
func firstAfterMeta(t *testing.T, bs []blocks.Block) blocks.Block {
	t.Helper()
	if len(bs) < 3 {
		t.Fatalf("turn too short: %+v", bs)
	}
	return bs[1]
}

type proposal struct{ Token, Tool, Summary, Status string }

func proposals(t *testing.T, srv *httptest.Server, user, thread string) []proposal {
	t.Helper()
	resp := doReq(t, srv, "GET", "/api/chat/threads/"+thread, user, "")
	defer resp.Body.Close()
	var body struct {
		Proposals []proposal `json:"proposals"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("thread %s: %d %v", thread, resp.StatusCode, err)
	}
	return body.Proposals
}

// notesOf returns user's notes in the app.
func notesOf(t *testing.T, a *app, user string) []note {
	t.Helper()
	ns, err := a.notes.list(context.Background(), user)
	if err != nil {
		t.Fatalf("%s's notes: %v", user, err)
	}
	return ns
}

// hasNote reports whether user has the note with that id in the app.
func hasNote(t *testing.T, a *app, user, id string) bool {
	t.Helper()
	_, ok, err := a.notes.find(context.Background(), user, id)
	if err != nil {
		t.Fatalf("%s's note %s: %v", user, id, err)
	}
	return ok
}

func notesWithText(t *testing.T, a *app, user, text string) int {
	t.Helper()
	n := 0
	for _, nt := range notesOf(t, a, user) {
		if nt.Text == text {
			n++
		}
	}
	return n
}

// forEachStore runs f on the example served with each store it supports:
// a SQLite file, memory, and PostgreSQL when PARLEY_TEST_POSTGRES_DSN is set.
func forEachStore(t *testing.T, f func(t *testing.T, srv *httptest.Server, a *app)) {
	for name, s := range map[string]func(t *testing.T) settings{
		"sqlite":   func(t *testing.T) settings { return settings{DatabasePath: testDatabase(t)} },
		"memory":   func(*testing.T) settings { return settings{} },
		"postgres": func(t *testing.T) settings { return settings{DatabaseURL: sqltest.PostgresDSN(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			srv, a := newTestApp(t, s(t))
			f(t, srv, a)
		})
	}
}

func TestDemoAddNoteWaitsForApprovalAndRunsOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, srv *httptest.Server, a *app) {
		bs := chat(t, srv, "alice", "add a note: buy bread")
		thread := bs[0].Meta.ThreadID
		c := card(t, bs)
		if c.Name != "add_note" || c.Effect != "mutate" || c.Content != "Add the note “buy bread”" {
			t.Errorf("card %+v", c)
		}
		call := blocksOf(bs, blocks.ToolCall)[0]
		if n := notesWithText(t, a, "alice", "buy bread"); n != 0 {
			t.Fatalf("the note exists %d times before anyone approved it", n)
		}
		if ps := proposals(t, srv, "alice", thread); len(ps) != 1 || ps[0].Token != c.ID || ps[0].Status != "pending" {
			t.Errorf("proposals before the decision: %+v, want the card pending", ps)
		}

		// sam can neither see alice's thread nor use her token.
		if status, code, _ := refused(t, srv, "sam", decision(thread, c.ID, true)); status != http.StatusNotFound || code != "not_found" {
			t.Errorf("sam applying alice's card: %d %s, want 404 not_found", status, code)
		}
		samThread := chat(t, srv, "sam", "hello")[0].Meta.ThreadID
		if status, code, _ := refused(t, srv, "sam", decision(samThread, c.ID, true)); status != http.StatusNotFound || code != "not_found" {
			t.Errorf("sam applying alice's token on his own thread: %d %s, want 404 not_found", status, code)
		}

		bs = stream(t, srv, "alice", decision(thread, c.ID, true))
		res := firstAfterMeta(t, bs)
		if res.Kind != blocks.ToolResult || res.ID != call.ID || res.Name != "add_note" || !res.OK {
			t.Errorf("the decision turn opens with %+v, want add_note's ok result for call %s", res, call.ID)
		}
		if md := markdown(bs); !strings.Contains(md, "Done — I added the note “buy bread”") {
			t.Errorf("acknowledgment %q", md)
		}
		if n := notesWithText(t, a, "alice", "buy bread"); n != 1 {
			t.Fatalf("after apply the note exists %d times, want 1", n)
		}

		for _, apply := range []bool{true, false} {
			status, code, msg := refused(t, srv, "alice", decision(thread, c.ID, apply))
			if status != http.StatusConflict || code != "conflict" || !strings.Contains(msg, "already applied") {
				t.Errorf("replayed decision (apply %v): %d %s %q, want 409 conflict", apply, status, code, msg)
			}
		}
		if n := notesWithText(t, a, "alice", "buy bread"); n != 1 {
			t.Errorf("after the replays the note exists %d times, want 1", n)
		}
		if ps := proposals(t, srv, "alice", thread); len(ps) != 1 || ps[0].Status != "applied" || ps[0].Summary != c.Content {
			t.Errorf("proposals after the decision: %+v, want the card applied", ps)
		}
	})
}

func TestDemoDeclinedNoteLeavesNotesUnchanged(t *testing.T) {
	srv, a := newTestApp(t, settings{})
	before := notesOf(t, a, "alice")
	bs := chat(t, srv, "alice", "add note buy bread")
	thread, c := bs[0].Meta.ThreadID, card(t, bs)

	bs = stream(t, srv, "alice", decision(thread, c.ID, false))
	if res := firstAfterMeta(t, bs); res.Kind != blocks.ToolResult || res.OK || res.ErrorCode != "DECLINED" {
		t.Errorf("the decline turn opens with %+v, want a DECLINED result", res)
	}
	if md := markdown(bs); !strings.Contains(md, "OK, I left your notes unchanged.") {
		t.Errorf("acknowledgment %q", md)
	}
	if after := notesOf(t, a, "alice"); !slices.Equal(after, before) {
		t.Errorf("notes after the decline: %+v, want %+v", after, before)
	}
	if ps := proposals(t, srv, "alice", thread); len(ps) != 1 || ps[0].Status != "declined" {
		t.Errorf("proposals %+v, want the card declined", ps)
	}
	if status, code, msg := refused(t, srv, "alice", decision(thread, c.ID, true)); status != http.StatusConflict || !strings.Contains(msg, "already declined") {
		t.Errorf("applying a declined card: %d %s %q, want 409", status, code, msg)
	}
	if n := notesWithText(t, a, "alice", "buy bread"); n != 0 {
		t.Errorf("the declined note exists %d times", n)
	}
}

func TestDemoDeleteNoteAfterApproval(t *testing.T) {
	srv, a := newTestApp(t, settings{})
	bs := chat(t, srv, "alice", "delete note 1")
	thread, c := bs[0].Meta.ThreadID, card(t, bs)
	if c.Name != "delete_note" || c.Effect != "destructive" || c.Content != "Delete note 1 (“Buy oat milk”)" {
		t.Errorf("card %+v", c)
	}
	if !hasNote(t, a, "alice", "1") {
		t.Fatal("note 1 went before the card was applied")
	}
	bs = stream(t, srv, "alice", decision(thread, c.ID, true))
	if res := firstAfterMeta(t, bs); res.Kind != blocks.ToolResult || !res.OK {
		t.Errorf("the decision turn opens with %+v", res)
	}
	if md := markdown(bs); !strings.Contains(md, "Done — I deleted note 1 (“Buy oat milk”)") {
		t.Errorf("acknowledgment %q", md)
	}
	if hasNote(t, a, "alice", "1") {
		t.Error("note 1 is still there after apply")
	}
}

// A delete whose dry run fails shows no card: the model hears NOT_FOUND
// in the same turn and says so.
func TestDemoDeleteOfAMissingNoteShowsNoCard(t *testing.T) {
	srv, a := newTestApp(t, settings{})
	for _, msg := range []string{"delete note 99", "delete note 3"} { // 3 is sam's
		bs := chat(t, srv, "alice", msg)
		if cards := blocksOf(bs, blocks.Confirm); len(cards) != 0 || finishOf(bs) == "approval" {
			t.Errorf("%q: cards %+v, finish %q: want none", msg, cards, finishOf(bs))
		}
		call, res := toolOutcome(t, bs)
		if call.Name != "delete_note" || res.OK || res.ErrorCode != "NOT_FOUND" {
			t.Errorf("%q: call %+v result %+v, want delete_note NOT_FOUND", msg, call, res)
		}
		if md := markdown(bs); !strings.Contains(md, "I could not do that") {
			t.Errorf("%q: answer %q", msg, md)
		}
		if ps := proposals(t, srv, "alice", bs[0].Meta.ThreadID); len(ps) != 0 {
			t.Errorf("%q: proposals %+v, want none", msg, ps)
		}
	}
	if !hasNote(t, a, "sam", "3") {
		t.Error("sam's note went")
	}
}

func TestDemoNewNoteAsksWithAFormThenProposesTheNote(t *testing.T) {
	srv, a := newTestApp(t, settings{})
	bs := chat(t, srv, "alice", "new note")
	forms := blocksOf(bs, blocks.Form)
	if len(forms) != 1 || finishOf(bs) != "ask_user" {
		t.Fatalf("forms %+v, finish %q: want one form ending the turn", forms, finishOf(bs))
	}
	var f assistant.Form
	if err := json.Unmarshal(forms[0].Data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Questions) != 2 || f.Questions[0].Type != "text" || !f.Questions[0].Required || f.Questions[1].Type != "select" || len(f.Questions[1].Options) == 0 {
		t.Fatalf("form %+v", f)
	}
	thread, id := bs[0].Meta.ThreadID, forms[0].ID

	for name, values := range map[string]map[string]any{
		"What should the note say?": {"tag": "work"},
		"Tag":                       {"text": "water the plants", "tag": "garden"},
	} {
		status, code, msg := refused(t, srv, "alice", formAnswer(thread, id, values))
		if status != http.StatusBadRequest || code != "invalid_request" || !strings.Contains(msg, name) {
			t.Errorf("answers %v: %d %s %q, want 400 naming %q", values, status, code, msg, name)
		}
	}

	bs = stream(t, srv, "alice", formAnswer(thread, id, map[string]any{"text": "water the plants", "tag": "personal"}))
	c := card(t, bs)
	if c.Name != "add_note" || c.Content != "Add the note “water the plants” tagged personal" {
		t.Errorf("card %+v", c)
	}
	if status, code, _ := refused(t, srv, "alice", formAnswer(thread, id, map[string]any{"text": "again"})); status != http.StatusConflict || code != "conflict" {
		t.Errorf("answering the form twice: %d %s, want 409 conflict", status, code)
	}
	if n := notesWithText(t, a, "alice", "water the plants"); n != 0 {
		t.Fatalf("the note exists %d times before approval", n)
	}
	stream(t, srv, "alice", decision(thread, c.ID, true))
	i := slices.IndexFunc(notesOf(t, a, "alice"), func(nt note) bool { return nt.Text == "water the plants" })
	if i < 0 || notesOf(t, a, "alice")[i].Tag != "personal" {
		t.Errorf("alice's notes %+v, want the answered note tagged personal", notesOf(t, a, "alice"))
	}
}

func TestDemoFormTakesEveryQuestionType(t *testing.T) {
	srv := newTestServer(t)
	bs := chat(t, srv, "alice", "show me a form")
	forms := blocksOf(bs, blocks.Form)
	if len(forms) != 1 {
		t.Fatalf("forms %+v", forms)
	}
	var f assistant.Form
	if err := json.Unmarshal(forms[0].Data, &f); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, q := range f.Questions {
		types = append(types, q.Type)
	}
	slices.Sort(types)
	if want := []string{"boolean", "date", "multiselect", "number", "select", "text"}; !slices.Equal(types, want) {
		t.Errorf("question types %v, want %v", types, want)
	}
	thread, id := bs[0].Meta.ThreadID, forms[0].ID
	answers := map[string]any{"name": "Ada", "per_week": 3, "reminders": true, "review_on": "2030-01-02", "colour": "green"}
	if status, _, msg := refused(t, srv, "alice", formAnswer(thread, id, answers)); status != http.StatusBadRequest || !strings.Contains(msg, "Days I take notes") {
		t.Errorf("no days chosen: %d %q, want 400 naming the question", status, msg)
	}
	answers["days"] = []string{"Mon", "Wed"}
	md := markdown(stream(t, srv, "alice", formAnswer(thread, id, answers)))
	for _, want := range []string{"- Your name: Ada", "- Notes you write a week: 3", "- Send me reminders: yes",
		"- Review my notes on: 2030-01-02", "- Colour for new notes: green", "- Days I take notes: Mon, Wed"} {
		if !strings.Contains(md, want) {
			t.Errorf("answer %q lacks %q", md, want)
		}
	}
}

func TestDemoBrowserTimeRunsInThePage(t *testing.T) {
	srv := newTestServer(t)
	bs := chat(t, srv, "alice", "what time is it in my browser?")
	calls := blocksOf(bs, blocks.ToolCall)
	if len(calls) != 1 || calls[0].Name != "browser_time" || !calls[0].ClientSide || finishOf(bs) != "client_tool" {
		t.Fatalf("calls %+v, finish %q: want browser_time for the client, ending the turn", calls, finishOf(bs))
	}
	if r := blocksOf(bs, blocks.ToolResult); len(r) != 0 {
		t.Fatalf("the server answered a client-side call: %+v", r)
	}
	thread := bs[0].Meta.ThreadID
	results := map[string]any{"thread_id": thread, "tool_results": []map[string]any{
		{"id": calls[0].ID, "output": map[string]any{"local": "Tuesday 14:03", "time_zone": "Europe/Oslo"}},
	}}
	bs = stream(t, srv, "alice", results)
	if res := firstAfterMeta(t, bs); res.Kind != blocks.ToolResult || res.ID != calls[0].ID || !res.OK {
		t.Errorf("the tool-results turn opens with %+v, want browser_time's result", res)
	}
	if md := markdown(bs); !strings.Contains(md, "Tuesday 14:03") || !strings.Contains(md, "Europe/Oslo") {
		t.Errorf("answer %q does not tell the browser's time", md)
	}
	if status, code, _ := refused(t, srv, "alice", results); status != http.StatusConflict || code != "conflict" {
		t.Errorf("posting the results twice: %d %s, want 409 conflict", status, code)
	}
}

// Every client-side tool the server offers must be one the page can run,
// or a turn that calls it waits for an answer that never comes.
func TestDemoPageRunsEveryClientSideTool(t *testing.T) {
	raw, err := webFS.ReadFile("web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := demoTools(newMemoryNotes())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range reg.All() {
		if spec := tl.Spec(); spec.ClientSide {
			n++
			if !strings.Contains(string(raw), "\n  "+spec.Name+": ") {
				t.Errorf("the page's clientTools has no %s", spec.Name)
			}
		}
	}
	if n == 0 {
		t.Error("the example has no client-side tool")
	}
}

func TestDemoModelRoutesPhrases(t *testing.T) {
	srv := newTestServer(t)
	for msg, want := range map[string]string{
		"add a note: buy bread":         "add_note",
		"add note buy bread":            "add_note",
		"new note":                      "ask_user",
		"add a note":                    "ask_user",
		"Write a new note please":       "ask_user",
		"new note: buy bread":           "add_note",
		"show me a form":                "ask_user",
		"what time is it in my browser": "browser_time",
		"what time is it":               "get_time",
		"show my notes":                 "list_notes",
		"please delete note 2":          "delete_note",
		"tell me about the information": "",
		// An explicit note's text is the note, whatever words it contains.
		"add a note: delete 1 old email":    "add_note",
		"remember: clear the browser cache": "add_note",
		"add a note: check the stats":       "add_note",
	} {
		bs := chat(t, srv, "alice", msg)
		got := ""
		if calls := blocksOf(bs, blocks.ToolCall); len(calls) > 0 {
			got = calls[0].Name
		} else if forms := blocksOf(bs, blocks.Form); len(forms) > 0 {
			got = "ask_user"
		}
		if got != want {
			t.Errorf("%q called %q, want %q", msg, got, want)
		}
	}
}
