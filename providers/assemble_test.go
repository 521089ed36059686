package providers_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// op is one element of a scripted SDK stream: what the test's step does
// with the Assembler when it reads it.
type op struct {
	kind   byte // 't' text, 's' Start, 'a' Append, 'u' usage, 'f' Finish
	index  int64
	id     string
	name   string
	args   string // Append's fragment, Start's input, or the text
	reason providers.FinishReason
}

// source is a scripted SDK stream.
type source struct {
	ops    []op
	next   int
	err    error // Err once the ops run out
	closed int
}

func (s *source) Next() bool {
	if s.next >= len(s.ops) {
		return false
	}
	s.next++
	return true
}

func (s *source) Current() op { return s.ops[s.next-1] }

func (s *source) Err() error {
	if s.next < len(s.ops) {
		return nil
	}
	return s.err
}

func (s *source) Close() error { s.closed++; return nil }

func step(a *providers.Assembler, o op, yield func(providers.Event, error) bool) bool {
	switch o.kind {
	case 't':
		if a.Finished() {
			return true // as a driver does: no delta follows the finish
		}
		return yield(providers.Event{Kind: providers.TextDelta, Text: o.args}, nil)
	case 's':
		var input json.RawMessage
		if o.args != "" {
			input = json.RawMessage(o.args)
		}
		return a.Start(o.index, o.id, o.name, input, yield)
	case 'a':
		return a.Append(o.index, o.id, o.name, o.args, yield)
	case 'u':
		a.Usage = &providers.Usage{InputTokens: o.index, OutputTokens: 1}
	case 'f':
		return a.Finish(o.reason, yield)
	}
	return true
}

// unavailable is the test's classify: every SDK error is the server failing.
func unavailable(err error) error {
	return &providers.Error{Category: providers.CategoryUnavailable, Err: err}
}

// assemble runs src through Assemble and returns a trace of the events and
// the error, stopping after stopAfter events when stopAfter > 0.
func assemble(src *source, stopAfter int) (trace []string, err error) {
	seq := func(yield func(providers.Event, error) bool) {
		providers.Assemble(src, step, unavailable, yield)
	}
	for ev, e := range seq {
		if e != nil {
			err = e
			continue
		}
		switch ev.Kind {
		case providers.TextDelta:
			trace = append(trace, "text:"+ev.Text)
		case providers.ToolCallEvent:
			trace = append(trace, "call:"+ev.ToolCall.ID+":"+ev.ToolCall.Name+":"+string(ev.ToolCall.Args))
		case providers.UsageEvent:
			trace = append(trace, "usage")
		case providers.FinishEvent:
			trace = append(trace, "finish:"+string(ev.Finish))
		}
		if stopAfter > 0 && len(trace) == stopAfter {
			break
		}
	}
	return trace, err
}

func checkTrace(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

func TestAssembleEmitsToolCallsInIndexOrderThenUsageThenFinish(t *testing.T) {
	src := &source{ops: []op{
		{kind: 't', args: "hi"},
		{kind: 'a', index: 1, id: "b", name: "g", args: "{}"},
		{kind: 'a', index: 0, id: "a", name: "f", args: `{"x":`},
		{kind: 'u'},
		{kind: 'a', index: 0, args: "1}"},
		{kind: 'f', reason: providers.FinishToolCalls},
	}}
	got, err := assemble(src, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, "text:hi", `call:a:f:{"x":1}`, "call:b:g:{}", "usage", "finish:tool_calls")
	if src.closed != 1 {
		t.Errorf("source closed %d times, want 1", src.closed)
	}
}

func TestAssembleJoinsNameFragmentsAndKeepsTheLastID(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 'a', name: "get_"},
		{kind: 'a', id: "c1", name: "weather", args: `{"city":`},
		{kind: 'a', id: "c1", args: `"Oslo"}`},
		{kind: 'f', reason: providers.FinishToolCalls},
	}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, `call:c1:get_weather:{"city":"Oslo"}`, "finish:tool_calls")
}

func TestAssembleNewIDAtAUsedIndexStartsANewCall(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 'a', id: "c1", name: "f", args: `{"n":1}`},
		{kind: 'a', id: "c2", name: "g", args: `{"n":2}`},
		{kind: 'f', reason: providers.FinishToolCalls},
	}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, `call:c1:f:{"n":1}`, `call:c2:g:{"n":2}`, "finish:tool_calls")
}

