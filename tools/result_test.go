package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/tools"
)

func TestMarshalForModel(t *testing.T) {
	tests := []struct {
		name string
		in   tools.Result
		want string
	}{
		{"ok", tools.OK("3 VMs", map[string]int{"count": 3}), `{"ok":true,"summary":"3 VMs","data":{"count":3}}`},
		{"raw data", tools.OK("", json.RawMessage(`{ "a" : [1, 2] }`)), `{"ok":true,"data":{"a":[1,2]}}`},
		{"no html escaping", tools.OK("a < b & c", "<b>"), `{"ok":true,"summary":"a < b & c","data":"<b>"}`},
		{"failure", tools.Fail(tools.CodeNotFound, "no VM web-1").WithHint("list VMs first").WithRetry(),
			`{"ok":false,"error":{"code":"NOT_FOUND","message":"no VM web-1","retryable":true,"hint":"list VMs first"}}`},
		{"zero result", tools.Result{}, `{"ok":false,"error":{"code":"INTERNAL","message":"the tool failed"}}`},
		{"UI is not sent", tools.OK("shown", nil).WithUI(blocks.Block{Kind: blocks.Markdown, Content: "secret card"}), `{"ok":true,"summary":"shown"}`},
		{"unencodable data", tools.OK("s", func() {}), `{"ok":false,"summary":"s","error":{"code":"INTERNAL","message":"the tool result could not be encoded"}}`},
		{"invalid raw data", tools.OK("s", json.RawMessage(`{`)), `{"ok":false,"summary":"s","error":{"code":"INTERNAL","message":"the tool result could not be encoded"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tools.MarshalForModel(tt.in)); got != tt.want {
				t.Errorf("MarshalForModel =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestErrorfFormatsMessage(t *testing.T) {
	r := tools.Errorf(tools.CodeConflict, "VM %q is %s", "web-1", "running")
	if r.OK || r.Error.Code != tools.CodeConflict || r.Error.Message != `VM "web-1" is running` {
		t.Errorf("Errorf = %+v", r.Error)
	}
}

func TestWithHintLeavesSharedErrorAlone(t *testing.T) {
	base := tools.Fail(tools.CodeNotFound, "gone")
	hinted := base.WithHint("search first").WithRetry()
	if base.Error.Hint != "" || base.Error.Retryable {
		t.Error("WithHint/WithRetry modified the original ToolError")
	}
	if hinted.Error.Hint != "search first" || !hinted.Error.Retryable {
		t.Errorf("hinted = %+v", hinted.Error)
	}
	if ok := tools.OK("fine", nil).WithHint("x").WithRetry(); ok.Error != nil || !ok.OK {
		t.Errorf("WithHint on a success = %+v", ok)
	}
}

func TestSpecSchemaDefaultsToNoArguments(t *testing.T) {
	if got := string(tools.Spec{}.Schema()); got != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("Schema() = %s", got)
	}
	s := tools.Spec{InputSchema: json.RawMessage(`{"type":"object"}`)}
	if got := string(s.Schema()); got != `{"type":"object"}` {
		t.Errorf("Schema() = %s", got)
	}
}

func TestSpecValidateAcceptsEveryEffect(t *testing.T) {
	for _, e := range []tools.Effect{"", tools.Read, tools.Mutate, tools.Destructive} {
		if err := (tools.Spec{Name: "n", Description: "d", Effect: e}).Validate(); err != nil {
			t.Errorf("effect %q: %v", e, err)
		}
	}
}
