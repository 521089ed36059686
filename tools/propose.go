package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Proposer is implemented by Mutate and Destructive tools that can dry-run
// a call: check that it would succeed and say in one line what it will do,
// without doing it. The Engine calls Propose before it asks a human to
// approve the call, and shows Result.Summary on the confirm card. A failed
// Result goes back to the model instead, and no approval is asked for, so
// the model can fix a call that could never apply. Propose must not change
// anything.
type Proposer interface {
	Propose(ctx context.Context, call Call) (Result, error)
}

// Propose is [Invoke] for the dry run: it validates call.Args against t's
// schema, then calls t's Propose if t is a [Proposer]. A tool that is not a
// Proposer gets an OK Result with an empty Summary, for the caller to fill
// in. Results and errors follow Invoke's rules.
func Propose(ctx context.Context, t BaseTool, call Call) (Result, error) {
	return run(ctx, t, call, func(ct compiledTool) func(context.Context, Call) (Result, error) {
		if vp, ok := ct.(interface {
			proposeValidated(context.Context, Call) (Result, error)
		}); ok {
			return vp.proposeValidated
		}
		if p, ok := t.(Proposer); ok {
			return p.Propose
		}
		return nil
	})
}

// WithPropose gives a tool made by [New] a dry run: fn receives the
// validated arguments decoded into In, like the tool's own handler, and
// follows the contract of [Proposer]. t must come from New[In] with the
// same In, else WithPropose returns an error wrapping [ErrInvalidSpec].
func WithPropose[In any](t BaseTool, fn func(ctx context.Context, call Call, in In) (Result, error)) (BaseTool, error) {
	tt, ok := t.(*typedTool[In])
	if !ok || fn == nil {
		name := "?"
		if t != nil {
			name = t.Spec().Name
		}
		return nil, fmt.Errorf("%w: tool %q: WithPropose needs a tool from New with the same input type and a non-nil fn", ErrInvalidSpec, name)
	}
	return &proposingTool[In]{typedTool: tt, propose: fn}, nil
}

type proposingTool[In any] struct {
	*typedTool[In]
	propose func(ctx context.Context, call Call, in In) (Result, error)
}

var _ Proposer = (*proposingTool[struct{}])(nil)

// Propose validates call.Args itself, so it is safe to call directly.
func (t *proposingTool[In]) Propose(ctx context.Context, call Call) (Result, error) {
	args, aerr := t.args.check(call.Args)
	if aerr != nil {
		return aerr.result(), nil
	}
	call.Args = args
	r, err := t.proposeValidated(ctx, call)
	if ae, ok := errors.AsType[*argsError](err); ok {
		return ae.result(), nil
	}
	return r, err
}

func (t *proposingTool[In]) proposeValidated(ctx context.Context, call Call) (Result, error) {
	var in In
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return Result{}, decodeError(err)
	}
	return t.propose(ctx, call, in)
}
