package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
)

// editedMessage is a message of the thread view with the edit fields.
type editedMessage struct {
	ID           string         `json:"id"`
	Seq          int            `json:"seq"`
	Role         string         `json:"role"`
	Content      string         `json:"content"`
	Blocks       []blocks.Block `json:"blocks"`
	Replaces     string         `json:"replaces"`
	SupersededAt *time.Time     `json:"superseded_at"`
}

func (h *harness) editView(user, id, query string) []editedMessage {
	h.t.Helper()
	var out struct {
		Messages []editedMessage `json:"messages"`
	}
	decodeJSON(h.t, h.do("GET", "/api/chat/threads/"+id+query, user, ""), &out)
	return out.Messages
}

// conversation renders what the model was sent as "role: content" lines.
func conversation(req providers.Request) string {
	var lines []string
	for _, m := range req.Messages {
		lines = append(lines, string(m.Role)+": "+m.Content)
	}
	return strings.Join(lines, "\n")
}

// lastConversation is what the model was sent in its last call.
func lastConversation(model *fake.Provider) string {
	reqs := model.Requests()
	return conversation(reqs[len(reqs)-1])
}

// brief renders a thread view as "role: text" lines (a user's content, an
// answer's markdown), each superseded one marked with a "~".
func brief(ms []editedMessage) string {
	var lines []string
	for _, m := range ms {
		mark := ""
		if m.SupersededAt != nil {
			mark = "~"
		}
		text := m.Content
		if m.Role == "assistant" {
			text = markdownOf(m.Blocks)
		}
		lines = append(lines, mark+m.Role+": "+text)
	}
	return strings.Join(lines, "\n")
}

// answers scripts a model that numbers its answers, so each turn's reply
// can be told apart.
func answers(n int) *fake.Provider {
	var turns []fake.Turn
	for i := 1; i <= n; i++ {
		turns = append(turns, fake.Turn{fake.Text("answer " + string(rune('0'+i)))})
	}
	return fake.New(turns...)
}

// An edit over the stream endpoint: the model is sent the branch before
// the replaced message and the new text; the thread view hides what the
// edit replaced, and ?superseded=1 shows it marked, the new message naming
// the one it replaced. A second edit of the replaced message is 409.
func TestEditOverHTTPContinuesTheBranchAndHidesWhatItReplaced(t *testing.T) {
	model := answers(3)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "first question"})
	id := threadIDOf(t, bs)
	h.stream("alice", httpapi.StreamRequest{ThreadID: id, Message: "second question"})
	before := h.editView("alice", id, "")
	second := before[2]
	if second.Role != "user" || second.Content != "second question" {
		t.Fatalf("third message %+v, want the second question", second)
	}

	bs, _ = h.stream("alice", httpapi.StreamRequest{ThreadID: id, Replaces: second.ID, Message: "second question, edited"})
	if threadIDOf(t, bs) != id || markdownOf(bs) != "answer 3" {
		t.Fatalf("the edit streamed %+v", bs)
	}
	if got, want := lastConversation(model), "user: first question\nassistant: answer 1\nuser: second question, edited"; got != want {
		t.Errorf("the model was sent\n%s\nwant the branch before the replaced message and the new text\n%s", got, want)
	}

	if got, want := brief(h.editView("alice", id, "")), "user: first question\nassistant: answer 1\nuser: second question, edited\nassistant: answer 3"; got != want {
		t.Errorf("thread view\n%s\nwant the superseded messages hidden\n%s", got, want)
	}
	all := h.editView("alice", id, "?superseded=1")
	if got, want := brief(all), "user: first question\nassistant: answer 1\n~user: second question\n~assistant: answer 2\nuser: second question, edited\nassistant: answer 3"; got != want {
		t.Errorf("thread view with ?superseded=1\n%s\nwant every message, the replaced ones marked\n%s", got, want)
	}
	if all[4].Replaces != second.ID {
		t.Errorf("the edited message replaces %q, want %q", all[4].Replaces, second.ID)
	}
	if slices.ContainsFunc(all, func(m editedMessage) bool { return m.ID != all[4].ID && m.Replaces != "" }) {
		t.Errorf("only the edited message names one it replaces: %+v", all)
	}
	if got := h.editView("alice", id, "?superseded=0"); len(got) != 4 {
		t.Errorf("?superseded=0 shows %d messages, want the 4 current ones", len(got))
	}
	wantInvalid(t, h.do("GET", "/api/chat/threads/"+id+"?superseded=maybe", "alice", ""), "superseded must be true or false")

	calls := model.Calls()
	msg := wantError(t, h.do("POST", "/api/chat/stream", "alice",
		streamBody(t, httpapi.StreamRequest{ThreadID: id, Replaces: second.ID, Message: "again"})), http.StatusConflict, assistant.CodeConflict)
	if msg != "That message was already replaced." {
		t.Errorf("second edit of the same message: %q", msg)
	}
	if model.Calls() != calls {
		t.Error("the model was called for a refused edit")
	}
	if got := h.editView("alice", id, "?superseded=1"); len(got) != 6 {
		t.Errorf("%d messages after a refused edit, want 6", len(got))
	}
}

