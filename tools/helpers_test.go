package tools_test

import (
	"context"
	"encoding/json"

	"github.com/parleyhq/parley/tools"
)

// funcTool is a hand-written BaseTool.
type funcTool struct {
	spec tools.Spec
	fn   func(ctx context.Context, call tools.Call) (tools.Result, error)
}

func (f funcTool) Spec() tools.Spec { return f.spec }
func (f funcTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	return f.fn(ctx, call)
}

func plain(name string, schema string, fn func(ctx context.Context, call tools.Call) (tools.Result, error)) funcTool {
	if fn == nil {
		fn = func(context.Context, tools.Call) (tools.Result, error) { return tools.OK("done", nil), nil }
	}
	s := tools.Spec{Name: name, Description: "A test tool."}
	if schema != "" {
		s.InputSchema = json.RawMessage(schema)
	}
	return funcTool{spec: s, fn: fn}
}

type forecastArgs struct {
	City string `json:"city" jsonschema:"city name"`
	Days int    `json:"days,omitempty" jsonschema:"number of days"`
}

const forecastSchema = `{
	"type": "object",
	"properties": {
		"city": {"type": "string", "minLength": 1},
		"days": {"type": "integer", "minimum": 1, "maximum": 14},
		"unit": {"enum": ["c", "f"]},
		"stops": {"type": "array", "items": {"type": "object", "properties": {"at": {"type": "string"}}, "required": ["at"]}}
	},
	"required": ["city"],
	"additionalProperties": false
}`

type forecastIn struct {
	City  string `json:"city"`
	Days  int    `json:"days"`
	Unit  string `json:"unit"`
	Stops []struct {
		At string `json:"at"`
	} `json:"stops"`
}

// forecastTool is a typed tool with an explicit schema; it echoes its input.
func forecastTool() tools.BaseTool {
	return tools.Must(tools.New(tools.Spec{
		Name:        "get_forecast",
		Description: "Weather forecast for a city.",
		InputSchema: json.RawMessage(forecastSchema),
	}, func(_ context.Context, _ tools.Call, in forecastIn) (tools.Result, error) {
		return tools.OK("forecast for "+in.City, in), nil
	}))
}

func message(r tools.Result) string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Message
}
