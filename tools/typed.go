package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// New returns a tool whose arguments are decoded into In before fn runs.
//
// When spec.InputSchema is nil it is inferred from In by [SchemaFor]; In
// must then be a struct (or a map with string keys), since tool arguments
// are a JSON object. Use struct{} for a tool without arguments. The schema
// is compiled once, here; every call is validated against it and decoded
// into a fresh In before fn runs, so fn never sees arguments that break the
// schema. An empty spec.Effect becomes Read.
//
// New returns an error wrapping [ErrInvalidSpec] if spec is malformed (see
// [Spec.Validate]), the schema cannot be inferred or compiled, or fn is nil.
// fn follows the contract of [BaseTool.Execute].
func New[In any](spec Spec, fn func(ctx context.Context, call Call, in In) (Result, error)) (BaseTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: tool %q: nil handler", ErrInvalidSpec, spec.Name)
	}
	if spec.Effect == "" {
		spec.Effect = Read
	}
	if len(spec.InputSchema) == 0 {
		raw, err := SchemaFor[In]()
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: inferring the input schema: %v", ErrInvalidSpec, spec.Name, err)
		}
		spec.InputSchema = raw
	} else {
		spec.InputSchema = slices.Clone(spec.InputSchema)
	}
	spec.Pages = slices.Clone(spec.Pages)
	spec.IDArgs = slices.Clone(spec.IDArgs)
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	a, err := compileSchema(spec.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrInvalidSpec, spec.Name, err)
	}
	return &typedTool[In]{spec: spec, args: a, fn: fn}, nil
}

// Must returns t, or panics if err is not nil. It is meant for tools built
// at program start: tools.Must(tools.New(spec, fn)).
func Must(t BaseTool, err error) BaseTool {
	if err != nil {
		panic(err)
	}
	return t
}

// compiledTool is a tool that carries its compiled schema, so [Invoke]
// validates once and then skips the tool's own validation.
type compiledTool interface {
	BaseTool
	argSchema() *argSchema
	name() string
	// executeValidated runs the tool on arguments argSchema accepted. It
	// returns an *argsError if they cannot be decoded.
	executeValidated(ctx context.Context, call Call) (Result, error)
}

type typedTool[In any] struct {
	spec Spec
	args *argSchema
	fn   func(ctx context.Context, call Call, in In) (Result, error)
}

var _ compiledTool = (*typedTool[struct{}])(nil)

func (t *typedTool[In]) Spec() Spec            { return t.spec }
func (t *typedTool[In]) argSchema() *argSchema { return t.args }
func (t *typedTool[In]) name() string          { return t.spec.Name }

// Execute validates call.Args itself, so the tool is safe to call directly;
// invalid arguments give an INVALID_ARGS Result and a nil error.
func (t *typedTool[In]) Execute(ctx context.Context, call Call) (Result, error) {
	args, aerr := t.args.check(call.Args)
	if aerr != nil {
		return aerr.result(), nil
	}
	call.Args = args
	r, err := t.executeValidated(ctx, call)
	var ae *argsError
	if errors.As(err, &ae) {
		return ae.result(), nil
	}
	return r, err
}

func (t *typedTool[In]) executeValidated(ctx context.Context, call Call) (Result, error) {
	var in In
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return Result{}, decodeError(err)
	}
	return t.fn(ctx, call, in)
}

// decodeError explains arguments that passed the schema but do not fit the
// Go type, such as 1.5 or 1e30 for an int.
func decodeError(err error) *argsError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		msg := "has the wrong type"
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if strings.ContainsAny(strings.TrimPrefix(te.Value, "number "), ".eE") {
				msg = "must be a whole number written without a decimal point or exponent"
			} else {
				msg = "is out of range"
			}
		case reflect.Float32, reflect.Float64:
			msg = "number is out of range"
		}
		return &argsError{msg: fmt.Sprintf("%q: %s", te.Field, msg)}
	}
	return &argsError{msg: "arguments could not be decoded: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// NewClient returns a client-side tool: one the client (the browser) runs,
// with arguments of type In. The Engine validates the model's arguments
// against the schema inferred from In, streams the call to the client and
// ends the turn; the client posts the result back. Execute is never called
// by the Engine and returns an error if called.
func NewClient[In any](spec Spec) (BaseTool, error) {
	spec.ClientSide = true
	return New(spec, func(context.Context, Call, In) (Result, error) {
		return Result{}, fmt.Errorf("tools: %s runs in the client, not on the server", spec.Name)
	})
}