func TestAssembleArgumentsAreFragmentsElseStartInputElseEmptyObject(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 's', index: 0, id: "a", name: "f", args: `{"start":1}`},
		{kind: 'a', index: 0, args: `{"delta":1}`},
		{kind: 's', index: 1, id: "b", name: "g", args: `{"start":2}`},
		{kind: 'a', index: 1, args: "  "},
		{kind: 's', index: 2, id: "c", name: "h"},
		{kind: 'f', reason: providers.FinishToolCalls},
	}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, `call:a:f:{"delta":1}`, `call:b:g:{"start":2}`, "call:c:h:{}", "finish:tool_calls")
}

func TestAssembleReportsStopAfterToolCallsAsToolCalls(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 's', id: "a", name: "f"},
		{kind: 'f', reason: providers.FinishStop},
	}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, "call:a:f:{}", "finish:tool_calls")

	got, err = assemble(&source{ops: []op{{kind: 't', args: "ok"}, {kind: 'f', reason: providers.FinishStop}}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, "text:ok", "finish:stop")
}

func TestAssembleWithoutFinishIsErrConnectionAfterUsage(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 't', args: "half"},
		{kind: 'a', id: "a", name: "f", args: "{}"},
		{kind: 'u'},
	}}, 0)
	if !errors.Is(err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	checkTrace(t, got, "text:half", "usage")
}

func TestAssembleClassifiesAFailedStreamAfterUsage(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 'u'},
		{kind: 'f', reason: providers.FinishStop},
	}, err: io.ErrUnexpectedEOF}, 0)
	if !errors.Is(err, providers.ErrUnavailable) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want ErrUnavailable wrapping io.ErrUnexpectedEOF", err)
	}
	checkTrace(t, got, "usage")
}

func TestAssembleCutsOffToolCallsPastMaxToolCallBytes(t *testing.T) {
	piece := strings.Repeat("a", providers.MaxToolCallBytes/4)
	src := &source{ops: []op{{kind: 'a', id: "c1", name: "f", args: `{"x":"`}}}
	for range 5 {
		src.ops = append(src.ops, op{kind: 'a', args: piece})
	}
	src.ops = append(src.ops, op{kind: 'f', reason: providers.FinishToolCalls})
	got, err := assemble(src, 0)
	if !errors.Is(err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	checkTrace(t, got) // no call, no finish
	if src.next != 5 || src.closed != 1 {
		t.Errorf("read %d ops and closed %d times; want the stream stopped at the fifth and closed once", src.next, src.closed)
	}
}

func TestAssembleStopsAndClosesWhenTheConsumerStops(t *testing.T) {
	src := &source{ops: []op{
		{kind: 't', args: "a"},
		{kind: 'a', id: "c1", name: "f"},
		{kind: 'a', index: 1, id: "c2", name: "g"},
		{kind: 'u'},
		{kind: 'f', reason: providers.FinishToolCalls},
	}}
	for stop := 1; stop <= 4; stop++ {
		src.next, src.closed = 0, 0
		got, err := assemble(src, stop)
		if err != nil || len(got) != stop {
			t.Errorf("stopping after %d: events %q, err %v", stop, got, err)
		}
		if src.closed != 1 {
			t.Errorf("stopping after %d: source closed %d times, want 1", stop, src.closed)
		}
	}
}

func TestAssemblerTakesNoToolCallsAfterFinish(t *testing.T) {
	got, err := assemble(&source{ops: []op{
		{kind: 'a', id: "c1", name: "f"},
		{kind: 'f', reason: providers.FinishStop},
		{kind: 'a', index: 1, id: "c2", name: "g"},
		{kind: 's', index: 2, id: "c3", name: "h"},
		{kind: 'u'},
		{kind: 'f', reason: providers.FinishLength},
	}}, 0)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	checkTrace(t, got, "call:c1:f:{}", "usage", "finish:tool_calls")
}

func TestAssemblerOpenIsTrueOnlyWhereACallWasOpened(t *testing.T) {
	var a providers.Assembler
	yield := func(providers.Event, error) bool { return true }
	if a.Open(0) {
		t.Fatal("a zero Assembler has a call open")
	}
	a.Start(3, "c", "f", nil, yield)
	a.Append(5, "", "", "{}", yield)
	for i, want := range []bool{false, false, false, true, false, true} {
		if a.Open(int64(i)) != want {
			t.Errorf("Open(%d) = %v, want %v", i, !want, want)
		}
	}
}
