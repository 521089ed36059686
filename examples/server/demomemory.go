package main

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/providers"
)

// The demo model's memory: how it stands in for a real model on the
// Engine's two housekeeping calls, and answers from what the user told it.
//
// Facts. The first line of a user message states a fact when it is
// "my X is Y" (or "my X are Y"; X at most four words), or starts with
// "remember" or "note that": the fact is the rest of the line after those
// words, or the whole "my X is Y". Facts are kept as the user wrote them,
// one line of at most maxFactBytes.
//
// Summary call (its system prompt is assistant.SummaryInstructions): the new summary is the previous summary's lines, then the
// facts of the user lines of the new transcript, one "- " bullet each. A
// newer "my X is Y" replaces an older one about the same X, a repeated fact
// moves to the end, and only the newest maxSummaryFacts are kept, fewer if
// they would not fit the call's MaxTokens.
//
// Title call (its system prompt is assistant.TitleInstructions): the first few
// words of the user's question that are not small function words, each
// capitalized: "my launch code is TEAL-42" becomes "Launch Code TEAL-42".
//
// A turn asking "what is my X" answers from the newest "my X is …" fact
// found in the system prompt's <conversation_summary> section and in the
// replayed user messages; "what did I ask you to remember" (or "what do
// you remember") lists them all.
const (
	maxSummaryFacts = 40
	maxFactBytes    = 200
	maxTitleWords   = 4
	// noFacts is the whole summary when nobody has stated a fact yet: an
	// empty answer would count as a failed summary call.
	noFacts = "Nothing to remember yet."
)

var (
	// statedRe is a fact introduced by "remember" or "note that".
	statedRe = regexp.MustCompile(`(?i)^\W*(?:please\s+)?(?:remember(?:\s+that)?|note\s+that)\b[\s:,-]*(\S.*)$`)
	// myFactRe is "my X is Y": X, the verb and Y.
	myFactRe = regexp.MustCompile(`(?i)^my\s+(\S+(?:\s+\S+){0,3}?)\s+(is|are)\s+(\S.*)$`)
	// askMyRe asks for the Y of a "my X is Y" fact.
	askMyRe = regexp.MustCompile(`(?i)^\W*what(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+my\s+(.+?)[\s?.!]*$`)
	// askFactsRe asks for every fact.
	askFactsRe = regexp.MustCompile(`(?i)\bwhat\b.*\b(?:remember|told\s+you)\b`)
)

// factOf returns the fact the first line of a user message states.
func factOf(msg string) (string, bool) {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	line = strings.TrimSpace(line)
	stated := false
	if m := statedRe.FindStringSubmatch(line); m != nil {
		line, stated = m[1], true
	}
	if m := myFactRe.FindStringSubmatch(line); m != nil {
		line = "my " + strings.Join(strings.Fields(m[1]), " ") + " " + strings.ToLower(m[2]) + " " + m[3]
		stated = true
	}
	line = strings.TrimRight(line, " .!")
	if !stated || line == "" {
		return "", false
	}
	return cut(line, maxFactBytes), true
}

// factKey identifies what a fact is about: "my X" for "my X is Y", else
// the fact itself, in lower case.
func factKey(f string) string {
	if m := myFactRe.FindStringSubmatch(f); m != nil {
		return "my " + strings.ToLower(strings.Join(strings.Fields(m[1]), " "))
	}
	return strings.ToLower(f)
}

// addFact appends f to facts, dropping an older fact with the same key.
func addFact(facts []string, f string) []string {
	k := factKey(f)
	out := facts[:0]
	for _, g := range facts {
		if factKey(g) != k {
			out = append(out, g)
		}
	}
	return append(out, f)
}

// summaryFacts reads the facts of a summary: its lines, without bullets.
func summaryFacts(summary string) []string {
	var facts []string
	for line := range strings.Lines(summary) {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if line != "" && line != noFacts {
			facts = addFact(facts, cut(line, maxFactBytes))
		}
	}
	return facts
}

