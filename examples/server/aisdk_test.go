package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/internal/testnote"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// The AI SDK check: the real `ai` and `@ai-sdk/react` packages (pinned in
// aisdk/package-lock.json) drive the example server's /api/chat/ui with
// the SDK's Chat class, as a useChat page would. It needs node and the
// packages installed (npm ci --prefix examples/server/aisdk); without them
// it skips, unless PARLEY_REQUIRE_NODE is set (CI sets it), when it fails.

// sdkResult is what aisdk/check.mjs prints.
type sdkResult struct {
	Stored        []sdkMessage `json:"stored"`
	ChatID        string       `json:"chatId"`
	Status        string       `json:"status"`
	Error         string       `json:"error"`
	FinishReasons []*string    `json:"finishReasons"`
	Requests      []struct {
		Method string         `json:"method"`
		Body   map[string]any `json:"body"`
	} `json:"requests"`
	Messages []sdkMessage `json:"messages"`
}

type sdkMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Parts []struct {
		Type       string         `json:"type"`
		Text       string         `json:"text"`
		State      string         `json:"state"`
		ToolCallID string         `json:"toolCallId"`
		Output     map[string]any `json:"output"`
		Approval   *struct {
			ID       string `json:"id"`
			Approved *bool  `json:"approved"`
			Reason   string `json:"reason"`
		} `json:"approval"`
	} `json:"parts"`
}

// shape is what a page draws of messages: roles, and per part its type,
// state, text and approval, step markers left out.
func shape(ms []sdkMessage) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Role + ":")
		for _, p := range m.Parts {
			if p.Type == "step-start" {
				continue
			}
			b.WriteString(" [" + p.Type + " " + p.State + " " + strings.TrimSpace(p.Text))
			if p.Approval != nil && p.Approval.Approved != nil {
				b.WriteString(fmt.Sprint(" approved=", *p.Approval.Approved))
				if p.Approval.Reason != "" {
					b.WriteString(" reason=" + p.Approval.Reason)
				}
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// sameAfterReload checks that the stored thread, as GET /api/chat/ui/{id}
// gives it, draws what streamed.
func (r sdkResult) sameAfterReload(t *testing.T) {
	t.Helper()
	live, stored := shape(r.Messages), shape(r.Stored)
	if live != stored {
		t.Errorf("after a reload the chat differs from what streamed:\nlive:\n%s\nstored:\n%s", live, stored)
	}
	for i := range min(len(r.Messages), len(r.Stored)) {
		if r.Messages[i].Role == "assistant" && r.Messages[i].ID != r.Stored[i].ID {
			t.Errorf("answer %d: id %q live, %q stored", i, r.Messages[i].ID, r.Stored[i].ID)
		}
	}
}

func (r sdkResult) reasons() string {
	var out []string
	for _, f := range r.FinishReasons {
		if f == nil {
			out = append(out, "none")
		} else {
			out = append(out, *f)
		}
	}
	return strings.Join(out, ",")
}

// text is the text of the last assistant message.
func (r sdkResult) text() string {
	var b strings.Builder
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			for _, p := range r.Messages[i].Parts {
				if p.Type == "text" {
					b.WriteString(p.Text)
				}
			}
			break
		}
	}
	return b.String()
}

// toolState is the state of the last assistant message's part of tool.
func (r sdkResult) toolState(tool string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		for _, p := range r.Messages[i].Parts {
			if p.Type == "tool-"+tool {
				return p.State
			}
		}
	}
	return ""
}

func nodeCheck(t *testing.T) (node, dir string) {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("PARLEY_REQUIRE_NODE") != "" {
			t.Fatal("AI SDK check: " + why + " (PARLEY_REQUIRE_NODE is set)")
		}
		testnote.Skip(t, "AI SDK check", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed; install Node 22 or later (the ai packages need it) to run it")
	}
	dir, _ = filepath.Abs("aisdk")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json")); err != nil {
		skip("the pinned AI SDK packages are not installed; run: npm ci --prefix examples/server/aisdk")
	}
	return node, dir
}

func runSDK(t *testing.T, node, dir, base, scenario string) sdkResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs", base, scenario)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Fatalf("check.mjs %s: %v\n%s\n%s", scenario, err, out, stderr.String())
	}
	var r sdkResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("check.mjs %s printed %q: %v", scenario, out, err)
	}
	return r
}

