package assistant_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

func isTitleCall(req *providers.Request) bool { return req.System == assistant.TitleInstructions }

// titleModel answers turns with "answer" and title calls with title (or
// fails them), after waiting on gate if it is not nil.
func titleModel(title string, fail bool, gate chan struct{}) *fake.Provider {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if !isTitleCall(req) {
			return fake.Turn{fake.Text("Here is the answer."), fake.Usage(100, 10)}
		}
		if gate != nil {
			<-gate
		}
		if fail {
			return fake.Turn{fake.Fail(errors.New("title backend down"))}
		}
		return fake.Turn{fake.Text(title), fake.Usage(40, 7)}
	})})
	return p
}

func waitTurns(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.eng.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestModelNamesANewThreadAfterItsFirstAnswer(t *testing.T) {
	p := titleModel("**Paris trip** planning for the next summer holidays!!\nand more", false, nil)
	ledger, err := memquota.New(quota.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, func(c *assistant.Config) { c.GenerateTitles = true; c.Ledger = ledger })
	r, _, err := h.collect(t, alice, assistant.Request{Message: "help me plan a trip to paris next summer please"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "help me plan a trip to paris next" {
		t.Errorf("the stream names the thread %q; want the heuristic title at once", r.Title)
	}
	waitTurns(t, h)
	th, _ := h.store.GetThread(context.Background(), r.ThreadID)
	if th.Title != "Paris trip planning for the next" {
		t.Errorf("title %q", th.Title)
	}
	u, err := ledger.Usage(context.Background(), "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != 110+47 {
		t.Errorf("charged %d tokens; want the turn's 110 and the title's 47", u.Daily.Used)
	}
	// Later turns do not rename it.
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Message: "and hotels?"}); err != nil {
		t.Fatal(err)
	}
	waitTurns(t, h)
	titles := 0
	for _, req := range p.Requests() {
		if isTitleCall(&req) {
			titles++
			if strings.Contains(req.Messages[0].Content, "hotels") {
				t.Error("the title call saw a later turn")
			}
		}
	}
	if titles != 1 {
		t.Errorf("%d title calls, want 1", titles)
	}
}

func TestTitleFallsBackAndNeverOverridesTheUser(t *testing.T) {
	t.Run("model fails", func(t *testing.T) {
		h := newHarness(t, titleModel("", true, nil), func(c *assistant.Config) { c.GenerateTitles = true })
		r, _, err := h.collect(t, alice, assistant.Request{Message: "what is the weather"})
		if err != nil {
			t.Fatal(err)
		}
		waitTurns(t, h)
		if th, _ := h.store.GetThread(context.Background(), r.ThreadID); th.Title != "what is the weather" {
			t.Errorf("title %q after a failed title call", th.Title)
		}
	})
	t.Run("nothing usable", func(t *testing.T) {
		h := newHarness(t, titleModel(" \"**\" \n# real title", false, nil), func(c *assistant.Config) { c.GenerateTitles = true })
		r, _, _ := h.collect(t, alice, assistant.Request{Message: "what is the weather"})
		waitTurns(t, h)
		if th, _ := h.store.GetThread(context.Background(), r.ThreadID); th.Title != "what is the weather" {
			t.Errorf("title %q from an empty model title", th.Title)
		}
	})
	t.Run("renamed meanwhile", func(t *testing.T) {
		gate := make(chan struct{})
		h := newHarness(t, titleModel("Model title", false, gate), func(c *assistant.Config) { c.GenerateTitles = true })
		r, _, err := h.collect(t, alice, assistant.Request{Message: "what is the weather"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.eng.RenameThread(context.Background(), alice, r.ThreadID, "Mine"); err != nil {
			t.Fatal(err)
		}
		close(gate)
		waitTurns(t, h)
		if th, _ := h.store.GetThread(context.Background(), r.ThreadID); th.Title != "Mine" {
			t.Errorf("the model's title replaced the user's: %q", th.Title)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		p := titleModel("Model title", false, nil)
		h := newHarness(t, p)
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err != nil {
			t.Fatal(err)
		}
		waitTurns(t, h)
		if p.Calls() != 1 {
			t.Errorf("%d model calls without GenerateTitles", p.Calls())
		}
	})
}

func TestNewThreadReusesAnEmptyDraft(t *testing.T) {
	h := newHarness(t, titleModel("Weather today", false, nil), func(c *assistant.Config) { c.GenerateTitles = true })
	ctx := context.Background()
	a, err := h.eng.NewThread(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.eng.NewThread(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID {
		t.Errorf("a second new chat made another empty thread")
	}
	if c, _ := h.eng.NewThread(ctx, bob); c.ID == a.ID {
		t.Fatal("bob got alice's draft")
	}
	r, _, err := h.collect(t, alice, assistant.Request{ThreadID: a.ID, Message: "weather in oslo today"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "weather in oslo today" {
		t.Errorf("the draft's first message did not name it: %q", r.Title)
	}
	waitTurns(t, h)
	if th, _ := h.store.GetThread(ctx, a.ID); th.Title != "Weather today" {
		t.Errorf("the draft got no model title: %q", th.Title)
	}
	c, err := h.eng.NewThread(ctx, alice)
	if err != nil || c.ID == a.ID {
		t.Errorf("a used thread was handed out as a draft: %v", err)
	}
}

// Editing the first message renames a thread whose title is automatic,
// heuristic or the model's, from the new text; a title the user set stays.
func TestEditOfTheFirstMessageRetitlesUnlessTheUserNamedIt(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if isTitleCall(req) {
			q := strings.TrimPrefix(strings.SplitN(req.Messages[0].Content, "\n", 2)[0], "User: ")
			return fake.Turn{fake.Text("About " + q)}
		}
		return fake.Turn{fake.Text("answer")}
	})})
	h := newHarness(t, p, func(c *assistant.Config) { c.GenerateTitles = true })
	ctx := context.Background()
	title := func(id string) string {
		waitTurns(t, h)
		th, _ := h.store.GetThread(ctx, id)
		return th.Title
	}
	r, _, err := h.collect(t, alice, assistant.Request{Message: "falcon price"})
	if err != nil {
		t.Fatal(err)
	}
	if got := title(r.ThreadID); got != "About falcon price" {
		t.Fatalf("model title %q", got)
	}
	r2, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Replaces: r.UserMessageID, Message: "spreadsheet help"})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Title != "spreadsheet help" {
		t.Errorf("the edit's stream names the thread %q", r2.Title)
	}
	if got := title(r.ThreadID); got != "About spreadsheet help" {
		t.Errorf("after editing the first message the title is %q", got)
	}
	if _, err := h.eng.RenameThread(ctx, alice, r.ThreadID, "My budget"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Replaces: r2.UserMessageID, Message: "other topic"}); err != nil {
		t.Fatal(err)
	}
	if got := title(r.ThreadID); got != "My budget" {
		t.Errorf("an edit replaced the title the user set: %q", got)
	}
}

// lostAckSettle commits a Settle and then reports a transient error, once:
// the "failed after its commit" case the turn's settle is written against.
type lostAckSettle struct {
	quota.Ledger
	mu     sync.Mutex
	failed bool
}

func (l *lostAckSettle) Settle(ctx context.Context, h quota.Hold, used int64) error {
	if err := l.Ledger.Settle(ctx, h, used); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.Estimate == 0 && !l.failed { // the title's hold of nothing
		l.failed = true
		return errors.New("connection reset after commit")
	}
	return nil
}

// A title is charged once even when the ledger loses the answer to a
// Settle that committed: only the Reserve of its hold of nothing is tried
// again, never the charge.
func TestTitleIsChargedOnceWhenSettleFailsAfterCommit(t *testing.T) {
	inner, err := memquota.New(quota.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	l := &lostAckSettle{Ledger: inner}
	h := newHarness(t, titleModel("Paris trip", false, nil), func(c *assistant.Config) { c.GenerateTitles = true; c.Ledger = l })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "help me plan a trip to paris"}); err != nil {
		t.Fatal(err)
	}
	waitTurns(t, h)
	u, err := inner.Usage(context.Background(), "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != 110+47 {
		t.Errorf("charged %d tokens; want the turn's 110 and the title's 47 once", u.Daily.Used)
	}
}
