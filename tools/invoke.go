package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
)

// Invoke runs one call of t: the single way the Engine executes tools.
//
// It validates call.Args against t's input schema (compiled once: typed
// tools and tools in a [Set] bring theirs, other tools' schemas are
// compiled on first use and cached by name and schema), treating empty or
// null arguments as {}, and then calls t.Execute with the validated
// arguments.
//
// The Result is always fit to send to the model:
//   - invalid arguments: INVALID_ARGS, Retryable, with a message naming
//     each offending field, e.g. `"days": must be <= 14`;
//   - Execute returned an error or panicked: INTERNAL, "the tool failed";
//   - ctx's deadline passed: TIMEOUT;
//   - a Result with OK false and no Error gets an INTERNAL error; a Result
//     with an Error is a failure whatever its OK says, and an Error missing
//     its code or message gets INTERNAL or a generic message.
//
// The error is for the log only and never shown to the model: it wraps
// [ErrInvalidArgs] for argument failures, the tool's own error, a
// [*PanicError], ctx's error, or [ErrInvalidSpec] when t's schema does not
// compile. It is nil when the tool ran and reported its own outcome.
//
// When ctx can be done, Execute runs on its own goroutine, and Invoke
// returns when ctx is done even if the tool ignores ctx; the tool's late
// result is discarded.
func Invoke(ctx context.Context, t BaseTool, call Call) (Result, error) {
	return run(ctx, t, call, func(ct compiledTool) func(context.Context, Call) (Result, error) {
		if ct != nil {
			return ct.executeValidated
		}
		return t.Execute
	})
}

// run validates call.Args against t's schema and then runs what pick
// returns for t (given t as a compiledTool when it is one); a nil function
// means there is nothing to run, and an OK Result is returned.
func run(ctx context.Context, t BaseTool, call Call, pick func(ct compiledTool) func(context.Context, Call) (Result, error)) (res Result, err error) {
	if t == nil {
		return Fail(CodeUnknownTool, "there is no such tool"), ErrUnknownTool
	}
	name := "?"
	defer func() { // Spec or a custom tool's plumbing may panic too
		if r := recover(); r != nil {
			res, err = panicked(name, r)
		}
	}()
	var sch *argSchema
	ct, typed := t.(compiledTool)
	if typed {
		name, sch = ct.name(), ct.argSchema()
	} else {
		spec := t.Spec()
		name = spec.Name
		if sch, err = compiledFor(spec); err != nil {
			return Fail(CodeInternal, "the tool is misconfigured"), err
		}
	}
	args, aerr := sch.check(call.Args)
	if aerr != nil {
		return aerr.result(), fmt.Errorf("tools: %s: %w", name, aerr)
	}
	fn := pick(ct)
	if fn == nil {
		return Result{OK: true}, nil
	}
	call.Args = args
	if err := ctx.Err(); err != nil {
		return contextResult(err), fmt.Errorf("tools: %s: %w", name, err)
	}
	res, err = execute(ctx, name, fn, call)
	return finish(ctx, name, res, err)
}

// execute runs the tool, on its own goroutine if ctx can end first.
func execute(ctx context.Context, name string, run func(context.Context, Call) (Result, error), call Call) (Result, error) {
	if ctx.Done() == nil {
		return safeRun(ctx, name, run, call)
	}
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1) // buffered: an abandoned tool must not block forever
	go func() {
		var o outcome
		o.res, o.err = safeRun(ctx, name, run, call)
		done <- o
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		select {
		case o := <-done: // finished at the same moment: keep its result
			return o.res, o.err
		default:
			return Result{}, context.Cause(ctx)
		}
	}
}

func safeRun(ctx context.Context, name string, run func(context.Context, Call) (Result, error), call Call) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = panicked(name, r)
		}
	}()
	return run(ctx, call)
}

// finish turns what the tool returned into the Result the model sees.
func finish(ctx context.Context, name string, res Result, err error) (Result, error) {
	if err == nil {
		return normalize(res), nil
	}
	var ae *argsError
	if errors.As(err, &ae) {
		return ae.result(), fmt.Errorf("tools: %s: %w", name, err)
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return internalResult(), err
	}
	if cerr := ctx.Err(); cerr != nil || errors.Is(err, context.DeadlineExceeded) {
		if cerr == nil {
			cerr = err
		}
		if !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", err, cerr)
		}
		return contextResult(cerr), fmt.Errorf("tools: %s: %w", name, err)
	}
	return internalResult(), fmt.Errorf("tools: %s: %w", name, err)
}

func internalResult() Result { return Fail(CodeInternal, msgInternal) }

const msgInternal = "the tool failed"

// contextResult is the Result for a call cut short by its context.
func contextResult(err error) Result {
	if errors.Is(err, context.DeadlineExceeded) {
		r := Fail(CodeTimeout, "the tool did not finish in time")
		r.Error.Retryable = true
		return r
	}
	return Fail(CodeInternal, "the call was canceled")
}

// normalize makes OK and Error agree and fills in what an author left out.
// It never modifies the ToolError the tool returned, which may be shared.
func normalize(r Result) Result {
	switch {
	case r.Error != nil:
		e := *r.Error
		if e.Code == "" {
			e.Code = CodeInternal
		}
		if e.Message == "" {
			e.Message = defaultMessage(e.Code)
		}
		r.OK, r.Error = false, &e
	case !r.OK:
		r.Error = &ToolError{Code: CodeInternal, Message: msgInternal}
	}
	return r
}

func defaultMessage(c ErrorCode) string {
	switch c {
	case CodeInvalidArgs:
		return "the arguments are invalid"
	case CodeNotFound:
		return "not found"
	case CodeConflict:
		return "the request conflicts with the current state"
	case CodeTimeout:
		return "the tool did not finish in time"
	case CodeRateLimited:
		return "too many calls; try again later"
	case CodeNotAuthorized:
		return "not allowed for this user"
	case CodeBlocked:
		return "refused by policy"
	}
	return msgInternal
}

// PanicError is the error [Invoke] returns when a tool panics. Log it; the
// model only sees "the tool failed".
type PanicError struct {
	Tool  string // the tool's name
	Value any    // what the tool panicked with
	Stack []byte // the panicking goroutine's stack
}

// Error names the tool and the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("tools: %s panicked: %v\n%s", e.Tool, e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func panicked(name string, r any) (Result, error) {
	return internalResult(), &PanicError{Tool: name, Value: r, Stack: debug.Stack()}
}

// Validate checks args against t's input schema without running t: an OK
// Result, or INVALID_ARGS naming each offending field, as [Invoke] would
// answer. Use it for calls that run elsewhere, such as client-side tools.
func Validate(t BaseTool, args json.RawMessage) (Result, error) {
	return run(context.Background(), t, Call{Args: args}, func(compiledTool) func(context.Context, Call) (Result, error) {
		return nil
	})
}
