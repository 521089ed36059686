package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/providers"
)

// demoModel is a deterministic stand-in for an LLM so the example runs with
// no configuration. It picks a tool from keywords in the last user message,
// and once tool results are in, narrates them. It streams word by word.
type demoModel struct {
	delay time.Duration // between streamed words
}

var addNoteRe = regexp.MustCompile(`(?i)\b(?:add|remember|note)\b(?: a)?(?: note)?[: ]+(.+)`)
var deleteNoteRe = regexp.MustCompile(`(?i)\bdelete\b.*?\b(\d+)\b`)

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

		last := req.Messages[len(req.Messages)-1]
		if last.Role == providers.Tool {
			if emitText(narrate(req.Messages)) {
				finish(providers.FinishStop)
			}
			return
		}
		if call, ok := pickTool(last.Content, req.Tools); ok {
			out += 10
			if yield(providers.Event{Kind: providers.ToolCallEvent, ToolCall: call}, nil) {
				finish(providers.FinishToolCalls)
			}
			return
		}
		if emitText(smallTalk(last.Content, req.Tools)) {
			finish(providers.FinishStop)
		}
	}
}

func pickTool(msg string, offered []providers.ToolDef) (providers.ToolCall, bool) {
	has := func(name string) bool {
		return slices.ContainsFunc(offered, func(d providers.ToolDef) bool { return d.Name == name })
	}
	lower := strings.ToLower(msg)
	call := func(name string, args any) (providers.ToolCall, bool) {
		raw, _ := json.Marshal(args)
		return providers.ToolCall{ID: "demo_" + name, Name: name, Args: raw}, true
	}
	switch {
	case strings.Contains(lower, "stats"):
		// Called even when not offered: the demo shows the Engine refusing it.
		return call("admin_stats", struct{}{})
	case deleteNoteRe.MatchString(msg) && has("delete_note"):
		return call("delete_note", map[string]string{"id": deleteNoteRe.FindStringSubmatch(msg)[1]})
	case addNoteRe.MatchString(msg) && has("add_note") && !strings.Contains(lower, "notes"):
		return call("add_note", map[string]string{"text": strings.TrimSpace(addNoteRe.FindStringSubmatch(msg)[1])})
	case strings.Contains(lower, "note") && has("list_notes"):
		return call("list_notes", struct{}{})
	case (strings.Contains(lower, "time") || strings.Contains(lower, "date")) && has("get_time"):
		return call("get_time", struct{}{})
	}
	return providers.ToolCall{}, false
}

// narrate answers from the tool results that follow the last assistant call.
func narrate(msgs []providers.Message) string {
	var b strings.Builder
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == providers.Tool; i-- {
		var r struct {
			OK      bool            `json:"ok"`
			Summary string          `json:"summary"`
			Data    json.RawMessage `json:"data"`
			Error   *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(msgs[i].Content), &r); err != nil {
			b.WriteString("I could not read the tool's answer. ")
			continue
		}
		if !r.OK && r.Error != nil {
			fmt.Fprintf(&b, "I could not do that: %s ", r.Error.Message)
			continue
		}
		fmt.Fprintf(&b, "Here is what I found: **%s**.\n\n", r.Summary)
		var items []struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if json.Unmarshal(r.Data, &items) == nil && len(items) > 0 {
			for _, it := range items {
				fmt.Fprintf(&b, "- #%s %s\n", it.ID, it.Text)
			}
		} else if len(r.Data) > 0 && string(r.Data) != "null" {
			fmt.Fprintf(&b, "```json\n%s\n```\n", r.Data)
		}
	}
	return b.String()
}

func smallTalk(msg string, offered []providers.ToolDef) string {
	names := make([]string, len(offered))
	for i, d := range offered {
		names[i] = "`" + d.Name + "`"
	}
	return fmt.Sprintf("Hello! I am the built-in demo model, so I only understand a few phrases. "+
		"Try \"show my notes\", \"what time is it\", \"add a note: buy bread\" or \"show stats\". "+
		"Tools you may use: %s.\n\nSet `PARLEY_LLM_BASE_URL` to talk to a real model. You said:\n\n```text\n%s\n```\n",
		strings.Join(names, ", "), msg)
}
