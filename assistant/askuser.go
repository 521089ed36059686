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
	"github.com/parleyhq/parley/tools"
)

// ask_user: the Engine's tool with which the model shows the user a form
// and ends the turn; the answers come back as the next user message.

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

// formBlock is the block an accepted ask_user call shows.
func formBlock(callID string, f Form) blocks.Block {
	data, _ := json.Marshal(f)
	return blocks.Block{Kind: blocks.Form, ID: callID, Data: data}
}

// askUserTool is a real tool so its arguments are validated like any
// other; the turn handles its calls itself, so Execute never runs.
var askUserTool = tools.Must(tools.New(tools.Spec{
	Name: AskUserName,
	Description: "Ask the user a few questions with a form, when you need details from them to continue. " +
		"The form ends your turn; the answers arrive as the user's next message.",
	InputSchema: json.RawMessage(askUserSchema),
}, func(context.Context, tools.Call, Form) (tools.Result, error) {
	return tools.Result{}, errors.New("ask_user is handled by the turn")
}))
