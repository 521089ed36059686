package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/tools"
)

type renameIn struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

func renameTool(t *testing.T, ran *int) tools.BaseTool {
	t.Helper()
	return tools.Must(tools.New(tools.Spec{Name: "rename", Description: "d", Effect: tools.Mutate},
		func(context.Context, tools.Call, renameIn) (tools.Result, error) {
			*ran++
			return tools.OK("renamed", nil), nil
		}))
}

func TestProposeRunsTheDryRunOnDecodedArgs(t *testing.T) {
	ran := 0
	var got renameIn
	tool := tools.Must(tools.WithPropose(renameTool(t, &ran), func(_ context.Context, c tools.Call, in renameIn) (tools.Result, error) {
		got = in
		return tools.OK("Rename 7 to "+in.Title, nil), nil
	}))
	r, err := tools.Propose(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":7,"title":"A"}`)})
	if err != nil || !r.OK || r.Summary != "Rename 7 to A" {
		t.Fatalf("Propose = %+v, %v", r, err)
	}
	if got != (renameIn{ID: 7, Title: "A"}) || ran != 0 {
		t.Errorf("dry run got %+v; the tool ran %d times, want 0", got, ran)
	}
	// The proposing tool still executes like the original.
	if r, err := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":7,"title":"A"}`)}); err != nil || r.Summary != "renamed" || ran != 1 {
		t.Errorf("Invoke = %+v, %v, runs %d", r, err, ran)
	}
	if tool.Spec().Effect != tools.Mutate {
		t.Error("WithPropose lost the spec")
	}
}

func TestProposeValidatesBeforeTheDryRun(t *testing.T) {
	ran, dry := 0, 0
	tool := tools.Must(tools.WithPropose(renameTool(t, &ran), func(context.Context, tools.Call, renameIn) (tools.Result, error) {
		dry++
		return tools.OK("", nil), nil
	}))
	r, err := tools.Propose(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":"seven"}`)})
	if !errors.Is(err, tools.ErrInvalidArgs) || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || dry != 0 {
		t.Fatalf("Propose = %+v, %v, dry runs %d; want INVALID_ARGS and no dry run", r, err, dry)
	}
	// Called directly, the proposer validates too.
	r, err = tool.(tools.Proposer).Propose(t.Context(), tools.Call{Args: json.RawMessage(`{"id":1.5}`)})
	if err != nil || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || dry != 0 {
		t.Errorf("direct Propose = %+v, %v", r, err)
	}
}

func TestProposeWithoutProposerOnlyValidates(t *testing.T) {
	ran := 0
	tool := renameTool(t, &ran)
	r, err := tools.Propose(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"id":1,"title":"x"}`)})
	if err != nil || !r.OK || r.Summary != "" || ran != 0 {
		t.Errorf("Propose = %+v, %v, runs %d; want OK with no summary and no run", r, err, ran)
	}
}

func TestProposeDryRunFailuresFollowInvokesRules(t *testing.T) {
	ran := 0
	for name, tc := range map[string]struct {
		fn   func(context.Context, tools.Call, renameIn) (tools.Result, error)
		code tools.ErrorCode
	}{
		"reported": {func(context.Context, tools.Call, renameIn) (tools.Result, error) {
			return tools.Fail(tools.CodeNotFound, "no note 7"), nil
		}, tools.CodeNotFound},
		"error": {func(context.Context, tools.Call, renameIn) (tools.Result, error) {
			return tools.Result{}, errors.New("db down: secret")
		}, tools.CodeInternal},
		"panic":  {func(context.Context, tools.Call, renameIn) (tools.Result, error) { panic("secret") }, tools.CodeInternal},
		"not ok": {func(context.Context, tools.Call, renameIn) (tools.Result, error) { return tools.Result{}, nil }, tools.CodeInternal},
		"cancelled": {func(ctx context.Context, _ tools.Call, _ renameIn) (tools.Result, error) {
			<-ctx.Done()
			return tools.Result{}, ctx.Err()
		}, tools.CodeTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			tool := tools.Must(tools.WithPropose(renameTool(t, &ran), tc.fn))
			ctx := t.Context()
			if name == "cancelled" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 0)
				defer cancel()
			}
			r, _ := tools.Propose(ctx, tool, tools.Call{Args: json.RawMessage(`{"id":7,"title":"x"}`)})
			if r.OK || r.Error == nil || r.Error.Code != tc.code || strings.Contains(r.Error.Message, "secret") {
				t.Errorf("result %+v, want %s without the cause", r.Error, tc.code)
			}
		})
	}
	if ran != 0 {
		t.Errorf("a failed dry run executed the tool %d times", ran)
	}
}

func TestWithProposeNeedsATypedToolOfTheSameInput(t *testing.T) {
	ran := 0
	if _, err := tools.WithPropose(renameTool(t, &ran), func(context.Context, tools.Call, struct{ X int }) (tools.Result, error) {
		return tools.OK("", nil), nil
	}); !errors.Is(err, tools.ErrInvalidSpec) {
		t.Errorf("mismatched input: %v", err)
	}
	if _, err := tools.WithPropose[renameIn](renameTool(t, &ran), nil); !errors.Is(err, tools.ErrInvalidSpec) {
		t.Errorf("nil fn: %v", err)
	}
}

func TestValidateChecksWithoutRunning(t *testing.T) {
	ran := 0
	tool := renameTool(t, &ran)
	if r, err := tools.Validate(tool, json.RawMessage(`{"id":1,"title":"x"}`)); err != nil || !r.OK {
		t.Errorf("valid: %+v, %v", r, err)
	}
	r, err := tools.Validate(tool, json.RawMessage(`{"title":"x"}`))
	if !errors.Is(err, tools.ErrInvalidArgs) || r.Error == nil || !strings.Contains(r.Error.Message, `"id"`) {
		t.Errorf("missing id: %+v, %v; want INVALID_ARGS naming id", r.Error, err)
	}
	if ran != 0 {
		t.Error("Validate ran the tool")
	}
}

func TestNewClientValidatesButNeverRunsOnTheServer(t *testing.T) {
	tool := tools.Must(tools.NewClient[struct {
		Selector string `json:"selector"`
	}](tools.Spec{Name: "read_page", Description: "Reads the page."}))
	if !tool.Spec().ClientSide {
		t.Fatal("not client-side")
	}
	if r, err := tools.Validate(tool, json.RawMessage(`{}`)); !errors.Is(err, tools.ErrInvalidArgs) || r.OK {
		t.Errorf("missing selector: %+v, %v", r, err)
	}
	if r, _ := tools.Invoke(t.Context(), tool, tools.Call{Args: json.RawMessage(`{"selector":"h1"}`)}); r.OK || r.Error.Code != tools.CodeInternal {
		t.Errorf("server execution: %+v, want INTERNAL", r)
	}
}