func TestAISDKChatDrivesTheServer(t *testing.T) {
	t.Parallel()
	node, dir := nodeCheck(t)
	srv, app := newTestApp(t, settings{DatabasePath: testDatabase(t), NoTitles: true})
	ctx := context.Background()
	// threadOf is the id alice's chat is stored under: chat ids are each
	// user's own, so the thread's id is not the chat id.
	threadOf := func(t *testing.T, chatID string) string {
		t.Helper()
		var got struct {
			Thread struct{ ID string } `json:"thread"`
		}
		resp := doReq(t, srv, "GET", "/api/chat/threads/"+chatID, "alice", "")
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Thread.ID == "" {
			t.Fatalf("chat %q: %d %v", chatID, resp.StatusCode, err)
		}
		return got.Thread.ID
	}

	t.Run("plain answer", func(t *testing.T) {
		r := runSDK(t, node, dir, srv.URL, "plain")
		if r.Status != "ready" || r.reasons() != "stop" || len(r.Messages) != 2 || r.text() == "" {
			t.Fatalf("%+v", r)
		}
		r.sameAfterReload(t)
		msgs, err := app.store.ListMessages(ctx, threadOf(t, r.ChatID))
		if err != nil || len(msgs) != 2 || msgs[1].ID != r.Messages[1].ID {
			t.Errorf("the chat id does not name a stored thread with the client's message ids: %v %+v", err, msgs)
		}
	})
	t.Run("tool round", func(t *testing.T) {
		r := runSDK(t, node, dir, srv.URL, "tool")
		if r.Status != "ready" || r.toolState("list_notes") != "output-available" || r.text() == "" {
			t.Fatalf("%+v", r)
		}
		r.sameAfterReload(t)
	})
	for _, sc := range []struct{ name, state string }{{"approve", "output-available"}, {"deny", "output-denied"}} {
		t.Run("approval "+sc.name, func(t *testing.T) {
			r := runSDK(t, node, dir, srv.URL, sc.name)
			if r.Status != "ready" || r.reasons() != "tool-calls,stop" || len(r.Messages) != 2 {
				t.Fatalf("status %s, finish %s, %d messages: %+v", r.Status, r.reasons(), len(r.Messages), r)
			}
			if got := r.toolState("add_note"); got != sc.state {
				t.Errorf("add_note part %q, want %q", got, sc.state)
			}
			// The decline's reason is on the stored part too (shape
			// compares it), after a reload as live.
			if sc.name == "deny" && !strings.Contains(shape(r.Stored), "reason=Not that note.") {
				t.Errorf("the decline's reason is lost on a reload:\n%s", shape(r.Stored))
			}
			r.sameAfterReload(t)
			if len(r.Requests) != 2 || r.Requests[1].Body["messageId"] != r.Messages[1].ID {
				t.Errorf("the decision was not sent as a continuation of the answer: %+v", r.Requests)
			}
			applied := 0
			ps, _ := app.store.ListProposals(ctx, threadOf(t, r.ChatID))
			for _, p := range ps {
				if p.Status == store.ProposalApplied {
					applied++
				}
			}
			if want := map[string]int{"approve": 1, "deny": 0}[sc.name]; applied != want {
				t.Errorf("%d cards applied, want %d", applied, want)
			}
		})
	}
	t.Run("client tool", func(t *testing.T) {
		r := runSDK(t, node, dir, srv.URL, "client")
		if r.Status != "ready" || r.reasons() != "tool-calls,stop" || r.toolState("browser_time") != "output-available" || !strings.Contains(r.text(), "10:00") {
			t.Fatalf("status %s, finish %s, text %q: %+v", r.Status, r.reasons(), r.text(), r)
		}
		r.sameAfterReload(t)
		for _, p := range r.Messages[1].Parts {
			if p.Type == "tool-browser_time" && p.Output["time_zone"] != "Europe/Berlin" {
				t.Errorf("the client's own output was replaced: %v", p.Output)
			}
		}
	})
	t.Run("regenerate", func(t *testing.T) {
		r := runSDK(t, node, dir, srv.URL, "regenerate")
		last := r.Requests[len(r.Requests)-1].Body
		if r.Status != "ready" || len(r.Messages) != 2 || last["trigger"] != "regenerate-message" || r.text() == "" {
			t.Fatalf("%+v", r)
		}
		r.sameAfterReload(t)
		msgs, _ := app.store.ListMessages(ctx, threadOf(t, r.ChatID))
		if len(msgs) != 4 || msgs[0].SupersededAt == nil || msgs[2].Replaces != msgs[0].ID {
			t.Errorf("stored after a regeneration: %+v", msgs)
		}
	})
	t.Run("reasoning", func(t *testing.T) {
		r := runSDK(t, node, dir, srv.URL, "reasoning")
		var reasoning string
		for _, p := range r.Messages[1].Parts {
			if p.Type == "reasoning" {
				reasoning += p.Text
			}
		}
		if r.Status != "ready" || !strings.Contains(reasoning, "think about pandas") || strings.Contains(r.text(), "The user asks me") {
			t.Fatalf("reasoning %q, text %q: %+v", reasoning, r.text(), r)
		}
		r.sameAfterReload(t)
	})
	t.Run("provider error", func(t *testing.T) {
		var logs logBuffer
		failing := fake.New()
		failing.SetDefault(fake.Turn{fake.Fail(errors.New("upstream 502 from llm.internal:8443"))})
		bad, _ := newTestAppWithModel(t, settings{DatabasePath: testDatabase(t), NoTitles: true}, failing, &logs)
		r := runSDK(t, node, dir, bad.URL, "error")
		if r.Status != "error" || r.Error == "" || strings.Contains(r.Error, "llm.internal") {
			t.Fatalf("status %s, error %q", r.Status, r.Error)
		}
	})
}
