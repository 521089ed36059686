package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

func TestDemoSummaryKeepsTheFacts(t *testing.T) {
	in := "Previous summary:\n- my name is Ann\n- remember the milk\n\nNew part of the transcript:\n" +
		"User: my Name is Bea.\nAssistant: Noted: your Name is Bea.\n" +
		"User: what time is it\nAssistant: Here is what I found.\n[called get_time {}]\n[tool result] {\"ok\":true}\n" +
		"User: note that the gate code is 1234\nAssistant: Noted.\n" +
		"User: Remember: the dentist on Friday!\nAssistant: Done.\n" +
		"User: I think my cat is asleep\nAssistant: ok\n"
	got := demoSummary(in, 0)
	want := "- remember the milk\n- my Name is Bea\n- the gate code is 1234\n- the dentist on Friday\n"
	if got != want {
		t.Errorf("summary\n%q, want\n%q", got, want)
	}
	if got := demoSummary("New part of the transcript:\nUser: hello\nAssistant: hi\n", 0); got != "- "+noFacts+"\n" {
		t.Errorf("summary of a chat with no facts %q", got)
	}
	if got := demoSummary("Previous summary:\n- "+noFacts+"\n\nNew part of the transcript:\nUser: my dog is Rex\n", 0); got != "- my dog is Rex\n" {
		t.Errorf("the placeholder outlives the first fact: %q", got)
	}

	var many strings.Builder
	many.WriteString("New part of the transcript:\n")
	for i := range 50 {
		fmt.Fprintf(&many, "User: remember fact %d\nAssistant: ok\n", i)
	}
	facts := summaryFacts(demoSummary(many.String(), 0))
	if len(facts) != maxSummaryFacts || facts[0] != "fact 10" || facts[len(facts)-1] != "fact 49" {
		t.Errorf("50 facts kept as %d, %q … %q; want the newest %d", len(facts), facts[0], facts[len(facts)-1], maxSummaryFacts)
	}
	if got := demoSummary(many.String(), 10); got != "- fact 46\n- fact 47\n- fact 48\n- fact 49\n" {
		t.Errorf("summary within 10 tokens: %q, want the newest facts that fit in 40 bytes", got)
	}
}

func TestDemoTitleIsShortAndPlain(t *testing.T) {
	for q, want := range map[string]string{
		"my launch code is TEAL-42":                "Launch Code TEAL-42",
		"show my notes":                            "Show Notes",
		"**What** is the capital of France?\nmore": "Capital France",
		"hi": "Hi",
		"  ": "Conversation",
		"please add a note: buy bread and butter and jam": "Add Note Buy Bread",
	} {
		if got := demoTitle("User: " + q + "\n\nAssistant: some answer"); got != want {
			t.Errorf("title of %q: %q, want %q", q, got, want)
		}
	}
}

func TestDemoRecallsFromTheSummaryAndTheReplay(t *testing.T) {
	req := &providers.Request{
		System: "rules\n<conversation_summary>\n- my launch code is &lt;TEAL-41&gt;\n- my dog is Rex\n- the milk\n</conversation_summary>\n## Now",
		Messages: []providers.Message{
			{Role: providers.User, Content: "remember that my launch code is TEAL-42"},
			{Role: providers.Assistant, Content: "my launch code is WRONG"},
			{Role: providers.User, Content: "what is my launch code?"},
		},
	}
	for q, want := range map[string]string{
		"what is my launch code?":         "Your launch code is TEAL-42.\n",
		"What's my dog":                   "Your dog is Rex.\n",
		"what did I ask you to remember?": "You told me:\n\n- my dog is Rex\n- the milk\n- my launch code is TEAL-42\n",
	} {
		if got, ok := recall(q, req); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", q, got, ok, want)
		}
	}
	if got, ok := recall("what is my cat called", req); ok {
		t.Errorf("a question about an unknown fact was answered: %q", got)
	}
	req.System = "rules"
	req.Messages = req.Messages[:1]
	if got, ok := recall("what is my launch code", req); !ok || got != "Your launch code is TEAL-42.\n" {
		t.Errorf("from the replay alone: %q %v", got, ok)
	}
}
