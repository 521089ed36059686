package tools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/tools"
)

func ExampleNew() {
	type args struct {
		City string `json:"city" jsonschema:"city name, e.g. Lisbon"`
		Days int    `json:"days,omitempty" jsonschema:"number of days, 1 to 14"`
	}
	forecast, err := tools.New(tools.Spec{
		Name:        "get_forecast",
		Description: "Weather forecast for a city.",
	}, func(ctx context.Context, call tools.Call, in args) (tools.Result, error) {
		if in.Days == 0 {
			in.Days = 3
		}
		return tools.OK(fmt.Sprintf("%d-day forecast for %s", in.Days, in.City), []string{"sun", "sun", "rain"}[:min(in.Days, 3)]), nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(forecast.Spec().InputSchema))

	for _, a := range []string{
		`{"city":"Lisbon"}`,
		`{"days":"two","town":"Lisbon"}`,
	} {
		res, _ := tools.Invoke(context.Background(), forecast, tools.Call{ID: "call_1", Args: json.RawMessage(a)})
		fmt.Println(string(tools.MarshalForModel(res)))
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"city name, e.g. Lisbon"},"days":{"type":"integer","description":"number of days, 1 to 14"}},"required":["city"],"additionalProperties":false}
	// {"ok":true,"summary":"3-day forecast for Lisbon","data":["sun","sun","rain"]}
	// {"ok":false,"error":{"code":"INVALID_ARGS","message":"\"city\": missing required property; \"days\": must be integer, got string; \"town\": unknown property","retryable":true,"hint":"valid properties: city, days"}}
}

func ExampleNewSet() {
	now := tools.Must(tools.New(tools.Spec{
		Name:        "get_time",
		Description: "Current time in UTC.",
	}, func(ctx context.Context, call tools.Call, _ struct{}) (tools.Result, error) {
		return tools.OK("12:00 UTC", nil), nil
	}))
	type stopArgs struct {
		VM string `json:"vm" jsonschema:"the VM name"`
	}
	stop := tools.Must(tools.New(tools.Spec{
		Name:        "stop_vm",
		Description: "Stop a virtual machine.",
		Effect:      tools.Mutate,
	}, func(ctx context.Context, call tools.Call, in stopArgs) (tools.Result, error) {
		return tools.OK("stopped "+in.VM, nil), nil
	}))

	set, err := tools.NewSet(now, stop)
	if err != nil {
		panic(err)
	}
	for _, t := range set.All() {
		s := t.Spec()
		fmt.Printf("%s (%s, needs approval: %v)\n", s.Name, s.Effect, s.NeedsApproval())
	}
	_, err = tools.NewSet(now, now)
	fmt.Println(err)
	// Output:
	// get_time (read, needs approval: false)
	// stop_vm (mutate, needs approval: true)
	// tools: duplicate tool name: "get_time"
}

func ExampleErrorf() {
	res := tools.Errorf(tools.CodeNotFound, "no VM named %q", "web-1").WithHint("call list_vms to see the names")
	fmt.Println(string(tools.MarshalForModel(res)))
	// Output:
	// {"ok":false,"error":{"code":"NOT_FOUND","message":"no VM named \"web-1\"","hint":"call list_vms to see the names"}}
}

func ExampleIDsAt() {
	// A tool declares where its arguments hold ids: Spec.IDArgs, with names
	// or JSON Pointers. IDsAt reads them from a call's arguments.
	spec := tools.Spec{Name: "move_notes", Description: "Moves notes to a folder.", Effect: tools.Mutate,
		IDArgs: []string{"note_ids", "/to/folder_id"}}
	args := json.RawMessage(`{"note_ids":["n-1","n-2"],"to":{"folder_id":7}}`)
	for _, arg := range spec.IDArgs {
		ids, err := tools.IDsAt(args, arg)
		fmt.Println(arg, ids, err)
	}
	// Output:
	// note_ids [n-1 n-2] <nil>
	// /to/folder_id [7] <nil>
}
