package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/parleyhq/parley/tools"
)

// notes is a BaseTool written by hand: it brings its own JSON Schema, which
// may say more than a Go type can (here, a length limit and an enum).
type notes struct {
	mu    sync.Mutex
	saved map[string][]string // user ID -> notes
}

func (n *notes) Spec() tools.Spec {
	return tools.Spec{
		Name:        "save_note",
		Description: "Save a short note for the current user.",
		Effect:      tools.Mutate, // the Engine asks a human before running it
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"text": {"type": "string", "minLength": 1, "maxLength": 200},
				"tag":  {"enum": ["work", "home"]}
			},
			"required": ["text"],
			"additionalProperties": false
		}`),
	}
}

// Execute may trust that call.Args matches the schema when it is run by
// tools.Invoke, which the Engine always uses.
func (n *notes) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var in struct {
		Text string `json:"text"`
		Tag  string `json:"tag"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return tools.Result{}, err // a bug: the schema and this struct disagree
	}
	if strings.Contains(strings.ToLower(in.Text), "password") {
		return tools.Fail(tools.CodeBlocked, "notes must not contain passwords"), nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.saved[call.User.ID] = append(n.saved[call.User.ID], in.Text)
	return tools.OK("note saved", map[string]int{"notes": len(n.saved[call.User.ID])}), nil
}

func Example_baseTool() {
	n := &notes{saved: map[string][]string{}}
	set, err := tools.NewSet(n) // checks the spec and compiles the schema once
	if err != nil {
		panic(err)
	}
	tool, _ := set.Lookup("save_note")
	for _, args := range []string{
		`{"text":"buy milk","tag":"home"}`,
		`{"text":"","tag":"garden"}`,
		`{"text":"my password is hunter2"}`,
	} {
		res, _ := tools.Invoke(context.Background(), tool, tools.Call{ID: "call_1", Args: json.RawMessage(args), Approved: true})
		fmt.Println(string(tools.MarshalForModel(res)))
	}
	// Output:
	// {"ok":true,"summary":"note saved","data":{"notes":1}}
	// {"ok":false,"error":{"code":"INVALID_ARGS","message":"\"tag\": must be one of \"work\", \"home\"; \"text\": length must be >= 1","retryable":true,"hint":"fix the arguments and call the tool again"}}
	// {"ok":false,"error":{"code":"BLOCKED","message":"notes must not contain passwords","blocked":true}}
}
