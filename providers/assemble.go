package providers

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxToolCallBytes bounds the tool call text (ids, names and arguments) one
// stream may buffer. A call is handed on only at the finish; the Engine's
// turn output cap is far below this, so it only stops a server that never
// finishes.
const MaxToolCallBytes = 4 << 20

var (
	errToolCallsTooLarge = fmt.Errorf("providers: tool calls passed %d bytes without completing", MaxToolCallBytes)
	errTruncated         = errors.New("providers: stream ended without a finish reason")
)

// Assembler holds what a driver may hand on only at the end of a stream:
// the tool calls it assembles from their fragments, the usage and the
// finish reason. Text and reasoning deltas do not pass through it; a driver
// yields them as they come.
//
// A tool call is kept under the index the server gives it (a content block,
// a position in a tool_calls array). Once the calls buffered pass
// MaxToolCallBytes, Start and Append yield an *Error of CategoryConnection
// and return false; like Finish, they report whether the stream goes on,
// and the driver stops when it does not.
//
// Assemble makes one Assembler per stream; the zero value is ready to
// use. It is not safe for concurrent use.
type Assembler struct {
	// Usage, when non-nil, goes out as the one UsageEvent at the end. A
	// driver sets it, or updates its counts, as the server reports them.
	Usage *Usage
	// Model, when set, is the model the server says answered; it goes out
	// on the FinishEvent. A driver sets it as the server reports it.
	Model string

	calls    []*call         // in the order they were opened
	open     map[int64]*call // the call open at each index
	size     int             // tool call bytes buffered
	finished bool            // Finish was called
	reason   FinishReason
}

// call is one tool call being assembled.
type call struct {
	index    int64
	order    int // position in Assembler.calls when opened
	id, name string
	input    json.RawMessage // the arguments the call opened with
	args     strings.Builder // argument fragments
}

// Start opens a new tool call at index, with the id and name the server
// sent and input, the arguments the call opened with (nil: none); an
// earlier call at index is kept but takes no more fragments. input is the
// call's arguments only when no Append adds fragments to it. After Finish, Start does nothing
// and returns true.
func (a *Assembler) Start(index int64, id, name string, input json.RawMessage, yield func(Event, error) bool) bool {
	if a.finished {
		return true
	}
	c := a.openCall(index)
	c.id, c.name, c.input = id, name, input
	return a.grow(len(id)+len(name)+len(input), yield)
}

// Append adds a fragment to the tool call open at index: a non-empty id
// replaces the call's id; name and args are appended to its name and
// arguments. It opens a new call when none is open at index, or when id
// and the open call's id are both non-empty and differ (some servers send
// every call at index 0). After Finish, Append does nothing and returns
// true.
func (a *Assembler) Append(index int64, id, name, args string, yield func(Event, error) bool) bool {
	if a.finished {
		return true
	}
	c := a.open[index]
	if c == nil || (id != "" && c.id != "" && id != c.id) {
		c = a.openCall(index)
	}
	if id != "" {
		c.id = id
	}
	c.name += name
	c.args.WriteString(args)
	return a.grow(len(name)+len(args), yield)
}

// Open reports whether Start or Append has opened a tool call at index.
func (a *Assembler) Open(index int64) bool { return a.open[index] != nil }

// Finish records why the model stopped and yields one ToolCallEvent per
// call, ordered by index and, at one index, by opening. A call's arguments
// are its fragments, else the input it started with, else "{}". Finish
// reports whether the consumer wants more; a second Finish does nothing
// and returns true.
func (a *Assembler) Finish(reason FinishReason, yield func(Event, error) bool) bool {
	if a.finished {
		return true
	}
	a.finished, a.reason = true, reason
	slices.SortFunc(a.calls, func(x, y *call) int {
		return cmp.Or(cmp.Compare(x.index, y.index), cmp.Compare(x.order, y.order))
	})
	for _, c := range a.calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = string(c.input)
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if !yield(Event{Kind: ToolCallEvent, ToolCall: ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(args)}}, nil) {
			return false
		}
	}
	return true
}

// Finished reports whether Finish was called. Nothing but usage may follow
// the finish: its tool calls have gone out.
func (a *Assembler) Finished() bool { return a.finished }

// Assemble runs one stream of a driver's Provider.Stream. It hands each
// element of src to step, with the stream's Assembler and yield, until
// step returns false or src ends, and then ends the sequence as the
// Provider contract orders it: the Usage, when set, as a UsageEvent; then,
// if src failed, classify(src.Err()); else, if step never called Finish,
// an *Error of CategoryConnection (the stream was cut short, even if the
// connection closed cleanly); else one FinishEvent, whose FinishStop is
// FinishToolCalls when there were tool calls. It closes src before it
// returns, which releases the connection when the consumer stops early.
//
// step yields text and reasoning deltas itself (none once the Assembler
// is Finished), records tool calls, usage and the finish on the Assembler,
// and returns false when yield does and after yielding an error. classify turns the SDK's error, never nil,
// into an *Error.
// openai-go's and anthropic-sdk-go's ssestream.Stream fit src.
func Assemble[T any](
	src interface {
		Next() bool
		Current() T
		Err() error
		Close() error
	},
	step func(a *Assembler, ev T, yield func(Event, error) bool) bool,
	classify func(error) error,
	yield func(Event, error) bool,
) {
	defer src.Close()
	var a Assembler
	for src.Next() {
		if !step(&a, src.Current(), yield) {
			return
		}
	}
	err := src.Err()
	if err != nil {
		err = classify(err)
	}
	a.end(err, yield)
}

// end yields the usage and then err, the truncation error or the finish.
func (a *Assembler) end(err error, yield func(Event, error) bool) {
	if a.Usage != nil && !yield(Event{Kind: UsageEvent, Usage: *a.Usage}, nil) {
		return
	}
	switch {
	case err != nil:
		yield(Event{}, err)
	case !a.finished:
		yield(Event{}, &Error{Category: CategoryConnection, Err: errTruncated})
	default:
		reason := a.reason
		if len(a.calls) > 0 && reason == FinishStop {
			// Some servers report a plain stop after tool calls; the Engine
			// acts on the calls either way, so say what happened.
			reason = FinishToolCalls
		}
		yield(Event{Kind: FinishEvent, Finish: reason, Model: a.Model}, nil)
	}
}

// openCall opens a new call at index, keeping any earlier one.
func (a *Assembler) openCall(index int64) *call {
	if a.open == nil {
		a.open = make(map[int64]*call)
	}
	c := &call{index: index, order: len(a.calls)}
	a.open[index] = c
	a.calls = append(a.calls, c)
	return c
}

// grow counts n more buffered bytes and fails the stream past
// MaxToolCallBytes: a server that streams arguments without end must not
// take the process's memory with it.
func (a *Assembler) grow(n int, yield func(Event, error) bool) bool {
	if a.size += n; a.size > MaxToolCallBytes {
		yield(Event{}, &Error{Category: CategoryConnection, Err: errToolCallsTooLarge})
		return false
	}
	return true
}
