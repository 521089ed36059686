package assistant

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/guard"
)

func TestTopicVerdictIsStrict(t *testing.T) {
	for answer, want := range map[string]topicVerdict{
		"OFF_TOPIC": topicOff, "off_topic": topicOff, "Off-topic.": topicOff, "**OFF_TOPIC**": topicOff,
		"`OFF_TOPIC`": topicOff, "\"off topic\"\n": topicOff, "OFFTOPIC": topicOff,
		"ON_TOPIC": topicOn, "on topic": topicOn, "On-Topic.": topicOn,
		"": topicUnclear, "OFF": topicUnclear, "TOPIC": topicUnclear, "OFF_TOPIC OFF_TOPIC": topicUnclear,
		"NOT OFF_TOPIC": topicUnclear, "OFF_TOPIC?": topicUnclear, "OFF_TOPIC\nbecause it is a poem": topicUnclear,
		"ON_TOPIC or OFF_TOPIC": topicUnclear, "OFF__TOPIC": topicUnclear, "OFF_TOPİC": topicUnclear,
		"off_topıc": topicUnclear, "OFF_TOPIC\u200b": topicUnclear, "Verdict: OFF_TOPIC": topicUnclear,
	} {
		if got := parseTopicVerdict(answer); got != want {
			t.Errorf("parseTopicVerdict(%q) = %d, want %d", answer, got, want)
		}
	}
}

// FuzzTopicVerdict: no panic, and only an answer that is OFF_TOPIC once
// its decoration is taken off (case, one separator, quotes, emphasis, a
// final period) refuses; decorating either word keeps its verdict.
func FuzzTopicVerdict(f *testing.F) {
	for _, s := range []string{"OFF_TOPIC", "on topic", "**Off-topic.**", "NOT OFF_TOPIC", "", "off_topıc", "\x00OFF_TOPIC", "OFF TOPIC\n\nON TOPIC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		v := parseTopicVerdict(answer)
		if v == topicOff {
			bare := strings.Map(func(r rune) rune {
				switch r {
				case ' ', '\t', '\r', '\n', '"', '\'', '`', '*', '_', '.', '-':
					return -1
				}
				return r
			}, answer)
			if !strings.EqualFold(bare, "OFFTOPIC") || len(strings.Fields(answer)) > 2 {
				t.Fatalf("%q refuses the message", answer)
			}
		}
		if v != topicUnclear {
			for _, dressed := range []string{"**" + answer + "**", "`" + answer + "`", answer + ".", " " + answer + "\n"} {
				if got := parseTopicVerdict(dressed); got != v {
					t.Fatalf("%q reads %d, %q reads %d", answer, v, dressed, got)
				}
			}
		}
	})
}

func TestTopicTextIsATypedMessageAsTheGuardPassedIt(t *testing.T) {
	typed := admission{text: "rain?", scan: true}
	for name, tc := range map[string]struct {
		adm  admission
		in   input
		want string
	}{
		"typed":      {typed, input{text: "rain?", verdict: guard.Result{Redacted: "rain?"}}, "rain?"},
		"redacted":   {typed, input{text: "card 4111", verdict: guard.Result{Action: guard.Redact, Redacted: "card [CARD_REDACTED]"}}, "card [CARD_REDACTED]"},
		"blocked":    {typed, input{text: "key sk-x", verdict: guard.Result{Action: guard.Block, Redacted: "key [X]"}}, ""},
		"decision":   {admission{text: "The user approved.", scan: false}, input{text: "The user approved."}, ""},
		"form":       {admission{text: "answers", scan: true, req: Request{Form: &FormAnswer{ID: "f1"}}}, input{text: "answers"}, ""},
		"client":     {admission{text: "here", scan: true, req: Request{ToolResults: []ToolResult{{ID: "c1"}}}}, input{text: "here"}, ""},
		"no message": {admission{scan: true}, input{}, ""},
	} {
		if got := topicText(&tc.adm, &tc.in); got != tc.want {
			t.Errorf("%s: topicText = %q, want %q", name, got, tc.want)
		}
	}
}
