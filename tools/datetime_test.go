package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/toolstest"
)

func TestDateTimeArgumentsNeedAnExplicitOffset(t *testing.T) {
	tool := tools.Must(tools.New(tools.Spec{
		Name: "schedule", Description: "Schedules a job.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"at":{"type":"string","format":"date-time"}},"required":["at"]}`),
	}, func(context.Context, tools.Call, struct {
		At string `json:"at"`
	}) (tools.Result, error) {
		return tools.OK("scheduled", nil), nil
	}))
	for _, at := range []string{"2026-11-21T10:00:00Z", "2026-11-21T10:00:00+01:00", "2026-11-21T10:00:00.5-05:30"} {
		toolstest.RequireOK(t, toolstest.Run(t, tool, `{"at":"`+at+`"}`))
	}
	for _, at := range []string{"2026-11-21T10:00:00", "2026-11-21 10:00", "tomorrow at ten", "2026-11-21"} {
		toolstest.RequireError(t, toolstest.Run(t, tool, `{"at":"`+at+`"}`), tools.CodeInvalidArgs)
	}
}

// A time.Time field is declared a date-time, so the model is told the
// format, and a date without an offset is refused with how to write it.
func TestTimeFieldsAreDateTimesAndTheErrorSaysHowToFixThem(t *testing.T) {
	var got time.Time
	tool := tools.Must(tools.New(tools.Spec{Name: "remind", Description: "Sets a reminder."},
		func(_ context.Context, _ tools.Call, in struct {
			At    time.Time  `json:"at"`
			Until *time.Time `json:"until,omitempty"`
		}) (tools.Result, error) {
			got = in.At
			return tools.OK("set", nil), nil
		}))
	var schema struct {
		Properties map[string]struct {
			Format string `json:"format"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["at"].Format != "date-time" || schema.Properties["until"].Format != "date-time" {
		t.Errorf("schema %s does not declare the time fields date-time", tool.Spec().InputSchema)
	}
	toolstest.RequireOK(t, toolstest.Run(t, tool, `{"at":"2026-11-27T14:30:00+01:00"}`))
	if want := time.Date(2026, 11, 27, 13, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("the tool got %v, want %v", got, want)
	}
	r := toolstest.Run(t, tool, `{"at":"2026-11-27T14:30:00"}`)
	toolstest.RequireError(t, r, tools.CodeInvalidArgs)
	if msg := r.Error.Message; !strings.Contains(msg, `"at": must be a valid date-time`) || !strings.Contains(msg, "explicit offset") ||
		!strings.Contains(msg, "2026-11-27T14:30:00Z") {
		t.Errorf("error %q does not say how to write the date", msg)
	}
}
