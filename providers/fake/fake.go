package fake

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/parleyhq/parley/providers"
)

// ErrExhausted is the cause of the error a Provider yields for a call beyond
// its script. The error is a *providers.Error of CategoryBadRequest.
var ErrExhausted = errors.New("fake: script exhausted")

// Provider is a scripted providers.Provider. It answers each Stream call
// with the next Turn of its script, then with its default turn if one is
// set. It is safe for concurrent use.
type Provider struct {
	mu       sync.Mutex
	script   []Turn
	next     int
	fallback Turn
	requests []providers.Request
}

var _ providers.Provider = (*Provider)(nil)

// New returns a Provider answering calls with turns, in order.
func New(turns ...Turn) *Provider {
	return &Provider{script: slices.Clone(turns)}
}

// Append adds turns to the end of the script.
func (p *Provider) Append(turns ...Turn) {
	p.mu.Lock()
	p.script = append(p.script, turns...)
	p.mu.Unlock()
}

// SetDefault sets the turn answering every call beyond the script, instead
// of an ErrExhausted error. With Func it scripts an unbounded conversation.
func (p *Provider) SetDefault(t Turn) {
	p.mu.Lock()
	p.fallback = t
	p.mu.Unlock()
}

// Requests returns copies of the requests received so far, in call order.
func (p *Provider) Requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]providers.Request, len(p.requests))
	for i, r := range p.requests {
		out[i] = cloneRequest(&r)
	}
	return out
}

// Calls returns how many calls the provider has answered.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

// Stream plays the next turn. Like a real provider it does nothing until the
// sequence is iterated: the request is recorded and the turn taken when
// iteration starts, and each iteration is a new call.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		turn, ok, call := p.take(req)
		if !ok {
			yield(providers.Event{}, &providers.Error{
				Category: providers.CategoryBadRequest,
				Err:      fmt.Errorf("%w: call %d has no scripted turn", ErrExhausted, call),
			})
			return
		}
		if err := ctx.Err(); err != nil {
			yield(providers.Event{}, contextError(err))
			return
		}
		pl := player{ctx: ctx, req: req, yield: yield}
		if !pl.play(turn) {
			return
		}
		reason := pl.finish
		if reason == "" {
			reason = providers.FinishStop
			if pl.called {
				reason = providers.FinishToolCalls
			}
		}
		yield(providers.Event{Kind: providers.FinishEvent, Finish: reason}, nil)
	}
}

// take records req and returns the turn answering it.
func (p *Provider) take(req *providers.Request) (Turn, bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, cloneRequest(req))
	call := len(p.requests)
	if p.next < len(p.script) {
		t := p.script[p.next]
		p.next++
		return t, true, call
	}
	return p.fallback, p.fallback != nil, call
}

// player plays the steps of one call.
type player struct {
	ctx    context.Context
	req    *providers.Request
	yield  func(providers.Event, error) bool
	finish providers.FinishReason
	called bool
}

// play reports false when the stream ended: the consumer stopped or a
// step failed.
func (pl *player) play(t Turn) bool {
	for _, s := range t {
		switch s.kind {
		case stepText, stepReasoning:
			kind := providers.TextDelta
			if s.kind == stepReasoning {
				kind = providers.ReasoningDelta
			}
			for _, c := range s.texts {
				if !pl.yield(providers.Event{Kind: kind, Text: c}, nil) {
					return false
				}
			}
		case stepCall:
			pl.called = true
			call := s.call
			call.Args = slices.Clone(call.Args) // the consumer may keep it
			if !pl.yield(providers.Event{Kind: providers.ToolCallEvent, ToolCall: call}, nil) {
				return false
			}
		case stepUsage:
			if !pl.yield(providers.Event{Kind: providers.UsageEvent, Usage: s.usage}, nil) {
				return false
			}
		case stepFinish:
			pl.finish = s.finish
		case stepFail:
			pl.yield(providers.Event{}, classify(s.err))
			return false
		case stepDelay:
			if !pl.sleep(s.delay) {
				return false
			}
		case stepFunc:
			if !pl.play(s.fn(pl.ctx, pl.req)) {
				return false
			}
		}
	}
	return true
}

func (pl *player) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-pl.ctx.Done():
		pl.yield(providers.Event{}, contextError(pl.ctx.Err()))
		return false
	}
}

func classify(err error) error {
	if _, ok := errors.AsType[*providers.Error](err); ok {
		return err
	}
	if err == nil {
		err = errors.New("fake: Fail(nil)")
	}
	return &providers.Error{Category: providers.CategoryOf(err), Err: err}
}

func contextError(err error) error {
	cat := providers.CategoryCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		cat = providers.CategoryTimeout
	}
	return &providers.Error{Category: cat, Err: err}
}

// cloneRequest copies r deeply enough that neither side's later changes
// show through.
func cloneRequest(r *providers.Request) providers.Request {
	c := *r
	c.Messages = slices.Clone(r.Messages)
	for i := range c.Messages {
		m := &c.Messages[i]
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for j := range m.ToolCalls {
			m.ToolCalls[j].Args = slices.Clone(m.ToolCalls[j].Args)
		}
	}
	c.Tools = slices.Clone(r.Tools)
	for i := range c.Tools {
		c.Tools[i].Parameters = slices.Clone(c.Tools[i].Parameters)
	}
	if r.Temperature != nil {
		t := *r.Temperature
		c.Temperature = &t
	}
	return c
}
