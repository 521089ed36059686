package fake

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/parleyhq/parley/providers"
)

// Turn scripts the answer to one Stream call: its steps play in order. The
// stream ends with a FinishEvent whose reason is set by Finish, or else
// derived: FinishToolCalls when the turn called a tool, FinishStop otherwise.
// A Fail step ends the stream with its error instead.
//
// A Turn is read-only once scripted, so one Turn may answer many calls.
type Turn []Step

// Step is one element of a Turn, made by Text, Reasoning, CallTool, Usage,
// Finish, Fail, Delay or Func.
type Step struct {
	kind   stepKind
	texts  []string
	call   providers.ToolCall
	usage  providers.Usage
	finish providers.FinishReason
	err    error
	delay  time.Duration
	fn     func(ctx context.Context, req *providers.Request) Turn
}

type stepKind uint8

const (
	stepText stepKind = iota + 1
	stepReasoning
	stepCall
	stepUsage
	stepFinish
	stepFail
	stepDelay
	stepFunc
)

// Text streams one TextDelta per chunk.
func Text(chunks ...string) Step { return Step{kind: stepText, texts: slices.Clone(chunks)} }

// Reasoning streams one ReasoningDelta per chunk.
func Reasoning(chunks ...string) Step {
	return Step{kind: stepReasoning, texts: slices.Clone(chunks)}
}

// CallTool emits one complete ToolCallEvent. args is the JSON arguments as
// the model would send them; "" means {}. Invalid JSON is passed on as is,
// as a model might produce it.
func CallTool(id, name, args string) Step {
	if args == "" {
		args = "{}"
	}
	return Step{kind: stepCall, call: providers.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
}

// Usage emits a UsageEvent with the given input and output token counts.
func Usage(in, out int64) Step {
	return Step{kind: stepUsage, usage: providers.Usage{InputTokens: in, OutputTokens: out}}
}

// UsageOf emits a UsageEvent with u, for cached-token counts.
func UsageOf(u providers.Usage) Step { return Step{kind: stepUsage, usage: u} }

// Finish sets the reason of the turn's final FinishEvent, which is still
// emitted last.
func Finish(reason providers.FinishReason) Step { return Step{kind: stepFinish, finish: reason} }

// Fail ends the stream with err. An err that is not already a
// *providers.Error is wrapped in one whose Category is
// providers.CategoryOf(err), as a real provider classifies its failures.
func Fail(err error) Step { return Step{kind: stepFail, err: err} }

// Delay pauses the stream for d. If ctx ends first, the stream ends with a
// CategoryCanceled or CategoryTimeout error, as a real provider's would.
func Delay(d time.Duration) Step { return Step{kind: stepDelay, delay: d} }

// Func plays the steps fn returns when the call reaches this step, decided
// from the call's context and request: an echo, a reply that depends on the
// tool results in the history, a benchmark's endless script. A whole dynamic
// turn is fake.Turn{fake.Func(fn)}. fn must not modify req, and must be safe
// for concurrent use when its Turn answers concurrent calls.
func Func(fn func(ctx context.Context, req *providers.Request) Turn) Step {
	return Step{kind: stepFunc, fn: fn}
}
