package providers_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/providers"
)

func clean(deltas ...string) (string, string) {
	var c providers.Cleaner
	var text, reasoning strings.Builder
	for _, d := range deltas {
		t, r := c.Write(d)
		text.WriteString(t)
		reasoning.WriteString(r)
	}
	t, r := c.Flush()
	text.WriteString(t)
	reasoning.WriteString(r)
	return text.String(), reasoning.String()
}

func TestCleanerSeparatesReasoningAndDropsToolMarkup(t *testing.T) {
	for _, tc := range []struct {
		in              []string
		text, reasoning string
	}{
		{[]string{"<think>The user wants a greeting.</think>Hello!"}, "Hello!", "The user wants a greeting."},
		{[]string{"<thi", "nk>plan", "</th", "ink>Hi"}, "Hi", "plan"},
		{[]string{"<thinking>a</thinking>b<think>c</think>d"}, "bd", "ac"},
		{[]string{"Plan done.</think>The answer."}, "Plan done.The answer.", ""},
		{[]string{"Let me check. <tool_call>{\"name\":\"x\"}</tool_call> Done."}, "Let me check.  Done.", ""},
		{[]string{"ok <|tool_call|>{}<|/tool_call|>!"}, "ok !", ""},
		{[]string{"Sure. [TOOL_", "CALLS] [{\"name\":\"x\"}]", " more"}, "Sure. ", ""},
		{[]string{"a < b and 2 <3"}, "a < b and 2 <3", ""},
		{[]string{"ends with <thi"}, "ends with <thi", ""},
		{[]string{"<think>never closed"}, "", "never closed"},
		{[]string{"x <tool_call>never closed"}, "x ", ""},
		// DeepSeek (A9), with the exact markers the models leak.
		{[]string{"I will check.<|DSML|function_calls><|DSML|invoke name=\"list_notes\"></|DSML|invoke></|DSML|function_calls> Done."}, "I will check. Done.", ""},
		{[]string{"a<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"x\">\n<｜DSML｜parameter name=\"id\" string=\"true\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>b"}, "ab", ""},
		{[]string{"x<|DSML|function_calls>{}</|DSML|>y"}, "xy", ""},
		{[]string{"stray <|DSML|invoke name=\"a\"> tag"}, "stray  tag", ""},
		{[]string{"<|DSML|inv", "oke name=\"a", "\">ok"}, "ok", ""},
		{[]string{"The plan is set.<|end▁of▁thinking|>Here it is."}, "The plan is set.Here it is.", ""},
		{[]string{"Fine.<｜end▁of▁thinking｜> Yes.<｜end▁of▁sentence｜>"}, "Fine. Yes.", ""},
		{[]string{"Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>delete_note\n```json\n{\"id\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"}, "Checking.", ""},
		{[]string{"<｜tool▁calls", "▁begin｜>{}", "<｜tool▁calls▁e", "nd｜>after"}, "after", ""},
		{[]string{"<|tool▁calls▁begin|>{}<|tool▁calls▁end|>ok"}, "ok", ""},
		{[]string{"cut <|DSML|invoke name=\"a"}, "cut ", ""},
		{[]string{"not a tag <|DSML|" + strings.Repeat("x", 300) + " end"}, "not a tag <|DSML|" + strings.Repeat("x", 300) + " end", ""},
		{[]string{"<|DSML|" + strings.Repeat("z", 300) + "</|DSML|function_calls>ok"}, "<|DSML|" + strings.Repeat("z", 300) + "ok", ""},
		{[]string{"<|DSML|" + strings.Repeat("z", 100), strings.Repeat("z", 200) + "</|DSML|function_", "calls>ok"}, "<|DSML|" + strings.Repeat("z", 300) + "ok", ""},
		{[]string{"a stray</tool_call> closer"}, "a stray closer", ""},
	} {
		text, reasoning := clean(tc.in...)
		if text != tc.text || reasoning != tc.reasoning {
			t.Errorf("%q: text %q reasoning %q; want %q and %q", tc.in, text, reasoning, tc.text, tc.reasoning)
		}
	}
}

// FuzzCleaner: however a stream is split into deltas, the result is the
// same, and no marker survives in the text.
func FuzzCleaner(f *testing.F) {
	f.Add("<think>a</think>b<tool_call>c</tool_call>d", uint8(3))
	f.Add("x</think>y[TOOL_CALLS]z", uint8(1))
	f.Add("<thinking>é<thi</thinking>ü", uint8(2))
	f.Add("a<｜DSML｜function_calls><｜DSML｜invoke name=\"x\"></｜DSML｜invoke></｜DSML｜function_calls>b<|end▁of▁thinking|>c", uint8(4))
	f.Add("<｜tool▁calls▁begin｜>x<｜tool▁calls▁end｜>y<|DSML|z", uint8(5))
	f.Add("<|DSML|"+strings.Repeat("z", 300)+"</|DSML|function_calls>ok", uint8(6))
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		whole, wholeR := clean(s)
		n := int(step%7) + 1
		var parts []string
		for i := 0; i < len(s); i += n {
			parts = append(parts, s[i:min(i+n, len(s))])
		}
		split, splitR := clean(parts...)
		if split != whole || splitR != wholeR {
			t.Fatalf("split by %d: %q/%q, whole: %q/%q", n, split, splitR, whole, wholeR)
		}
		for _, m := range []string{"<think>", "</think>", "<tool_call>", "[TOOL_CALLS]", "<|end▁of▁thinking|>", "<｜tool▁calls▁begin｜>", "<｜DSML｜function_calls>"} {
			if strings.Contains(whole, m) && !strings.Contains(s, strings.Repeat(m, 2)) {
				// A marker can only remain when removing one formed another.
				if strings.Count(whole, m) > strings.Count(s, m) {
					t.Fatalf("marker %q made up in %q", m, whole)
				}
			}
		}
		if utf8.ValidString(s) && (!utf8.ValidString(whole) || !utf8.ValidString(wholeR)) {
			t.Fatalf("invalid UTF-8 out of valid input")
		}
	})
}
