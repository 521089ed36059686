package providertest

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
)

// Scenario is a provider-neutral script for one model call. A harness
// translates it into whatever makes its provider produce it: a mock server's
// response, a fake's turn.
type Scenario struct {
	Reasoning []string   // reasoning deltas, streamed before the text
	Text      []string   // content deltas, in order
	ToolCalls []ToolCall // complete calls, in order; several make a parallel call
	Usage     providers.Usage
	// Finish is the finish reason; "" means FinishToolCalls when ToolCalls
	// is set, else FinishStop.
	Finish providers.FinishReason

	// Fault, when set, makes the call fail; see the Fault constants.
	Fault Fault
	// Status is the HTTP status of FaultStatus.
	Status int
	// RetryAfter is the server's Retry-After for FaultStatus, in whole
	// seconds; 0 means no header.
	RetryAfter time.Duration
	// FaultAfter is how many Text deltas are delivered before a FaultDrop,
	// FaultMalformed or FaultStall.
	FaultAfter int
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID   string
	Name string
	// Args are the argument pieces the model streams; joined they are the
	// JSON arguments. A harness may deliver them in one piece.
	Args []string
}

// Fault is a way for a model call to fail.
type Fault uint8

// Faults a Scenario can ask for.
const (
	NoFault        Fault = iota
	FaultStatus          // the server answers with HTTP Status (and RetryAfter)
	FaultDrop            // the connection drops after FaultAfter deltas
	FaultMalformed       // a chunk that cannot be decoded arrives after FaultAfter deltas
	FaultStall           // the stream stops after FaultAfter deltas and never resumes
)

// String names the fault.
func (f Fault) String() string {
	switch f {
	case NoFault:
		return "none"
	case FaultStatus:
		return "status"
	case FaultDrop:
		return "drop"
	case FaultMalformed:
		return "malformed"
	case FaultStall:
		return "stall"
	}
	return "unknown"
}

// Model is what a harness built for one subtest.
type Model struct {
	// Provider plays the Scenario on every Stream call.
	Provider providers.Provider
	// Received returns the requests the model received so far, translated
	// back into provider-neutral form. nil when the harness cannot observe
	// them; the tests that need it are then skipped.
	Received func() []providers.Request
}

// Harness builds providers for the suite.
type Harness interface {
	// MakeModel returns a fresh provider, with its own server if it has
	// one, whose every Stream call plays s. It registers any cleanup with t
	// and calls t.Skip for a Scenario it cannot produce.
	MakeModel(t *testing.T, s Scenario) Model
}

// HarnessFunc adapts a function to a Harness.
type HarnessFunc func(t *testing.T, s Scenario) Model

// MakeModel calls f(t, s).
func (f HarnessFunc) MakeModel(t *testing.T, s Scenario) Model { return f(t, s) }
