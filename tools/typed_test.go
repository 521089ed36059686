package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/tools"
)

func noop[In any](context.Context, tools.Call, In) (tools.Result, error) {
	return tools.OK("ok", nil), nil
}

func TestNewInfersSchemaFromInputType(t *testing.T) {
	type in struct {
		City   string           `json:"city" jsonschema:"city name"`
		Days   int              `json:"days,omitempty"`
		Tags   []string         `json:"tags,omitzero"`
		When   time.Time        `json:"when"`
		Hidden string           `json:"-"`
		Opt    *float64         `json:"opt,omitempty"`
		Sub    struct{ X bool } `json:"sub"`
	}
	tool, err := tools.New(tools.Spec{Name: "f", Description: "d"}, noop[in])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"city":{"type":"string","description":"city name"},"days":{"type":"integer"},` +
		`"tags":{"type":["null","array"],"items":{"type":"string"}},"when":{"type":"string","format":"date-time"},"opt":{"type":["null","number"]},` +
		`"sub":{"type":"object","properties":{"X":{"type":"boolean"}},"required":["X"],"additionalProperties":false}},` +
		`"required":["city","when","sub"],"additionalProperties":false}`
	if got := string(tool.Spec().InputSchema); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
}

func TestNewEmptyStructTakesNoArguments(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{Name: "now", Description: "d"}, noop[struct{}]))
	if got, want := string(tool.Spec().InputSchema), `{"type":"object","properties":{},"additionalProperties":false}`; got != want {
		t.Errorf("schema = %s, want %s", got, want)
	}
}

func TestNewPointerInputUsesElementSchema(t *testing.T) {
	var got *forecastArgs
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d"},
		func(_ context.Context, _ tools.Call, in *forecastArgs) (tools.Result, error) {
			got = in
			return tools.OK("ok", nil), nil
		}))
	want, _ := tools.SchemaFor[forecastArgs]()
	if string(tool.Spec().InputSchema) != string(want) {
		t.Errorf("schema = %s, want %s", tool.Spec().InputSchema, want)
	}
	if r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"city":"Rome"}`)}); err != nil || !r.OK {
		t.Fatalf("Invoke = %+v, %v", r, err)
	}
	if got == nil || got.City != "Rome" {
		t.Errorf("handler got %+v", got)
	}
}

func TestNewMapInputAcceptsAnyObject(t *testing.T) {
	var got map[string]any
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d"},
		func(_ context.Context, _ tools.Call, in map[string]any) (tools.Result, error) {
			got = in
			return tools.OK("ok", nil), nil
		}))
	if r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"a":1}`)}); err != nil || !r.OK {
		t.Fatalf("Invoke = %+v, %v", r, err)
	}
	if got["a"] != 1.0 {
		t.Errorf("handler got %v", got)
	}
}

func TestNewDefaultsEffectToRead(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d"}, noop[struct{}]))
	if e := tool.Spec().Effect; e != tools.Read {
		t.Errorf("Effect = %q, want read", e)
	}
	tool = tools.Must(tools.New(tools.Spec{Name: "g", Description: "d", Effect: tools.Destructive}, noop[struct{}]))
	if !tool.Spec().NeedsApproval() {
		t.Error("a Destructive tool does not need approval")
	}
}

func TestNewUsesGivenSchema(t *testing.T) {
	tool := forecastTool()
	var want, got any
	_ = json.Unmarshal([]byte(forecastSchema), &want)
	_ = json.Unmarshal(tool.Spec().InputSchema, &got)
	if !jsonEqual(got, want) {
		t.Errorf("schema = %s", tool.Spec().InputSchema)
	}
}

func TestNewCopiesSpec(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	pages := []string{"home"}
	tool := tools.Must(tools.New(tools.Spec{Name: "f", Description: "d", InputSchema: schema, Pages: pages}, noop[map[string]any]))
	schema[1], pages[0] = ' ', "other"
	if s := tool.Spec(); string(s.InputSchema) != `{"type":"object"}` || s.Pages[0] != "home" {
		t.Errorf("the tool shares the caller's slices: %s %v", s.InputSchema, s.Pages)
	}
}

func TestNewRejectsInvalidSpec(t *testing.T) {
	valid := tools.Spec{Name: "ok_name-1", Description: "d"}
	with := func(f func(*tools.Spec)) tools.Spec { s := valid; f(&s); return s }
	tests := []struct {
		name string
		new  func() (tools.BaseTool, error)
	}{
		{"empty name", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.Name = "" }), noop[struct{}])
		}},
		{"name with space", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.Name = "get time" }), noop[struct{}])
		}},
		{"name too long", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.Name = string(make([]byte, 65)) }), noop[struct{}])
		}},
		{"empty description", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.Description = " " }), noop[struct{}])
		}},
		{"unknown effect", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.Effect = "write" }), noop[struct{}])
		}},
		{"array schema", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.InputSchema = json.RawMessage(`{"type":"array"}`) }), noop[[]int])
		}},
		{"schema not JSON", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) { s.InputSchema = json.RawMessage(`{`) }), noop[struct{}])
		}},
		{"schema does not compile", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) {
				s.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)
			}), noop[struct{}])
		}},
		{"external ref", func() (tools.BaseTool, error) {
			return tools.New(with(func(s *tools.Spec) {
				s.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)
			}), noop[struct{}])
		}},
		{"non-object input type", func() (tools.BaseTool, error) { return tools.New(valid, noop[int]) }},
		{"interface input type", func() (tools.BaseTool, error) { return tools.New(valid, noop[any]) }},
		{"unsupported input type", func() (tools.BaseTool, error) { return tools.New(valid, noop[struct{ C chan int }]) }},
		{"nil handler", func() (tools.BaseTool, error) { return tools.New[struct{}](valid, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.new()
			if !errors.Is(err, tools.ErrInvalidSpec) || tool != nil {
				t.Errorf("New = %v, %v; want ErrInvalidSpec", tool, err)
			}
		})
	}
}

func TestMustPanicsOnError(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, tools.ErrInvalidSpec) {
			t.Errorf("Must panicked with %v, want the error", err)
		}
	}()
	tools.Must(tools.New(tools.Spec{}, noop[struct{}]))
	t.Error("Must did not panic")
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
