package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/tools"
)

func TestInvokeDecodesValidArgsIntoInput(t *testing.T) {
	var got forecastArgs
	var gotCall tools.Call
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d"},
		func(_ context.Context, c tools.Call, in forecastArgs) (tools.Result, error) {
			got, gotCall = in, c
			return tools.OK("ok", nil), nil
		}))
	call := tools.Call{ID: "c1", User: parley.User{ID: "u1"}, ThreadID: "t1", Args: json.RawMessage(` {"city":"Lisbon","days":3} `), Approved: true}
	r, err := tools.Invoke(t.Context(), tool, call)
	if err != nil || !r.OK {
		t.Fatalf("Invoke = %+v, %v", r, err)
	}
	if got != (forecastArgs{City: "Lisbon", Days: 3}) {
		t.Errorf("handler got %+v", got)
	}
	if gotCall.ID != "c1" || gotCall.User.ID != "u1" || gotCall.ThreadID != "t1" || !gotCall.Approved {
		t.Errorf("handler got call %+v", gotCall)
	}
	if string(gotCall.Args) != `{"city":"Lisbon","days":3}` {
		t.Errorf("handler got args %s, want them trimmed", gotCall.Args)
	}
}

func TestInvokeTreatsEmptyAndNullArgsAsEmptyObject(t *testing.T) {
	var got []string
	var mu sync.Mutex
	tool := tools.Must(tools.New(tools.Spec{Name: "now", Description: "d"},
		func(_ context.Context, c tools.Call, _ struct{}) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(c.Args))
			return tools.OK("ok", nil), nil
		}))
	for _, args := range []string{"", "  ", "null", " null\n", "{}"} {
		r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(args)})
		if err != nil || !r.OK {
			t.Errorf("args %q: Invoke = %+v, %v", args, r, err)
		}
	}
	for _, a := range got {
		if a != "{}" {
			t.Errorf("handler got args %q, want {}", a)
		}
	}
}

func TestInvokeInvalidArgsNamesField(t *testing.T) {
	tests := []struct {
		args string
		want string
		hint string
	}{
		{`{}`, `"city": missing required property`, ""},
		{`{"city":"Oslo","days":20}`, `"days": must be <= 14`, ""},
		{`{"city":"Oslo","days":0}`, `"days": must be >= 1`, ""},
		{`{"city":"Oslo","days":"3"}`, `"days": must be integer, got string`, ""},
		{`{"city":"Oslo","days":2.5}`, `"days": must be integer, got number`, ""},
		{`{"city":""}`, `"city": length must be >= 1`, ""},
		{`{"city":"Oslo","unit":"k"}`, `"unit": must be one of "c", "f"`, ""},
		{`{"city":"Oslo","town":"x"}`, `"town": unknown property`, "valid properties: city, days, stops, unit"},
		{`{"city":"Oslo","stops":[{"at":"a"},{}]}`, `"stops[1].at": missing required property`, ""},
		{`{"city":"Oslo","stops":[{"at":1}]}`, `"stops[0].at": must be string, got number`, ""},
		{`{"city":"Oslo","café/x~1":1}`, `"café/x~1": unknown property`, ""},
		{`{"city":"Oslo","stops":{}}`, `"stops": must be array, got object`, ""},
		{`{"days":"x","city":3}`, `"city": must be string, got number; "days": must be integer, got string`, ""},
		{`[1,2]`, `arguments: must be object, got array`, ""},
		{`"Oslo"`, `arguments: must be object, got string`, ""},
		{`{"city":"Oslo","days":1e999}`, `"days": number is out of range`, ""},
		{`{"city":"Oslo","days":1e-999}`, `"days": number is out of range`, ""},
		{`{"city":"Oslo","days":3.0}`, `"days": must be a whole number written without a decimal point or exponent`, ""},
		{`{"city":`, `arguments are not valid JSON: unexpected end of input`, ""},
		{`{"city":"Oslo"} {}`, `arguments are not valid JSON: unexpected data after the arguments object`, ""},
		{`{city:"Oslo"}`, `arguments are not valid JSON: invalid character 'c' looking for beginning of object key string (at byte 2)`, ""},
	}
	tool := forecastTool()
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(tt.args)})
			if !errors.Is(err, tools.ErrInvalidArgs) {
				t.Errorf("err = %v, want ErrInvalidArgs", err)
			}
			if r.OK || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || !r.Error.Retryable {
				t.Fatalf("result = %+v, want a retryable INVALID_ARGS error", r)
			}
			if r.Error.Message != tt.want {
				t.Errorf("message = %q, want %q", r.Error.Message, tt.want)
			}
			if tt.hint != "" && r.Error.Hint != tt.hint {
				t.Errorf("hint = %q, want %q", r.Error.Hint, tt.hint)
			}
		})
	}
}

