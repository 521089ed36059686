package fake_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
)

func userRequest(text string) *providers.Request {
	return &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: text}}}
}

// drain consumes a stream, returning its events and its error.
func drain(t *testing.T, seq func(func(providers.Event, error) bool)) ([]providers.Event, error) {
	t.Helper()
	var evs []providers.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestCallBeyondScriptIsBadRequestWrappingErrExhausted(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("only")})
	if _, err := drain(t, p.Stream(t.Context(), userRequest("1"))); err != nil {
		t.Fatal(err)
	}
	_, err := drain(t, p.Stream(t.Context(), userRequest("2")))
	if !errors.Is(err, fake.ErrExhausted) || !errors.Is(err, providers.ErrBadRequest) {
		t.Fatalf("err = %v, want ErrExhausted and ErrBadRequest", err)
	}
	if providers.CategoryOf(err) != providers.CategoryBadRequest {
		t.Errorf("category = %s", providers.CategoryOf(err))
	}
}

func TestFinishIsDerivedFromToolCallsUnlessSet(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.Text("hi")},
		fake.Turn{fake.CallTool("c1", "lookup", "")},
		fake.Turn{fake.Text("cut"), fake.Finish(providers.FinishLength)},
	)
	for _, want := range []providers.FinishReason{providers.FinishStop, providers.FinishToolCalls, providers.FinishLength} {
		evs, err := drain(t, p.Stream(t.Context(), userRequest("x")))
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if last.Kind != providers.FinishEvent || last.Finish != want {
			t.Errorf("last event = %+v, want finish %s", last, want)
		}
	}
}

func TestCallToolWithEmptyArgsSendsEmptyObject(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("c1", "now", "")})
	evs, _ := drain(t, p.Stream(t.Context(), userRequest("x")))
	if got := string(evs[0].ToolCall.Args); got != "{}" {
		t.Errorf("args = %s, want {}", got)
	}
}

func TestFailClassifiesPlainErrorsAndKeepsProviderErrors(t *testing.T) {
	rate := &providers.Error{Category: providers.CategoryRateLimit, RetryAfter: 3 * time.Second, Err: errors.New("slow down")}
	p := fake.New(
		fake.Turn{fake.Text("partial"), fake.Fail(io.ErrUnexpectedEOF)},
		fake.Turn{fake.Fail(rate)},
		fake.Turn{fake.Fail(context.Canceled)},
	)
	evs, err := drain(t, p.Stream(t.Context(), userRequest("1")))
	if len(evs) != 1 || evs[0].Text != "partial" {
		t.Errorf("events before the failure = %+v", evs)
	}
	if !errors.Is(err, providers.ErrConnection) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want ErrConnection wrapping io.ErrUnexpectedEOF", err)
	}
	_, err = drain(t, p.Stream(t.Context(), userRequest("2")))
	if err != rate {
		t.Errorf("err = %v, want the scripted *providers.Error itself", err)
	}
	_, err = drain(t, p.Stream(t.Context(), userRequest("3")))
	if !errors.Is(err, providers.ErrCanceled) {
		t.Errorf("err = %v, want ErrCanceled", err)
	}
}

func TestDelayEndsWithContextError(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("a"), fake.Delay(time.Hour), fake.Text("never")})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	evs, err := drain(t, p.Stream(ctx, userRequest("x")))
	if !errors.Is(err, providers.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if len(evs) != 1 {
		t.Errorf("events = %+v, want the one before the delay", evs)
	}
}

func TestDelayElapsesThenContinues(t *testing.T) {
	p := fake.New(fake.Turn{fake.Delay(time.Millisecond), fake.Text("late")})
	evs, err := drain(t, p.Stream(t.Context(), userRequest("x")))
	if err != nil || len(evs) != 2 || evs[0].Text != "late" {
		t.Fatalf("events = %+v, err = %v", evs, err)
	}
}

func TestCanceledContextFailsBeforeAnyEvent(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("a")})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	evs, err := drain(t, p.Stream(ctx, userRequest("x")))
	if !errors.Is(err, providers.ErrCanceled) || len(evs) != 0 {
		t.Fatalf("events = %+v, err = %v", evs, err)
	}
}

func TestStreamIsLazyUntilIterated(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("a")})
	seq := p.Stream(t.Context(), userRequest("x"))
	if n := p.Calls(); n != 0 {
		t.Fatalf("calls before iterating = %d", n)
	}
	drain(t, seq)
	if n := p.Calls(); n != 1 {
		t.Fatalf("calls after iterating = %d", n)
	}
}

func TestRequestsAreCopiesIsolatedFromBothSides(t *testing.T) {
	temp := 0.5
	req := &providers.Request{
		Model:       "m",
		System:      "sys",
		Messages:    []providers.Message{{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: "c", Name: "n", Args: json.RawMessage(`{"a":1}`)}}}},
		Tools:       []providers.ToolDef{{Name: "n", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Temperature: &temp,
	}
	p := fake.New(fake.Turn{fake.Text("ok")})
	drain(t, p.Stream(t.Context(), req))

	// The caller reuses its buffers...
	req.Messages[0].ToolCalls[0].Args[1] = 'X'
	req.Tools[0].Parameters[1] = 'X'
	temp = 9
	got := p.Requests()[0]
	if string(got.Messages[0].ToolCalls[0].Args) != `{"a":1}` || string(got.Tools[0].Parameters) != `{"type":"object"}` || *got.Temperature != 0.5 {
		t.Fatalf("recorded request changed with the caller's: %+v", got)
	}
	// ...and the test scribbles on what it got.
	got.Messages[0].Content = "changed"
	got.Messages[0].ToolCalls[0].Args[1] = 'Y'
	again := p.Requests()[0]
	if again.Messages[0].Content != "" || string(again.Messages[0].ToolCalls[0].Args) != `{"a":1}` {
		t.Fatalf("Requests returned shared memory: %+v", again)
	}
}

func TestFuncTurnSeesTheRequest(t *testing.T) {
	p := fake.New(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		return fake.Turn{fake.Text(req.System), fake.Finish(providers.FinishContentFilter)}
	})})
	evs, err := drain(t, p.Stream(t.Context(), &providers.Request{System: "echo me"}))
	if err != nil || evs[0].Text != "echo me" || evs[1].Finish != providers.FinishContentFilter {
		t.Fatalf("events = %+v, err = %v", evs, err)
	}
}

func TestBreakingEarlyStopsTheScript(t *testing.T) {
	called := false
	p := fake.New(fake.Turn{fake.Text("a", "b"), fake.Func(func(context.Context, *providers.Request) fake.Turn {
		called = true
		return nil
	})})
	for range p.Stream(t.Context(), userRequest("x")) {
		break
	}
	if called {
		t.Error("steps after the break ran")
	}
}

func TestConcurrentCallsTakeDistinctTurns(t *testing.T) {
	const n = 50
	turns := make([]fake.Turn, n)
	for i := range turns {
		turns[i] = fake.Turn{fake.Text(string(rune('A' + i%26))), fake.Usage(int64(i), 1)}
	}
	p := fake.New(turns...)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[int64]bool{}
	)
	for range n {
		wg.Go(func() {
			for ev, err := range p.Stream(context.Background(), userRequest("x")) {
				if err != nil {
					t.Error(err)
				}
				if ev.Kind == providers.UsageEvent {
					mu.Lock()
					seen[ev.Usage.InputTokens] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n || len(p.Requests()) != n {
		t.Errorf("%d distinct turns played, %d requests recorded, want %d", len(seen), len(p.Requests()), n)
	}
}
