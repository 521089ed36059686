package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Names of the Engine's own tools. A registry may not use them.
const (
	SearchToolsName = "search_tools"
	AskUserName     = "ask_user"
)

// Form is the payload of a form block: what ask_user asks the user.
type Form struct {
	Title     string     `json:"title,omitempty"`
	Questions []Question `json:"questions"`
}

// Question is one field of a Form.
type Question struct {
	ID       string   `json:"id"`    // key of the answer in FormAnswer.Values
	Label    string   `json:"label"` // the question, shown to the user
	Type     string   `json:"type"`  // text, number, boolean, date, select, multiselect
	Options  []string `json:"options,omitempty"`
	Required bool     `json:"required,omitempty"`
}

// Question types.
const (
	QuestionText        = "text"
	QuestionNumber      = "number"
	QuestionBoolean     = "boolean"
	QuestionDate        = "date" // an answer is YYYY-MM-DD
	QuestionSelect      = "select"
	QuestionMultiselect = "multiselect"
)

const askUserSchema = `{
  "type": "object",
  "properties": {
    "title": {"type": "string", "maxLength": 200, "description": "A short heading for the form."},
    "questions": {
      "type": "array", "minItems": 1, "maxItems": 10,
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,39}$", "description": "Answer key, snake_case."},
          "label": {"type": "string", "minLength": 1, "maxLength": 300},
          "type": {"enum": ["text", "number", "boolean", "date", "select", "multiselect"]},
          "options": {"type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 100}, "description": "Choices; required for select and multiselect."},
          "required": {"type": "boolean"}
        },
        "required": ["id", "label", "type"],
        "additionalProperties": false
      }
    }
  },
  "required": ["questions"],
  "additionalProperties": false
}`

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

// form validates an ask_user call beyond its schema and returns the form.
func askUserForm(args json.RawMessage) (Form, *tools.Result) {
	if r, _ := tools.Validate(askUserTool, args); !r.OK {
		return Form{}, &r
	}
	var f Form
	if err := json.Unmarshal(args, &f); err != nil {
		r := tools.Fail(tools.CodeInvalidArgs, "the form could not be read: "+err.Error())
		r.Error.Retryable = true
		return Form{}, &r
	}
	seen := map[string]bool{}
	var problems []string
	for _, q := range f.Questions {
		if seen[q.ID] {
			problems = append(problems, fmt.Sprintf("question id %q is used twice", q.ID))
		}
		seen[q.ID] = true
		choice := q.Type == QuestionSelect || q.Type == QuestionMultiselect
		switch {
		case choice && len(q.Options) == 0:
			problems = append(problems, fmt.Sprintf("question %q: a %s needs options", q.ID, q.Type))
		case !choice && len(q.Options) > 0:
			problems = append(problems, fmt.Sprintf("question %q: only select and multiselect take options", q.ID))
		}
		if dup := duplicate(q.Options); dup != "" {
			problems = append(problems, fmt.Sprintf("question %q: option %q is listed twice", q.ID, dup))
		}
	}
	if len(problems) > 0 {
		r := tools.Fail(tools.CodeInvalidArgs, strings.Join(problems, "; "))
		r.Error.Retryable = true
		return Form{}, &r
	}
	return f, nil
}

func duplicate(ss []string) string {
	seen := make(map[string]bool, len(ss))
	for _, s := range ss {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}

// maxAnswerBytes bounds one text answer.
const maxAnswerBytes = 4 << 10

// renderAnswers checks the answers against the form and writes them as the
// user's message: one line per question, labelled by the stored form, so
// nothing but the values comes from the client.
func renderAnswers(f Form, values map[string]json.RawMessage) (string, error) {
	for id := range values {
		if !slices.ContainsFunc(f.Questions, func(q Question) bool { return q.ID == id }) {
			return "", fmt.Errorf("the form has no question %q", truncate(id, 40))
		}
	}
	var b strings.Builder
	b.WriteString("My answers")
	if f.Title != "" {
		b.WriteString(" to “")
		b.WriteString(f.Title)
		b.WriteString("”")
	}
	b.WriteString(":")
	for _, q := range f.Questions {
		v, err := answerText(q, values[q.ID])
		if err != nil {
			return "", fmt.Errorf("%s: %w", q.Label, err)
		}
		b.WriteString("\n- ")
		b.WriteString(q.Label)
		b.WriteString(": ")
		b.WriteString(v)
	}
	return b.String(), nil
}

// answerText validates one answer and renders it.
func answerText(q Question, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if q.Required {
			return "", errors.New("an answer is required")
		}
		return "(no answer)", nil
	}
	switch q.Type {
	case QuestionText, QuestionDate, QuestionSelect:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errors.New("the answer must be text")
		}
		s = strings.TrimSpace(s)
		switch {
		case s == "" && q.Required:
			return "", errors.New("an answer is required")
		case s == "":
			return "(no answer)", nil
		case len(s) > maxAnswerBytes || !utf8.ValidString(s):
			return "", errors.New("the answer is too long")
		case q.Type == QuestionDate:
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return "", errors.New("the answer must be a date written YYYY-MM-DD")
			}
		case q.Type == QuestionSelect && !slices.Contains(q.Options, s):
			return "", errors.New("the answer is not one of the options")
		}
		return s, nil
	case QuestionNumber:
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", errors.New("the answer must be a number")
		}
		if _, err := strconv.ParseFloat(n.String(), 64); err != nil || len(n) > 64 {
			return "", errors.New("the answer must be a number")
		}
		return n.String(), nil
	case QuestionBoolean:
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", errors.New("the answer must be true or false")
		}
		if v {
			return "yes", nil
		}
		return "no", nil
	case QuestionMultiselect:
		var vs []string
		if err := json.Unmarshal(raw, &vs); err != nil {
			return "", errors.New("the answer must be a list of options")
		}
		for _, v := range vs {
			if !slices.Contains(q.Options, v) {
				return "", errors.New("an answer is not one of the options")
			}
		}
		if dup := duplicate(vs); dup != "" {
			return "", errors.New("an option is chosen twice")
		}
		if len(vs) == 0 {
			if q.Required {
				return "", errors.New("choose at least one option")
			}
			return "(none)", nil
		}
		return strings.Join(vs, ", "), nil
	}
	return "", fmt.Errorf("unknown question type %q", q.Type)
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
	for _, m := range flatten(t.prompt.past) {
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

// formBlock is the block an accepted ask_user call shows.
func formBlock(callID string, f Form) blocks.Block {
	data, _ := json.Marshal(f)
	return blocks.Block{Kind: blocks.Form, ID: callID, Data: data}
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
	// Call ids stay unique across the thread, including calls still waiting
	// on a card, a form or the client, which the replay does not hold yet.
	t.out.callIDs = make(map[string]bool)
	for _, m := range prior {
		for _, b := range m.Blocks {
			if b.Kind == blocks.ToolCall || b.Kind == blocks.Form {
				t.out.callIDs[b.ID] = true
			}
		}
	}
	for _, s := range t.prompt.past {
		for _, m := range s.msgs {
			for _, c := range m.ToolCalls {
				t.out.callIDs[c.ID] = true
			}
		}
	}
}
