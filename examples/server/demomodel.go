package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/guard/modeljudge"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/tools"
)

// demoModel is a deterministic stand-in for an LLM so the example runs with
// no configuration. It picks a tool (or a form, with ask_user) from
// keywords in the last user message, and once tool results are in,
// narrates them: results of its own calls, of a card the user applied or
// declined, and of a tool the page ran. It answers the Engine's summary
// and title calls and remembers what the user told it (demomemory.go). It
// streams word by word.
type demoModel struct {
	delay time.Duration // between streamed words
}

var (
	addNoteRe    = regexp.MustCompile(`(?i)\b(?:add|remember|note)\b(?: a)?(?: note)?[: ]+(.+)`)
	deleteNoteRe = regexp.MustCompile(`(?i)\bdelete\b.*?\b(\d+)\b`)
	// newNoteRe is a request for a note that does not say what it is.
	newNoteRe = regexp.MustCompile(`(?i)^\W*(?:please\s+)?(?:(?:add|write|make|create|start)\s+)?(?:a\s+)?(?:new\s+)?note(?:\s+please)?\W*$`)
	formRe    = regexp.MustCompile(`(?i)\bform\b`)
	// addFirstRe is an explicit "add a note: …" or "remember …": its text
	// is the note, whatever words it contains ("delete", "stats", …).
	addFirstRe = regexp.MustCompile(`(?i)^\W*(?:please\s+)?(?:add(?:\s+a)?(?:\s+new)?\s+note|remember)\b[:\s]+(\S.*)$`)
)

// The forms the demo model asks with ask_user. The answers come back as
// the user's next message, "My answers to “<title>”:" and one
// "- <label>: <value>" line per question, which is how the model tells
// them apart.
var (
	newNoteForm = assistant.Form{Title: "New note", Questions: []assistant.Question{
		{ID: "text", Label: "What should the note say?", Type: assistant.QuestionText, Required: true},
		{ID: "tag", Label: "Tag", Type: assistant.QuestionSelect, Options: []string{"personal", "work", "shopping"}},
	}}
	demoForm = assistant.Form{Title: "Form demo", Questions: []assistant.Question{
		{ID: "name", Label: "Your name", Type: assistant.QuestionText, Required: true},
		{ID: "per_week", Label: "Notes you write a week", Type: assistant.QuestionNumber},
		{ID: "reminders", Label: "Send me reminders", Type: assistant.QuestionBoolean},
		{ID: "review_on", Label: "Review my notes on", Type: assistant.QuestionDate},
		{ID: "colour", Label: "Colour for new notes", Type: assistant.QuestionSelect, Options: []string{"yellow", "green", "blue"}, Required: true},
		{ID: "days", Label: "Days I take notes", Type: assistant.QuestionMultiselect, Options: []string{"Mon", "Tue", "Wed", "Thu", "Fri"}, Required: true},
	}}
)

// answersTo reports whether msg answers form f.
func answersTo(msg string, f assistant.Form) bool {
	return strings.HasPrefix(msg, "My answers to “"+f.Title+"”:")
}