func TestInvokeInvalidArgsMessageIsDeterministic(t *testing.T) {
	tool := forecastTool()
	args := json.RawMessage(`{"a":1,"b":2,"c":3,"d":4,"days":99,"stops":[{},{},{}]}`)
	first, _ := tools.Invoke(t.Context(), tool, tools.Call{Args: args})
	want := `"a": unknown property; "b": unknown property; "c": unknown property; "city": missing required property; "d": unknown property; and 4 more`
	if message(first) != want {
		t.Fatalf("message = %q, want %q", message(first), want)
	}
	for range 50 {
		r, _ := tools.Invoke(t.Context(), tool, tools.Call{Args: args})
		if message(r) != want {
			t.Fatalf("message changed between calls: %q", message(r))
		}
	}
}

func TestInvokeInvalidArgsNeverRunsTool(t *testing.T) {
	ran := false
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d"},
		func(context.Context, tools.Call, forecastArgs) (tools.Result, error) {
			ran = true
			return tools.OK("ok", nil), nil
		}))
	for _, args := range []string{`{"days":1}`, `{"city":"x","extra":1}`, `nope`} {
		if r, _ := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(args)}); r.OK {
			t.Errorf("args %s accepted", args)
		}
	}
	if ran {
		t.Error("the handler ran on invalid arguments")
	}
}

func TestInvokeValidatesPlainTool(t *testing.T) {
	var ran int
	tool := plain("lookup", `{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9]+$"}},"required":["id"]}`,
		func(context.Context, tools.Call) (tools.Result, error) {
			ran++
			return tools.OK("found", nil), nil
		})
	r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":"x1"}`)})
	if !errors.Is(err, tools.ErrInvalidArgs) || message(r) != `"id": must match the pattern '^[0-9]+$'` {
		t.Errorf("Invoke = %+v, %v", r, err)
	}
	r, err = tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":"12"}`)})
	if err != nil || !r.OK || ran != 1 {
		t.Errorf("Invoke = %+v, %v (ran %d times)", r, err, ran)
	}
}

