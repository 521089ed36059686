package assistant

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// conn is the model connection a turn talks to, and the limits that come
// with it: the one place a turn reads provider settings from.
type conn struct {
	name          string // the connection's name in spend keys
	provider      providers.Provider
	model         string
	topicModel    string // the topic filter's model; "": model
	maxOutput     int    // per model call; 0: the provider's default
	temperature   *float64
	topP          *float64
	effort        string // reasoning effort; "": the provider's default
	window        int    // the context window in tokens
	family        string // the models' family, for the prompt's calibration note
	drain         time.Duration
	maxTurnTokens int // the turn's output cap
	maxTurnBytes  int
	retries       int           // tries again of a call that failed before its first event
	retryWait     time.Duration // the most all of one call's waits may add up to
	idle          time.Duration // a stream silent this long is ended; <= 0: never
	tel           *telemetry    // the Engine's: each call's span and metrics (telemetry.go)
}

// callKind is what a model call is for.
type callKind int8

const (
	turnCall    callKind = iota // a round of a turn
	summaryCall                 // the running summary (compact.go)
	titleCall                   // a thread's title (titles.go)
	topicCall                   // the topic filter's verdict on a message (topic.go)
)

// titleTokens bounds the title call's answer.
const titleTokens = 32

// request is the one builder of this connection's model calls: the
// connection's model (the topic filter's for its call), and the output
// limit of the kind. stable is how many leading bytes of system are the
// same for every user and turn: a provider with prompt caching puts its
// breakpoint there. A turn's calls carry the turn's completion settings.
// The summary's, the title's and the topic filter's do not: they are the
// Engine's own calls, not the user's (a reasoning effort could spend a
// title's 32 tokens on reasoning), and their fixed instructions are
// stable whole.
func (c *conn) request(kind callKind, system string, stable int, msgs []providers.Message, tools []providers.ToolDef) *providers.Request {
	req := &providers.Request{Model: c.model, System: system, SystemStable: stable, Messages: msgs, Tools: tools}
	switch kind {
	case turnCall:
		req.MaxTokens, req.Temperature, req.TopP, req.ReasoningEffort = c.maxOutput, c.temperature, c.topP, c.effort
	case summaryCall:
		req.MaxTokens, req.SystemStable = c.summaryTokens(), len(system)
	case titleCall:
		req.MaxTokens, req.SystemStable = titleTokens, len(system)
	case topicCall:
		req.Model, req.MaxTokens, req.SystemStable = c.topicModelName(), topicTokens, len(system)
	}
	return req
}

// topicModelName is the model of the topic filter's call.
func (c *conn) topicModelName() string { return cmp.Or(c.topicModel, c.model) }

// resultBudget is how many bytes of one tool result the model reads: an
// eighth of the context window, at about four bytes a token.
func (c *conn) resultBudget() int { return c.window * 4 / 8 }

// backoff is how long to wait before trying a failed call again, and
// whether to: only for a busy or unreachable model, at most c.retries
// times, within c.retryWait in all. The wait doubles from half a second,
// with jitter, unless the server said how long (Retry-After).
func (c *conn) backoff(err error, attempt int, waited time.Duration) (time.Duration, bool) {
	switch providers.CategoryOf(err) {
	case providers.CategoryRateLimit, providers.CategoryUnavailable, providers.CategoryConnection:
	default:
		return 0, false
	}
	if attempt >= c.retries {
		return 0, false
	}
	base := 500 * time.Millisecond << attempt
	d := base/2 + rand.N(base/2+1)
	if pe, ok := errors.AsType[*providers.Error](err); ok && pe.RetryAfter > 0 {
		d = pe.RetryAfter
	}
	if waited+d > c.retryWait {
		return 0, false
	}
	return d, true
}

// waitingNote is what the user reads while the turn waits to try again.
func waitingNote(err error, d time.Duration) string {
	why := "The model is busy."
	if providers.CategoryOf(err) == providers.CategoryConnection {
		why = "The model cannot be reached."
	}
	return fmt.Sprintf("%s Trying again in %v.", why, max(d.Round(time.Second), time.Second))
}

// complete makes a model call nobody watches (a summary, a title, the
// topic filter's), once, and returns its text, cleaned of inline
// reasoning and tool markup, and its usage (estimated when the server
// reports none). Past its request's token limit, which is also held here
// (a server may ignore it), or the turn's output cap in bytes it fails:
// a summary that runs on costs no more than it was allowed.
func (c *conn) complete(ctx context.Context, req *providers.Request) (string, providers.Usage, error) {
	var out transcript
	tokens, bytes := math.MaxInt32, c.maxTurnBytes
	if req.MaxTokens > 0 {
		tokens, bytes = req.MaxTokens, min(bytes, 4*req.MaxTokens+3)
	}
	out.init(tokens, bytes, nil, nil)
	text, _, err := c.stream(ctx, modelCall{req: req, out: &out, emit: func(blocks.Block) {}, once: true})
	if err == nil && out.capped {
		err = errors.New("over the output cap")
	}
	return text, out.usage, err
}

// providerErr classifies a provider failure; its text stays in the cause.
func providerErr(err error) error {
	switch providers.CategoryOf(err) {
	case providers.CategoryRateLimit:
		return wrap(CodeModelBusy, "model call", err)
	case providers.CategoryTimeout:
		return wrap(CodeModelTimeout, "model call", err)
	case providers.CategoryCanceled:
		return wrap(CodeCancelled, "model call", err)
	default:
		return wrap(CodeModelUnavailable, "model call", err)
	}
}
