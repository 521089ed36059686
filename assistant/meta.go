package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Names of the Engine's own tools. A registry may not use them.
const (
	SearchToolsName = "search_tools"
	AskUserName     = "ask_user"
)

const searchToolsSchema = `{
  "type": "object",
  "properties": {
    "categories": {"type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}}
  },
  "required": ["categories"],
  "additionalProperties": false
}`

// The meta tools are real tools so their arguments are validated like any
// other; the turn handles their calls itself, so Execute never runs.
var (
	askUserTool = tools.Must(tools.New(tools.Spec{
		Name: AskUserName,
		Description: "Ask the user a few questions with a form, when you need details from them to continue. " +
			"The form ends your turn; the answers arrive as the user's next message.",
		InputSchema: json.RawMessage(askUserSchema),
	}, func(context.Context, tools.Call, Form) (tools.Result, error) {
		return tools.Result{}, errors.New("ask_user is handled by the turn")
	}))
	searchToolsTool = tools.Must(tools.New(tools.Spec{
		Name:        SearchToolsName,
		Description: "Load the tools of one or more categories from the catalog, so you can call them from your next step on.",
		InputSchema: json.RawMessage(searchToolsSchema),
	}, func(context.Context, tools.Call, struct {
		Categories []string `json:"categories"`
	}) (tools.Result, error) {
		return tools.Result{}, errors.New("search_tools is handled by the turn")
	}))
)

func isMetaTool(name string) bool { return name == SearchToolsName || name == AskUserName }

// metaTools are the Engine's own tools this turn offers.
func (t *turn) metaTools() []offeredTool {
	var out []offeredTool
	if t.tools.lazy {
		out = append(out, offeredTool{spec: searchToolsTool.Spec(), tool: searchToolsTool})
	}
	if !t.e.cfg.DisableAskUser && (len(t.tools.offered) > 0 || t.tools.lazy) {
		out = append(out, offeredTool{spec: askUserTool.Spec(), tool: askUserTool})
	}
	return out
}

// searchTools loads the offered tools of the requested categories and
// returns their full specs for the model.
func (t *turn) searchTools(args json.RawMessage) tools.Result {
	if r, _ := tools.Validate(searchToolsTool, args); !r.OK {
		return r
	}
	var in struct {
		Categories []string `json:"categories"`
	}
	_ = json.Unmarshal(args, &in) // the schema accepted it
	type toolInfo struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		Parameters   json.RawMessage `json:"parameters,omitempty"`
		Effect       string          `json:"effect"`
		Instructions string          `json:"instructions,omitempty"`
	}
	var loaded []toolInfo
	var names, unknown []string
	for _, c := range in.Categories {
		found := false
		for _, o := range t.tools.offered {
			if category(o.spec) != c {
				continue
			}
			found = true
			if t.tools.loaded[o.spec.Name] {
				continue
			}
			t.tools.loaded[o.spec.Name] = true
			names = append(names, o.spec.Name)
			loaded = append(loaded, toolInfo{Name: o.spec.Name, Description: o.spec.Description,
				Parameters: o.spec.InputSchema, Effect: effectNote(o.spec), Instructions: o.spec.Instructions})
		}
		if !found {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == len(in.Categories) {
		r := tools.Fail(tools.CodeInvalidArgs, "unknown categories: "+strings.Join(unknown, ", "))
		r.Error.Retryable = true
		r.Error.Hint = "Use categories from the catalog: " + strings.Join(t.categories(), ", ") + "."
		return r
	}
	summary := "Loaded " + strconv.Itoa(len(names)) + " tools: " + strings.Join(names, ", ") + ". You can call them now."
	if len(names) == 0 {
		summary = "Those tools are already loaded."
	}
	if len(unknown) > 0 {
		summary += " Unknown categories: " + strings.Join(unknown, ", ") + "."
	}
	return tools.OK(summary, map[string]any{"tools": loaded})
}

// defaultCategory groups tools that name none.
const defaultCategory = "general"

func category(s tools.Spec) string {
	if s.Category == "" {
		return defaultCategory
	}
	return s.Category
}

// categories lists the categories of the offered tools, in first-seen order.
func (t *turn) categories() []string {
	var cs []string
	for _, o := range t.tools.offered {
		if c := category(o.spec); !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// effectNote says how a call of the tool is carried out, for the model.
func effectNote(s tools.Spec) string {
	switch {
	case s.ClientSide:
		return "runs in the user's application; its result arrives with the user's next message"
	case s.NeedsApproval():
		return "changes data: the user must approve each call on a card, which ends your turn"
	}
	return "read-only: runs at once"
}

// rehydrate rebuilds the loaded set of a lazy turn from the replayed
// history: every tool called before, and every category loaded before,
// that the user may still use.
func (t *turn) rehydrate() {
	for _, s := range t.prompt.past {
		for _, m := range s.msgs {
			for _, c := range m.ToolCalls {
				if c.Name != SearchToolsName {
					if slices.ContainsFunc(t.tools.offered, func(o offeredTool) bool { return o.spec.Name == c.Name }) {
						t.tools.loaded[c.Name] = true
					}
					continue
				}
				var in struct {
					Categories []string `json:"categories"`
				}
				if json.Unmarshal(c.Args, &in) != nil {
					continue
				}
				for _, o := range t.tools.offered {
					if slices.Contains(in.Categories, category(o.spec)) {
						t.tools.loaded[o.spec.Name] = true
					}
				}
			}
		}
	}
}

// setupTools decides what this turn offers: lazy loading when the user has
// more tools than LazyToolThreshold, with the loaded set rebuilt from the
// history, and the Engine's own tools.
func (t *turn) setupTools(prior []store.Message) {
	t.tools.lazy = t.e.cfg.LazyToolThreshold >= 0 && len(t.tools.offered) > t.e.cfg.LazyToolThreshold
	t.tools.loaded = make(map[string]bool)
	if t.tools.lazy {
		t.rehydrate()
	}
	t.tools.meta = t.metaTools()
}
