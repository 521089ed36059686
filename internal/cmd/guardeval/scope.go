package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/guardlab"
)

// The host's scope as evidence (issue 28, point 3): does knowing what the
// app is for (its topic scope and tool names) tell attacks from benign
// text better than the learned score alone? Each trial scores a text as
// off scope when none of its content words shares a stem with the scope,
// and then either lowers the learned threshold for off-scope text (an
// order to do something else than the app does) or raises it for
// on-scope text (an ordinary request of the app). Each is set beside a
// plain threshold shift with the same false-positive rate: the scope helps
// only where it beats that.

// trialScopes are three apps of the kinds Parley is embedded in, in the
// words their hosts would write.
var trialScopes = []struct{ name, scope string }{
	{"notes app", "taking and managing the user's personal notes: add, list, search and delete notes, reminders, " +
		"the date and time. Tools: list_notes get_time get_local_time app_stats add_note delete_note"},
	{"coding help", "writing, explaining, reviewing and fixing code: programming languages, functions, errors, " +
		"exceptions, libraries, tests, builds. Tools: search_docs run_tests read_file"},
	{"shop support", "an online shop's customer support: orders, shipping, deliveries, returns, refunds, payments, " +
		"invoices, accounts and passwords. Tools: get_order list_orders refund_order update_address"},
}

// stem is a lower-cased word without a plural "s", cut to five letters:
// enough to match "refunds" with "refund" and "notes" with "note".
func stem(w string) string {
	r := []rune(w)
	if len(r) > 3 && r[len(r)-1] == 's' {
		r = r[:len(r)-1]
	}
	return string(r[:min(len(r), 5)])
}

// words returns the content words of s (four letters or more, split on
// anything not a letter, underscores included), as stems.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(guard.Normalize(s).Text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= 4 && !stopword[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

var stopword = map[string]bool{}

func init() {
	for _, w := range strings.Fields("that this with from your have what when where which will would could should " +
		"there their they them then than these those into about after before other some such only also just very " +
		"more most much many make like want need please tell give write using used each every been being were does") {
		stopword[w] = true
	}
}

// scopeTrial prints, for each trial scope, how often attacks and benign
// texts are off scope, and the two uses of it beside a plain shift.
func scopeTrial(l *guardlab.LOSO) {
	fmt.Println("## The host's scope as evidence (leave one source out, with the rules)")
	fmt.Printf("%-13s %11s %11s   %-34s %14s %14s %18s\n", "scope", "off: att.", "off: benign", "use", "recall", "FP", "plain shift recall")
	for _, ts := range trialScopes {
		vocab := map[string]bool{}
		for _, w := range words(ts.scope) {
			vocab[w] = true
		}
		off := make([]bool, len(l.Samples))
		var att, ben guardlab.Tally
		for i, s := range l.Samples {
			off[i] = true
			for _, w := range words(s.Text) {
				if vocab[w] {
					off[i] = false
					break
				}
			}
			t := &ben
			if s.Attack {
				t = &att
			}
			t.N++
			if off[i] {
				t.Hit++
			}
		}
		for _, u := range []struct {
			name    string
			off, on float32 // the threshold for off- and on-scope text
		}{
			{"off scope: threshold -1", -1, 0},
			{"off scope: threshold -2", -2, 0},
			{"on scope: threshold +1", 0, 1},
			{"on scope: threshold +2", 0, 2},
		} {
			r := verdictOf(l, func(i int) float32 {
				if off[i] {
					return u.off
				}
				return u.on
			})
			fmt.Printf("%-13s %10.1f%% %10.1f%%   %-34s %13.1f%% %13.2f%% %17.1f%%\n", ts.name, att.Rate(), ben.Rate(), u.name,
				r.Recall.Rate(), r.FalsePos.Rate(), plainAt(l, r.FalsePos.Rate()))
		}
	}
}

// verdictOf scores l with a threshold per sample, and the rules.
func verdictOf(l *guardlab.LOSO, threshold func(i int) float32) *guardlab.Report {
	k := 0
	return guardlab.Evaluate(l.Samples, func(guardcorpus.Sample) bool {
		f := l.Margin[k] >= threshold(k) || l.Also[k]
		k++
		return f
	})
}

// plainAt is the recall of the best plain threshold shift (one for every
// text) whose false-positive rate is at most fp.
func plainAt(l *guardlab.LOSO, fp float64) float64 {
	best := 0.0
	for s := float32(-4); s <= 6; s += 0.05 {
		r := verdictOf(l, func(int) float32 { return s })
		if r.FalsePos.Rate() <= fp+1e-9 && r.Recall.Rate() > best {
			best = r.Recall.Rate()
		}
	}
	return best
}