func TestInvokeTreatsMissingSchemaAsNoArguments(t *testing.T) {
	tool := plain("ping", "", nil)
	if r, err := tools.Invoke(t.Context(), tool, tools.Call{}); err != nil || !r.OK {
		t.Errorf("no args: Invoke = %+v, %v", r, err)
	}
	r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"x":1}`)})
	if !errors.Is(err, tools.ErrInvalidArgs) || message(r) != `"x": unknown property` {
		t.Errorf("extra arg: Invoke = %+v, %v", r, err)
	}
	if r.Error.Hint != "this tool takes no arguments; call it with {}" {
		t.Errorf("hint = %q", r.Error.Hint)
	}
}

func TestInvokeBadSchemaIsInternal(t *testing.T) {
	tool := plain("broken", `{"type":"object","properties":{"a":{"type":"nope"}}}`, nil)
	r, err := tools.Invoke(t.Context(), tool, tools.Call{})
	if !errors.Is(err, tools.ErrInvalidSpec) {
		t.Errorf("err = %v, want ErrInvalidSpec", err)
	}
	if r.OK || r.Error.Code != tools.CodeInternal || strings.Contains(r.Error.Message, "nope") {
		t.Errorf("result = %+v, want a generic INTERNAL error", r.Error)
	}
}

func TestInvokeNilToolIsUnknown(t *testing.T) {
	r, err := tools.Invoke(t.Context(), nil, tools.Call{})
	if !errors.Is(err, tools.ErrUnknownTool) || r.OK || r.Error.Code != tools.CodeUnknownTool {
		t.Errorf("Invoke(nil) = %+v, %v", r, err)
	}
}

func TestInvokeRecoversPanic(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{Name: "boom", Description: "d"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			panic("secret detail")
		}))
	for _, ctx := range []context.Context{context.Background(), t.Context()} { // direct and on a goroutine
		r, err := tools.Invoke(ctx, tool, tools.Call{})
		if r.OK || r.Error.Code != tools.CodeInternal || r.Error.Message != "the tool failed" {
			t.Errorf("result = %+v", r.Error)
		}
		var pe *tools.PanicError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want a *PanicError", err)
		}
		if pe.Tool != "boom" || pe.Value != "secret detail" || !strings.Contains(string(pe.Stack), "invoke_test.go") {
			t.Errorf("PanicError = %q, %v, stack:\n%s", pe.Tool, pe.Value, pe.Stack)
		}
	}
}

func TestInvokeRecoversPanicInSpec(t *testing.T) {
	r, err := tools.Invoke(t.Context(), panickySpec{}, tools.Call{})
	var pe *tools.PanicError
	if !errors.As(err, &pe) || r.OK || r.Error.Code != tools.CodeInternal {
		t.Errorf("Invoke = %+v, %v", r, err)
	}
}

type panickySpec struct{}

func (panickySpec) Spec() tools.Spec { panic("no spec") }
func (panickySpec) Execute(context.Context, tools.Call) (tools.Result, error) {
	return tools.OK("", nil), nil
}

func TestInvokePanicWithErrorUnwraps(t *testing.T) {
	cause := errors.New("nil map")
	tool := plain("p", "", func(context.Context, tools.Call) (tools.Result, error) { panic(cause) })
	_, err := tools.Invoke(t.Context(), tool, tools.Call{})
	if !errors.Is(err, cause) {
		t.Errorf("err = %v, want it to wrap the panic value", err)
	}
}

func TestInvokeExecuteErrorIsInternal(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.3:5432: connection refused")
	tool := plain("db", "", func(context.Context, tools.Call) (tools.Result, error) {
		return tools.OK("ignored", nil), cause
	})
	r, err := tools.Invoke(t.Context(), tool, tools.Call{})
	if !errors.Is(err, cause) {
		t.Errorf("err = %v, want it to wrap the tool's error", err)
	}
	if r.OK || r.Error.Code != tools.CodeInternal || r.Error.Message != "the tool failed" {
		t.Errorf("result = %+v, want the generic INTERNAL error", r)
	}
	if strings.Contains(string(tools.MarshalForModel(r)), "10.0.0.3") {
		t.Error("the cause leaked to the model")
	}
}

func TestInvokeDeadlineIsTimeout(t *testing.T) {
	tool := plain("slow", "", func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	r, err := tools.Invoke(ctx, tool, tools.Call{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	if r.OK || r.Error.Code != tools.CodeTimeout || !r.Error.Retryable {
		t.Errorf("result = %+v, want a retryable TIMEOUT", r.Error)
	}
}

func TestInvokeReturnsWhenToolIgnoresDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tool := plain("stuck", "", func(context.Context, tools.Call) (tools.Result, error) {
		<-release
		return tools.OK("late", nil), nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	r, err := tools.Invoke(ctx, tool, tools.Call{})
	if !errors.Is(err, context.DeadlineExceeded) || r.OK || r.Error.Code != tools.CodeTimeout {
		t.Errorf("Invoke = %+v, %v, want TIMEOUT", r, err)
	}
}

func TestInvokeToolErrorAfterDeadlineIsTimeout(t *testing.T) {
	tool := plain("rpc", "", func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, errors.New("rpc error: code = DeadlineExceeded")
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	r, err := tools.Invoke(ctx, tool, tools.Call{})
	if !errors.Is(err, context.DeadlineExceeded) || r.Error == nil || r.Error.Code != tools.CodeTimeout {
		t.Errorf("Invoke = %+v, %v, want TIMEOUT", r, err)
	}
}

func TestInvokeCanceledContextDoesNotRunTool(t *testing.T) {
	ran := false
	tool := plain("t", "", func(context.Context, tools.Call) (tools.Result, error) {
		ran = true
		return tools.OK("", nil), nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, err := tools.Invoke(ctx, tool, tools.Call{})
	if !errors.Is(err, context.Canceled) || r.OK || ran {
		t.Errorf("Invoke = %+v, %v (ran %v)", r, err, ran)
	}
}

func TestInvokeNormalizesResult(t *testing.T) {
	shared := &tools.ToolError{Code: tools.CodeNotFound}
	tests := []struct {
		name string
		in   tools.Result
		want tools.ToolError
	}{
		{"failure without error", tools.Result{Summary: "hm"}, tools.ToolError{Code: tools.CodeInternal, Message: "the tool failed"}},
		{"ok with error", tools.Result{OK: true, Error: &tools.ToolError{Code: tools.CodeConflict, Message: "busy"}}, tools.ToolError{Code: tools.CodeConflict, Message: "busy"}},
		{"error without code", tools.Result{Error: &tools.ToolError{Message: "odd"}}, tools.ToolError{Code: tools.CodeInternal, Message: "odd"}},
		{"error without message", tools.Result{Error: shared}, tools.ToolError{Code: tools.CodeNotFound, Message: "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := plain("n", "", func(context.Context, tools.Call) (tools.Result, error) { return tt.in, nil })
			r, err := tools.Invoke(t.Context(), tool, tools.Call{})
			if err != nil {
				t.Fatal(err)
			}
			if r.OK || r.Error == nil || *r.Error != tt.want {
				t.Errorf("result = %+v, error %+v; want %+v", r, r.Error, tt.want)
			}
		})
	}
	if shared.Message != "" {
		t.Error("Invoke modified the tool's ToolError")
	}
}

func TestInvokeKeepsToolReportedFailure(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{Name: "vm", Description: "d"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.Errorf(tools.CodeNotFound, "no VM named %q", "web-1").WithHint("list VMs first"), nil
		}))
	r, err := tools.Invoke(t.Context(), tool, tools.Call{})
	if err != nil {
		t.Fatal(err)
	}
	want := tools.ToolError{Code: tools.CodeNotFound, Message: `no VM named "web-1"`, Hint: "list VMs first"}
	if r.OK || *r.Error != want {
		t.Errorf("error = %+v, want %+v", r.Error, want)
	}
}

func TestInvokeIsSafeForConcurrentUse(t *testing.T) {
	set, err := tools.NewSet(forecastTool(), plain("plain", `{"type":"object","properties":{"n":{"type":"integer"}}}`, nil))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			for _, tool := range set.All() {
				args := fmt.Sprintf(`{"city":"c%d","n":%d}`, i, i)
				if tool.Spec().Name == "plain" {
					args = fmt.Sprintf(`{"n":%d}`, i)
				}
				if r, err := tools.Invoke(context.Background(), tool, tools.Call{Args: json.RawMessage(args)}); err != nil && !errors.Is(err, tools.ErrInvalidArgs) || r.Error != nil && r.Error.Code != tools.CodeInvalidArgs {
					t.Errorf("%s: %+v, %v", tool.Spec().Name, r, err)
				}
			}
		})
	}
	wg.Wait()
}

func TestTypedToolValidatesWhenExecutedDirectly(t *testing.T) {
	tool := forecastTool()
	r, err := tool.Execute(t.Context(), tools.Call{Args: json.RawMessage(`{"days":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Error.Code != tools.CodeInvalidArgs || r.Error.Message != `"city": missing required property` {
		t.Errorf("Execute = %+v", r.Error)
	}
	r, err = tool.Execute(t.Context(), tools.Call{Args: json.RawMessage(`{"city":"Oslo","days":1.0}`)})
	if err != nil || r.OK || r.Error.Code != tools.CodeInvalidArgs {
		t.Errorf("Execute = %+v, %v; want INVALID_ARGS for a value that does not fit int", r, err)
	}
}

func FuzzInvokeArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"city":"Oslo","days":3}`, `{"days":1e999}`, `[]`, `{"stops":[{"at":1}]}`,
		`{"city":"x","days":3.0}`, `{"city":"\u00e9","unit":"c"}`, `{"a/b~c":1}`, `{"city":"x","days":-1e-400}`, "{\"city\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	tool := forecastTool()
	f.Fuzz(func(t *testing.T, args []byte) {
		r, err := tools.Invoke(context.Background(), tool, tools.Call{Args: args})
		if r.OK {
			if err != nil || r.Error != nil {
				t.Fatalf("OK result with %v, %+v", err, r.Error)
			}
			return
		}
		if r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || r.Error.Message == "" || !errors.Is(err, tools.ErrInvalidArgs) {
			t.Fatalf("args %q: result %+v, err %v; want OK or INVALID_ARGS", args, r.Error, err)
		}
		if !json.Valid(tools.MarshalForModel(r)) {
			t.Fatalf("invalid model JSON for %q", args)
		}
	})
}

func BenchmarkInvoke(b *testing.B) {
	tool := tools.Must(tools.New(tools.Spec{Name: "get_forecast", Description: "d"},
		func(_ context.Context, _ tools.Call, in forecastArgs) (tools.Result, error) {
			return tools.OK(in.City, nil), nil
		}))
	call := tools.Call{ID: "c", Args: json.RawMessage(`{"city":"Lisbon","days":3}`)}
	ctx := context.Background()
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, _ := tools.Invoke(ctx, tool, call); !r.OK {
				b.Fatal(r.Error)
			}
		}
	})
	b.Run("valid/deadline", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			if r, _ := tools.Invoke(ctx, tool, call); !r.OK {
				b.Fatal(r.Error)
			}
		}
	})
	bad := tools.Call{ID: "c", Args: json.RawMessage(`{"days":"x","extra":true}`)}
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, _ := tools.Invoke(ctx, tool, bad); r.OK {
				b.Fatal("accepted")
			}
		}
	})
	plainTool := plain("plain", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, nil)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, _ := tools.Invoke(ctx, plainTool, call); !r.OK {
				b.Fatal(r.Error)
			}
		}
	})
}
