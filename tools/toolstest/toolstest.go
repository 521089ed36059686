package toolstest

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/tools"
)

// User returns the user Run calls tools for: ID "test-user", role "user".
func User() parley.User {
	return parley.User{ID: "test-user", Roles: []string{"user"}, Name: "Test User", Locale: "en-US", TimeZone: "UTC"}
}

// Call returns the fake call Run makes: call ID "call_test", thread
// "thread_test", [User](), and Approved set for tools that need approval (a
// tool only runs after a human approved it).
func Call(tool tools.BaseTool, args string) tools.Call {
	return tools.Call{
		ID:       "call_test",
		User:     User(),
		ThreadID: "thread_test",
		Args:     json.RawMessage(args),
		Approved: tool.Spec().NeedsApproval(),
	}
}

// Run invokes tool with args through [tools.Invoke], as the Engine does
// (arguments validated first, panics recovered), under t's context, and
// returns the Result. The error Invoke returns for the log is logged with
// t.Log. Run fails the test if the Result is not fit for the model: OK and
// Error disagree, or the envelope does not encode.
func Run(t testing.TB, tool tools.BaseTool, args string) tools.Result {
	t.Helper()
	if tool == nil {
		t.Fatal("tool is nil")
	}
	return RunCall(t, tool, Call(tool, args))
}

// RunCall is Run with a call of your own.
func RunCall(t testing.TB, tool tools.BaseTool, call tools.Call) tools.Result {
	t.Helper()
	r, err := tools.Invoke(t.Context(), tool, call)
	if err != nil {
		t.Logf("tools.Invoke(%s): %v", name(tool), err)
	}
	if r.OK != (r.Error == nil) {
		t.Errorf("tools.Invoke(%s) returned OK=%v with Error %+v", name(tool), r.OK, r.Error)
	}
	if r.OK {
		if _, err := json.Marshal(r.Data); err != nil {
			t.Errorf("tool %s returned Data the model cannot read: %v", name(tool), err)
		}
	}
	return r
}

// RequireOK fails the test at once unless r succeeded.
func RequireOK(t testing.TB, r tools.Result) {
	t.Helper()
	if !r.OK || r.Error != nil {
		t.Fatalf("tool failed: %s", describe(r))
	}
}

// RequireError fails the test at once unless r failed with code.
func RequireError(t testing.TB, r tools.Result, code tools.ErrorCode) {
	t.Helper()
	switch {
	case r.OK || r.Error == nil:
		t.Fatalf("tool succeeded, want error %s: %s", code, describe(r))
	case r.Error.Code != code:
		t.Fatalf("tool failed with %s, want %s: %s", r.Error.Code, code, describe(r))
	case r.Error.Message == "":
		t.Fatalf("tool failed with %s and no message", code)
	}
}

// CheckSpec fails the test at once unless tool's Spec is valid (see
// [tools.Spec.Validate]), its input schema compiles, and Spec returns the
// same value on every call.
func CheckSpec(t testing.TB, tool tools.BaseTool) {
	t.Helper()
	if tool == nil {
		t.Fatal("tool is nil")
	}
	spec := tool.Spec()
	if err := spec.Validate(); err != nil {
		t.Fatalf("invalid spec: %v", err)
	}
	if _, err := tools.NewSet(tool); err != nil {
		t.Fatalf("spec of %s: %v", spec.Name, err)
	}
	a, _ := json.Marshal(spec)
	b, _ := json.Marshal(tool.Spec())
	if string(a) != string(b) {
		t.Fatalf("Spec of %s changes between calls:\n%s\n%s", spec.Name, a, b)
	}
}

func name(tool tools.BaseTool) (n string) {
	defer func() {
		if recover() != nil {
			n = "?"
		}
	}()
	return tool.Spec().Name
}

func describe(r tools.Result) string {
	return string(tools.MarshalForModel(r))
}
