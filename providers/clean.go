package providers

import "strings"

// Cleaner takes the text a model streams and separates what the user
// should read from provider artifacts (A9): reasoning a model writes inline
// (<think>…</think>, <thinking>…</thinking>, <reasoning>…</reasoning>, as
// DeepSeek, Qwen and other reasoning models do through OpenAI-compatible
// servers) comes out as reasoning, and tool-call markup a model leaks into
// its text (<tool_call>…</tool_call>, <function_call>…</function_call>,
// <|tool_call|>…, and everything after a [TOOL_CALLS] marker) is dropped.
// A closing tag with no opening one (a template that opened it in the
// prompt) is dropped too.
//
// DeepSeek's markup is dropped whether its bars are ASCII (|) or
// full-width (｜): its tool calls (<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>),
// its DSML tool calls (<｜DSML｜function_calls>…</｜DSML｜function_calls>,
// and any other DSML tag, attributes and all, through its '>'), and its
// end-of-thinking and end-of-sentence markers.
//
// The state carries across deltas: a tag split over two deltas is still
// recognized, and the output is the same however the text was split. The
// zero Cleaner is ready to use; it is not safe for concurrent use.
type Cleaner struct {
	pending string // a tail that may be the start of a tag
	in      *span  // the span we are inside, if any
	dropAll bool   // after [TOOL_CALLS]: nothing more is text
}

type span struct {
	open      string
	closes    []string // any of them ends it
	reasoning bool     // its content is reasoning; else it is dropped
}

var spans = []span{
	{"<think>", []string{"</think>"}, true},
	{"<thinking>", []string{"</thinking>"}, true},
	{"<reasoning>", []string{"</reasoning>"}, true},
	{"<tool_call>", []string{"</tool_call>"}, false},
	{"<function_call>", []string{"</function_call>"}, false},
	{"<|tool_call|>", []string{"<|/tool_call|>"}, false},
	{"<|DSML|function_calls>", []string{"</|DSML|function_calls>", "</|DSML|>"}, false},
	{"<｜DSML｜function_calls>", []string{"</｜DSML｜function_calls>", "</｜DSML｜>"}, false},
	{"<|tool▁calls▁begin|>", []string{"<|tool▁calls▁end|>"}, false},
	{"<｜tool▁calls▁begin｜>", []string{"<｜tool▁calls▁end｜>"}, false},
}

// strays are markers dropped wherever they stand.
var strays = []string{
	"</think>", "</thinking>", "</reasoning>", "</tool_call>", "</function_call>", "<|/tool_call|>",
	"<|end▁of▁thinking|>", "<｜end▁of▁thinking｜>", "<|end▁of▁sentence|>", "<｜end▁of▁sentence｜>",
	"<|tool▁calls▁end|>", "<｜tool▁calls▁end｜>",
}

// tagPrefixes start tags that are dropped through their closing '>',
// whatever their name and attributes: DeepSeek's DSML
// (<｜DSML｜invoke name="…">). A tag not closed within maxTagBytes is text.
var tagPrefixes = []string{"<|DSML|", "<｜DSML｜", "</|DSML|", "</｜DSML｜"}

const maxTagBytes = 256

const toolCallsMarker = "[TOOL_CALLS]"

// Write takes the next delta and returns the text and the reasoning it
// releases; some of it may be held back until the next delta shows
// whether a tag starts there.
func (c *Cleaner) Write(delta string) (text, reasoning string) {
	if c.pending == "" && c.in == nil && !c.dropAll && !strings.ContainsAny(delta, "<[") {
		return delta, "" // the common case: plain text, no tag in sight
	}
	return c.run(c.pending+delta, false)
}

// Flush ends the stream and releases what was held back. An unclosed
// reasoning span's content is reasoning; an unclosed tool-call span is
// dropped.
func (c *Cleaner) Flush() (text, reasoning string) {
	return c.run(c.pending, true)
}

func (c *Cleaner) run(s string, final bool) (string, string) {
	c.pending = ""
	var text, reasoning strings.Builder
	for len(s) > 0 {
		if c.dropAll {
			return text.String(), reasoning.String()
		}
		if c.in != nil {
			i, n := earliest(s, c.in.closes)
			if i < 0 {
				keep := 0
				if !final {
					keep = partialSuffix(s, c.in.closes)
				}
				if c.in.reasoning {
					reasoning.WriteString(s[:len(s)-keep])
				}
				c.pending = s[len(s)-keep:]
				return text.String(), reasoning.String()
			}
			if c.in.reasoning {
				reasoning.WriteString(s[:i])
			}
			s = s[i+n:]
			c.in = nil
			continue
		}
		// Outside any span: the earliest marker wins.
		at, n := -1, 0
		var next *span
		stray, tools := false, false
		for k := range spans {
			if i := strings.Index(s, spans[k].open); i >= 0 && (at < 0 || i < at) {
				at, n, next, stray, tools = i, len(spans[k].open), &spans[k], false, false
			}
		}
		for _, m := range strays {
			if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
				at, n, next, stray, tools = i, len(m), nil, true, false
			}
		}
		if i := strings.Index(s, toolCallsMarker); i >= 0 && (at < 0 || i < at) {
			at, n, next, stray, tools = i, len(toolCallsMarker), nil, false, true
		}
		// A tag prefix not closed within maxTagBytes is text: the next one
		// after it is looked at, as it would be once the text is released.
		for from := 0; ; {
			i, m := earliest(s[from:], tagPrefixes)
			if i < 0 || at >= 0 && from+i >= at {
				break
			}
			i += from
			end := strings.IndexByte(s[i+m:min(len(s), i+maxTagBytes)], '>')
			switch {
			case end >= 0: // the whole tag goes
				at, n, next, stray, tools = i, m+end+1, nil, true, false
			case len(s)-i >= maxTagBytes: // not a tag
				from = i + 1
				continue
			case !final: // its end may come with the next delta
				text.WriteString(s[:i])
				c.pending = s[i:]
				return text.String(), reasoning.String()
			default: // cut off: dropped like an unclosed span
				text.WriteString(s[:i])
				return text.String(), reasoning.String()
			}
			break
		}
		if at < 0 {
			keep := 0
			if !final {
				keep = partialSuffix(s, outsideMarkers)
			}
			text.WriteString(s[:len(s)-keep])
			c.pending = s[len(s)-keep:]
			return text.String(), reasoning.String()
		}
		text.WriteString(s[:at])
		s = s[at+n:]
		switch {
		case tools:
			c.dropAll = true
		case stray:
		default:
			c.in = next
		}
	}
	return text.String(), reasoning.String()
}

// outsideMarkers are every string the Cleaner looks for outside a span.
var outsideMarkers = func() []string {
	out := make([]string, 0, len(spans)+len(strays)+len(tagPrefixes)+1)
	for _, s := range spans {
		out = append(out, s.open)
	}
	out = append(out, strays...)
	out = append(out, tagPrefixes...)
	return append(out, toolCallsMarker)
}()

// earliest finds the first of ms in s: its index (-1 for none) and length.
func earliest(s string, ms []string) (int, int) {
	at, n := -1, 0
	for _, m := range ms {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(m)
		}
	}
	return at, n
}

// partialSuffix is the length of the longest end of s that is the start
// of one of ms (but not the whole of it): text to hold back in case the
// next delta completes a marker.
func partialSuffix(s string, ms []string) int {
	best := 0
	for _, m := range ms {
		for n := min(len(m)-1, len(s)); n > best; n-- {
			if strings.HasSuffix(s, m[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