func (m demoModel) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		in, out := int64(len(req.System)/4), int64(0)
		for _, msg := range req.Messages {
			in += int64(len(msg.Content) / 4)
		}
		emitText := func(s string) bool {
			for w := range strings.SplitAfterSeq(s, " ") {
				if m.delay > 0 {
					select {
					case <-ctx.Done():
						yield(providers.Event{}, &providers.Error{Category: providers.CategoryCanceled, Err: ctx.Err()})
						return false
					case <-time.After(m.delay):
					}
				}
				out++
				if !yield(providers.Event{Kind: providers.TextDelta, Text: w}, nil) {
					return false
				}
			}
			return true
		}
		finish := func(r providers.FinishReason) {
			if yield(providers.Event{Kind: providers.UsageEvent, Usage: providers.Usage{InputTokens: in, OutputTokens: out}}, nil) {
				yield(providers.Event{Kind: providers.FinishEvent, Finish: r}, nil)
			}
		}

		// The Engine's housekeeping calls: a running summary, a title.
		switch {
		case req.System == assistant.SummaryInstructions && len(req.Messages) == 1:
			if emitText(demoSummary(req.Messages[0].Content, req.MaxTokens)) {
				finish(providers.FinishStop)
			}
			return
		case req.System == assistant.TitleInstructions && len(req.Messages) == 1:
			if emitText(demoTitle(req.Messages[0].Content)) {
				finish(providers.FinishStop)
			}
			return
		case req.System == modeljudge.Instructions && len(req.Messages) == 1:
			if emitText(demoVerdict(req.Messages[0].Content)) {
				finish(providers.FinishStop)
			}
			return
		}

		last := req.Messages[len(req.Messages)-1]
		if last.Role == providers.Tool {
			// Tool results: from this turn's calls, a decision on a card, or
			// a client-side tool the page ran.
			if emitText(narrate(req.Messages)) {
				finish(providers.FinishStop)
			}
			return
		}
		// Real models give every call a fresh id; so does the demo, so two
		// cards waiting in one thread never share one.
		id := fmt.Sprintf("demo_%d", len(req.Messages))
		if topic, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(last.Content)), "think about "); ok {
			// Visible reasoning, as reasoning models stream it before the answer.
			for _, r := range []string{"The user asks me to think about " + topic + ". ", "I only know a few phrases, so I will say so."} {
				if !yield(providers.Event{Kind: providers.ReasoningDelta, Text: r}, nil) {
					return
				}
			}
			if emitText("I thought about " + topic + ", but I am only the demo model.") {
				finish(providers.FinishStop)
			}
			return
		}
		if withheld(last.Content) {
			if emitText("Sorry, I can't work with that message. Please send it again without the part the notice above names.") {
				finish(providers.FinishStop)
			}
			return
		}
		if reply, ok := recall(last.Content, req); ok {
			if emitText(reply) {
				finish(providers.FinishStop)
			}
			return
		}
		if call, ok := pickTool(last.Content, req.Tools, id); ok {
			out += 10
			if yield(providers.Event{Kind: providers.ToolCallEvent, ToolCall: call}, nil) {
				finish(providers.FinishToolCalls)
			}
			return
		}
		reply := smallTalk(last.Content, req.Model, req.Tools)
		if f, ok := factOf(last.Content); ok {
			reply = acknowledge(f)
		} else if m := askMyRe.FindStringSubmatch(last.Content); m != nil {
			reply = fmt.Sprintf("I don't know your %s: you have not told me in this conversation. Tell me with “my %s is …”.\n", m[1], m[1])
		}
		if answersTo(last.Content, demoForm) {
			_, answers, _ := strings.Cut(last.Content, "\n")
			reply = "Thanks! This is what the form sent:\n\n" + answers + "\n"
		}
		if emitText(reply) {
			finish(providers.FinishStop)
		}
	}
}

// withheld reports whether msg is the Engine's stand-in for a message its
// guard blocked. That stand-in is an instruction to the model; a real
// model follows it, and the demo, which would otherwise echo it back as
// "You said: …" and read as a leaked prompt, answers in its own words.
func withheld(msg string) bool {
	return strings.HasPrefix(msg, "The user's last message was withheld by a security filter")
}

func pickTool(msg string, offered []providers.ToolDef, id string) (providers.ToolCall, bool) {
	has := func(name string) bool {
		return slices.ContainsFunc(offered, func(d providers.ToolDef) bool { return d.Name == name })
	}
	lower := strings.ToLower(msg)
	call := func(name string, args any) (providers.ToolCall, bool) {
		raw, _ := json.Marshal(args)
		return providers.ToolCall{ID: id + "_" + name, Name: name, Args: raw}, true
	}
	switch {
	case answersTo(msg, newNoteForm) && has("add_note"):
		a, ok := noteFromAnswers(msg)
		if !ok {
			return providers.ToolCall{}, false
		}
		return call("add_note", a)
	case strings.HasPrefix(msg, "My answers"):
		return providers.ToolCall{}, false // answers to a form with nothing to call
	case addFirstRe.MatchString(msg) && has("add_note"):
		return call("add_note", addNoteArgs{Text: strings.TrimSpace(addFirstRe.FindStringSubmatch(msg)[1])})
	case strings.Contains(lower, "stats"):
		// Called even when not offered: the demo shows the Engine refusing it.
		return call("admin_stats", struct{}{})
	case strings.Contains(lower, "browser") && has("browser_time"):
		return call("browser_time", struct{}{})
	case deleteNoteRe.MatchString(msg) && has("delete_note"):
		return call("delete_note", map[string]string{"id": deleteNoteRe.FindStringSubmatch(msg)[1]})
	case newNoteRe.MatchString(msg) && has(assistant.AskUserName):
		return call(assistant.AskUserName, newNoteForm)
	case formRe.MatchString(msg) && has(assistant.AskUserName):
		return call(assistant.AskUserName, demoForm)
	case addNoteRe.MatchString(msg) && has("add_note") && !strings.Contains(lower, "notes"):
		return call("add_note", addNoteArgs{Text: strings.TrimSpace(addNoteRe.FindStringSubmatch(msg)[1])})
	case strings.Contains(lower, "note") && has("list_notes"):
		return call("list_notes", struct{}{})
	case (strings.Contains(lower, "time") || strings.Contains(lower, "date")) && has("get_time"):
		return call("get_time", struct{}{})
	}
	return providers.ToolCall{}, false
}