// demoSummary answers the summary call: in is its one user message,
// "Previous summary:\n…\n\nNew part of the transcript:\n…" (the first part
// only when there is a previous summary).
func demoSummary(in string, maxTokens int) string {
	var prev string
	transcript, ok := strings.CutPrefix(in, "Previous summary:\n")
	if ok {
		prev, transcript, _ = strings.Cut(transcript, "\n\nNew part of the transcript:\n")
	} else {
		transcript = strings.TrimPrefix(transcript, "New part of the transcript:\n")
	}
	facts := summaryFacts(prev)
	for line := range strings.Lines(transcript) {
		if said, ok := strings.CutPrefix(line, "User: "); ok {
			if f, ok := factOf(said); ok {
				facts = addFact(facts, f)
			}
		}
	}
	facts = facts[max(0, len(facts)-maxSummaryFacts):]
	size := func() int {
		n := 0
		for _, f := range facts {
			n += len("- \n") + len(f)
		}
		return n
	}
	for maxTokens > 0 && len(facts) > 1 && size() > maxTokens*4 {
		facts = facts[1:]
	}
	if len(facts) == 0 {
		return "- " + noFacts + "\n"
	}
	var b strings.Builder
	for _, f := range facts {
		b.WriteString("- ")
		b.WriteString(f)
		b.WriteString("\n")
	}
	return b.String()
}

// knownFacts are the facts a turn can see, oldest first: those of the
// running summary in the system prompt, then those of the replayed user
// messages.
func knownFacts(req *providers.Request) []string {
	var facts []string
	const openTag, closeTag = "<conversation_summary>\n", "\n</conversation_summary>"
	if _, rest, ok := strings.Cut(req.System, openTag); ok {
		if summary, _, ok := strings.Cut(rest, closeTag); ok {
			// The Engine escapes angle brackets in the summary.
			facts = summaryFacts(strings.NewReplacer("&lt;", "<", "&gt;", ">").Replace(summary))
		}
	}
	for _, m := range req.Messages {
		if m.Role != providers.User {
			continue
		}
		if f, ok := factOf(m.Content); ok {
			facts = addFact(facts, f)
		}
	}
	return facts
}

// recall answers "what is my X" from a fact about X, and "what did I ask
// you to remember" from all of them. ok is false for a question about an X
// nobody named, which may be for a tool.
func recall(msg string, req *providers.Request) (reply string, ok bool) {
	if m := askMyRe.FindStringSubmatch(msg); m != nil {
		facts := knownFacts(req)
		key := factKey("my " + m[1] + " is ?")
		for i := len(facts) - 1; i >= 0; i-- {
			if f := myFactRe.FindStringSubmatch(facts[i]); f != nil && factKey(facts[i]) == key {
				return fmt.Sprintf("Your %s %s %s.\n", f[1], f[2], f[3]), true
			}
		}
		return "", false
	}
	if !askFactsRe.MatchString(msg) {
		return "", false
	}
	facts := knownFacts(req)
	if len(facts) == 0 {
		return "You have not asked me to remember anything in this conversation.\n", true
	}
	var b strings.Builder
	b.WriteString("You told me:\n\n")
	for _, f := range facts {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String(), true
}

// acknowledge is the answer to a message that states a fact.
func acknowledge(f string) string {
	if m := myFactRe.FindStringSubmatch(f); m != nil {
		return fmt.Sprintf("Noted: your %s %s %s. Ask me “what is my %s?” whenever you need it.\n", m[1], m[2], m[3], m[1])
	}
	return fmt.Sprintf("Noted: %s. Ask me “what did I ask you to remember?” whenever you need it.\n", f)
}

// titleStopWords are left out of a title.
var titleStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "my": true, "your": true, "our": true, "me": true, "i": true,
	"you": true, "is": true, "are": true, "was": true, "were": true, "be": true, "to": true, "of": true,
	"for": true, "in": true, "on": true, "at": true, "and": true, "or": true, "please": true,
	"can": true, "could": true, "would": true, "will": true, "what": true, "what's": true, "how": true,
	"do": true, "does": true, "did": true, "it": true, "this": true, "that": true, "with": true,
	"about": true, "hi": true, "hello": true,
}

// demoTitle answers the title call: in is "User: <question>\n\nAssistant:
// <answer>".
func demoTitle(in string) string {
	q, _, _ := strings.Cut(strings.TrimPrefix(in, "User: "), "\n\nAssistant: ")
	line, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
	var all, kept []string
	for _, w := range strings.Fields(line) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w == "" {
			continue
		}
		all = append(all, w)
		if !titleStopWords[strings.ToLower(w)] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		kept = all // only small words: keep them rather than nothing
	}
	if len(kept) == 0 {
		return "Conversation"
	}
	kept = kept[:min(len(kept), maxTitleWords)]
	for i, w := range kept {
		r, n := utf8.DecodeRuneInString(w)
		kept[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(kept, " ")
}

// cut returns at most n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
