package tools_test

import (
	"context"
	"encoding/json"
	"testing"

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