// noteFromAnswers reads the note out of the answers to newNoteForm. The
// text may span lines, so it runs up to the last Tag line.
func noteFromAnswers(msg string) (addNoteArgs, bool) {
	textLine := "\n- " + newNoteForm.Questions[0].Label + ": "
	tagLine := "\n- " + newNoteForm.Questions[1].Label + ": "
	i, j := strings.Index(msg, textLine), strings.LastIndex(msg, tagLine)
	if i < 0 || j < i+len(textLine) {
		return addNoteArgs{}, false
	}
	tag, _, _ := strings.Cut(msg[j+len(tagLine):], "\n")
	if !slices.Contains(newNoteForm.Questions[1].Options, tag) {
		tag = "" // "(no answer)"
	}
	return addNoteArgs{Text: msg[i+len(textLine) : j], Tag: tag}, true
}

// toolResult is the envelope the model reads for each tool call.
type toolResult struct {
	OK      bool            `json:"ok"`
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// narrate answers from the tool results that end the conversation. On a
// decision turn that is the result of the call the user applied or
// declined (the Engine writes the user's "I approve: …" note, then the call
// and its result); after client-side tools, what the page posted.
func narrate(msgs []providers.Message) string {
	names := map[string]string{} // call id -> tool name
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	first := len(msgs)
	for first > 0 && msgs[first-1].Role == providers.Tool {
		first--
	}
	var b strings.Builder
	for _, m := range msgs[first:] {
		var r toolResult
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			b.WriteString("I could not read the tool's answer. ")
			continue
		}
		b.WriteString(describe(names[m.ToolCallID], r))
	}
	return b.String()
}

// describe words one tool result.
func describe(tool string, r toolResult) string {
	if !r.OK && r.Error != nil && r.Error.Code == string(tools.CodeDeclined) {
		return "OK, I left your notes unchanged. "
	}
	if !r.OK && r.Error != nil {
		return fmt.Sprintf("I could not do that: %s ", r.Error.Message)
	}
	var nt note
	switch tool {
	case "add_note":
		if json.Unmarshal(r.Data, &nt) == nil && nt.ID != "" {
			return fmt.Sprintf("Done — I added the note “%s” as #%s. ", nt.Text, nt.ID)
		}
		return "Done — I added the note. "
	case "delete_note":
		if json.Unmarshal(r.Data, &nt) == nil && nt.ID != "" {
			return fmt.Sprintf("Done — I deleted note %s (“%s”). ", nt.ID, nt.Text)
		}
		return "Done — I deleted the note. "
	case "browser_time":
		var bt struct {
			Local    string `json:"local"`
			TimeZone string `json:"time_zone"`
		}
		if json.Unmarshal(r.Data, &bt) == nil && bt.Local != "" {
			return fmt.Sprintf("Your browser's clock says %s (time zone %s).\n", bt.Local, cmp.Or(bt.TimeZone, "unknown"))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here is what I found: **%s**.\n\n", r.Summary)
	var items []note
	if json.Unmarshal(r.Data, &items) == nil && len(items) > 0 {
		for _, it := range items {
			fmt.Fprintf(&b, "- #%s %s", it.ID, it.Text)
			if it.Tag != "" {
				fmt.Fprintf(&b, " [%s]", it.Tag)
			}
			b.WriteString("\n")
		}
	} else if len(r.Data) > 0 && string(r.Data) != "null" {
		fmt.Fprintf(&b, "```json\n%s\n```\n", r.Data)
	}
	return b.String()
}

// smallTalk is the answer to anything else. model is the model asked
// for, which the demo names when it stands in for more than one.
func smallTalk(msg, model string, offered []providers.ToolDef) string {
	names := make([]string, len(offered))
	for i, d := range offered {
		names[i] = "`" + d.Name + "`"
	}
	as := ""
	if model != "" {
		as = ", answering as `" + model + "`"
	}
	tools := "No tools are offered to you here."
	if len(names) > 0 {
		tools = "Tools you may use: " + strings.Join(names, ", ") + "."
	}
	return fmt.Sprintf("Hello! I am the built-in demo model%s, so I only understand a few phrases. "+
		"Try \"show my notes\", \"add a note: buy bread\", \"new note\", \"delete note 1\", "+
		"\"what time is it in my browser\", \"show me a form\" or \"show stats\". "+
		"%s\n\nSet `PARLEY_LLM_BASE_URL` or `PARLEY_ANTHROPIC_API_KEY` to talk to a real model. You said:\n\n```text\n%s\n```\n",
		as, tools, msg)
}

// demoJudgeWords are what the demo model, asked as the guard's second
// opinion (guard/modeljudge), takes for an attack: a few keywords, not a
// classifier, so that the path can be seen and tested without a model.
var demoJudgeWords = []struct{ word, label string }{
	{"system prompt", "EXTRACTION"},
	{"preamble", "EXTRACTION"},
	{"ignore", "OVERRIDE"},
	{"supersede", "OVERRIDE"},
	{"no limits", "JAILBREAK"},
	{"evil twin", "JAILBREAK"},
}

// demoVerdict answers the judge's call: in is the text inside <text> tags.
func demoVerdict(in string) string {
	in = strings.ToLower(in)
	for _, w := range demoJudgeWords {
		if strings.Contains(in, w.word) {
			return w.label
		}
	}
	return "BENIGN"
}