// A regeneration sends the last user message again on the same branch and
// supersedes it and its answer; the new user message names the old one.
func TestRegenerateOverHTTPAnswersTheLastMessageAgain(t *testing.T) {
	model := answers(3)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "first question"})
	id := threadIDOf(t, bs)
	h.stream("alice", httpapi.StreamRequest{ThreadID: id, Message: "second question"})
	old := h.editView("alice", id, "")[2]

	bs, _ = h.stream("alice", httpapi.StreamRequest{ThreadID: id, Regenerate: true})
	if markdownOf(bs) != "answer 3" {
		t.Fatalf("the regeneration streamed %q, want answer 3", markdownOf(bs))
	}
	if got, want := lastConversation(model), "user: first question\nassistant: answer 1\nuser: second question"; got != want {
		t.Errorf("the model was sent\n%s\nwant the same question on the same branch\n%s", got, want)
	}
	if got, want := brief(h.editView("alice", id, "")), "user: first question\nassistant: answer 1\nuser: second question\nassistant: answer 3"; got != want {
		t.Errorf("thread view\n%s\nwant\n%s", got, want)
	}
	all := h.editView("alice", id, "?superseded=true")
	if got, want := brief(all), "user: first question\nassistant: answer 1\n~user: second question\n~assistant: answer 2\nuser: second question\nassistant: answer 3"; got != want {
		t.Errorf("thread view with ?superseded=true\n%s\nwant\n%s", got, want)
	}
	if all[4].Replaces != old.ID {
		t.Errorf("the regenerated message replaces %q, want %q", all[4].Replaces, old.ID)
	}
}

// Edits and regenerations the Engine cannot take are refused with a status
// before the stream starts, and the model is never called.
func TestEditAndRegenerateRefusals(t *testing.T) {
	model := answers(1)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "first question"})
	id := threadIDOf(t, bs)
	first := h.editView("alice", id, "")[0]
	answer := h.editView("alice", id, "")[1]
	for _, c := range []struct {
		name, user, body string
		status           int
		code             assistant.ErrorCode
		want             string
	}{
		{"regenerate with a message", "alice", `{"thread_id":"` + id + `","regenerate":true,"message":"x"}`,
			400, assistant.CodeInvalidRequest, "a regeneration carries no message"},
		{"edit without a thread", "alice", `{"replaces":"` + first.ID + `","message":"x"}`,
			400, assistant.CodeInvalidRequest, "an edit or a regeneration needs the thread id"},
		{"regenerate without a thread", "alice", `{"regenerate":true}`,
			400, assistant.CodeInvalidRequest, "an edit or a regeneration needs the thread id"},
		{"edit and regenerate at once", "alice", `{"thread_id":"` + id + `","replaces":"` + first.ID + `","regenerate":true}`,
			400, assistant.CodeInvalidRequest, "send replaces or regenerate, not both"},
		{"regenerate as a string", "alice", `{"thread_id":"` + id + `","regenerate":"yes"}`,
			400, assistant.CodeInvalidRequest, "regenerate must be a boolean"},
		{"a NUL in replaces", "alice", `{"thread_id":"` + id + `","replaces":"a\u0000b","message":"x"}`,
			400, assistant.CodeInvalidRequest, "replaces contains a NUL character"},
		{"edit of an unknown message", "alice", `{"thread_id":"` + id + `","replaces":"no-such-message","message":"x"}`,
			404, assistant.CodeNotFound, "That message does not exist."},
		{"edit of an answer", "alice", `{"thread_id":"` + id + `","replaces":"` + answer.ID + `","message":"x"}`,
			404, assistant.CodeNotFound, "That message does not exist."},
		{"edit of another user's thread", "bob", `{"thread_id":"` + id + `","replaces":"` + first.ID + `","message":"x"}`,
			404, assistant.CodeNotFound, ""},
		{"regenerate another user's thread", "bob", `{"thread_id":"` + id + `","regenerate":true}`,
			404, assistant.CodeNotFound, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := wantError(t, h.do("POST", "/api/chat/stream", c.user, c.body), c.status, c.code)
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q, want it to say %q", msg, c.want)
			}
		})
	}
	if model.Calls() != 1 {
		t.Errorf("the model was called %d times, want once (the first turn only)", model.Calls())
	}
	if got := h.editView("alice", id, "?superseded=1"); len(got) != 2 || got[0].SupersededAt != nil || got[1].SupersededAt != nil {
		t.Errorf("after refused edits the thread holds %+v, want the first turn unchanged", got)
	}
}

// A thread with nothing to regenerate: the draft from POST
// /api/chat/threads has no user message.
func TestRegenerateWithoutAMessageIs409(t *testing.T) {
	model := fake.New()
	h := newHarness(t, model)
	var out struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	decodeJSON(t, h.do("POST", "/api/chat/threads", "alice", ""), &out)
	msg := wantError(t, h.do("POST", "/api/chat/stream", "alice", `{"thread_id":"`+out.Thread.ID+`","regenerate":true}`),
		http.StatusConflict, assistant.CodeConflict)
	if msg != "There is no answer to regenerate." {
		t.Errorf("message %q", msg)
	}
	if model.Calls() != 0 {
		t.Error("the model was called")
	}
}
