package toolstest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/toolstest"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	fatal  bool
	logs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.Logf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// check runs f against a recorder, on its own goroutine so Fatal can stop it.
func check(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

type greetArgs struct {
	Name string `json:"name"`
}

func greeter(t *testing.T) tools.BaseTool {
	t.Helper()
	return tools.Must(tools.New(tools.Spec{Name: "greet", Description: "Greets someone.", Effect: tools.Mutate},
		func(_ context.Context, call tools.Call, in greetArgs) (tools.Result, error) {
			switch {
			case in.Name == "nobody":
				return tools.Fail(tools.CodeNotFound, "no such person"), nil
			case in.Name == "panic":
				panic("boom")
			case !call.Approved || call.User.ID == "" || call.ID == "" || call.ThreadID == "":
				return tools.Fail(tools.CodeConflict, "bad fake call"), nil
			}
			return tools.OK("hello "+in.Name, nil), nil
		}))
}

func TestRunInvokesWithFakeCall(t *testing.T) {
	r := toolstest.Run(t, greeter(t), `{"name":"Ada"}`)
	toolstest.RequireOK(t, r)
	if r.Summary != "hello Ada" {
		t.Errorf("Summary = %q", r.Summary)
	}
}

func TestRunValidatesArguments(t *testing.T) {
	r := toolstest.Run(t, greeter(t), `{"nom":"Ada"}`)
	toolstest.RequireError(t, r, tools.CodeInvalidArgs)
}

func TestRunRecoversPanicAndLogsIt(t *testing.T) {
	var r tools.Result
	rec := check(t, func(tb testing.TB) { r = toolstest.Run(tb, greeter(t), `{"name":"panic"}`) })
	if rec.failed {
		t.Errorf("Run failed the test: %v", rec.logs)
	}
	toolstest.RequireError(t, r, tools.CodeInternal)
	if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], "panicked: boom") {
		t.Errorf("logs = %q, want the panic", rec.logs)
	}
}

func TestRunReportsUnencodableData(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{Name: "chan", Description: "d"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.OK("", make(chan int)), nil
		}))
	rec := check(t, func(tb testing.TB) { toolstest.Run(tb, tool, `{}`) })
	if !rec.failed {
		t.Error("Run accepted Data that does not encode")
	}
}

func TestRequireOKFailsOnError(t *testing.T) {
	rec := check(t, func(tb testing.TB) { toolstest.RequireOK(tb, tools.Fail(tools.CodeNotFound, "gone")) })
	if !rec.fatal || !strings.Contains(strings.Join(rec.logs, ""), "NOT_FOUND") {
		t.Errorf("RequireOK: fatal=%v logs=%q", rec.fatal, rec.logs)
	}
	rec = check(t, func(tb testing.TB) { toolstest.RequireOK(tb, tools.OK("fine", nil)) })
	if rec.failed {
		t.Errorf("RequireOK failed a success: %q", rec.logs)
	}
}

func TestRequireErrorChecksCode(t *testing.T) {
	tests := []struct {
		name string
		r    tools.Result
		fail bool
	}{
		{"matching code", tools.Fail(tools.CodeNotFound, "gone"), false},
		{"other code", tools.Fail(tools.CodeConflict, "busy"), true},
		{"success", tools.OK("fine", nil), true},
		{"no message", tools.Fail(tools.CodeNotFound, ""), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := check(t, func(tb testing.TB) { toolstest.RequireError(tb, tt.r, tools.CodeNotFound) })
			if rec.fatal != tt.fail {
				t.Errorf("fatal = %v, want %v (%q)", rec.fatal, tt.fail, rec.logs)
			}
		})
	}
}

type badSpec struct {
	spec  func() tools.Spec
	calls int
}

func (b *badSpec) Spec() tools.Spec { b.calls++; return b.spec() }
func (b *badSpec) Execute(context.Context, tools.Call) (tools.Result, error) {
	return tools.OK("", nil), nil
}

func TestCheckSpec(t *testing.T) {
	good := tools.Spec{Name: "good", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}
	tests := []struct {
		name string
		tool tools.BaseTool
		fail bool
	}{
		{"typed tool", greeter(t), false},
		{"valid plain tool", &badSpec{spec: func() tools.Spec { return good }}, false},
		{"nil", nil, true},
		{"bad name", &badSpec{spec: func() tools.Spec { s := good; s.Name = "a b"; return s }}, true},
		{"schema does not compile", &badSpec{spec: func() tools.Spec {
			s := good
			s.InputSchema = json.RawMessage(`{"type":"object","minProperties":"x"}`)
			return s
		}}, true},
		{"unstable spec", func() tools.BaseTool {
			b := &badSpec{}
			b.spec = func() tools.Spec { s := good; s.Description = strings.Repeat("d", b.calls); return s }
			return b
		}(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := check(t, func(tb testing.TB) { toolstest.CheckSpec(tb, tt.tool) })
			if rec.fatal != tt.fail {
				t.Errorf("fatal = %v, want %v (%q)", rec.fatal, tt.fail, rec.logs)
			}
		})
	}
}

func TestCallApprovesOnlyToolsThatNeedApproval(t *testing.T) {
	read := tools.Must(tools.New(tools.Spec{Name: "r", Description: "d"}, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.OK("", nil), nil
	}))
	if toolstest.Call(read, "{}").Approved {
		t.Error("a Read call is approved")
	}
	if !toolstest.Call(greeter(t), "{}").Approved {
		t.Error("a Mutate call is not approved")
	}
}
