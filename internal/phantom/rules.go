package phantom

import (
	"slices"
	"strings"
)

// window is how many words before a change word its clause may reach
// back: the subject or auxiliary that makes it a claim is near it, except
// in German and Dutch, where the participle ends the clause.
func window(code string) int {
	if code == "de" || code == "nl" {
		return 14
	}
	return 7
}

// maxStem is the longest stem in the lexicons, in bytes.
const maxStem = 24

// base are change words that are also a verb's base form ("set", "put"):
// a sentence that opens with one is an instruction, not a status line.
var base = newSet("set reset put shut rerun")

// changeLangs appends to buf the languages in which w is a change word.
func changeLangs(w string, buf []int) []int {
	buf = append(buf, byForm[w]...)
	for n := 2; n < min(len(w), maxStem+1); n++ {
		for _, li := range byStem[w[:n]] {
			if slices.Contains(lexicons[li].notPast, w[n:]) {
				continue // "eliminaré" is a future
			}
			for _, suf := range lexicons[li].past {
				if len(w)-len(suf) >= n && strings.HasSuffix(w, suf) {
					buf = append(buf, li)
					break
				}
			}
		}
	}
	return buf
}

// claimAt reports whether the change word toks[i], read as language x,
// makes the sentence a claim.
func claimAt(toks []token, i int, x *lexicon) bool {
	// The clause before the change word: toks[cs:i] for its subject, and
	// toks[ns:i], which ends at a comma too, for what negates it ("No
	// problem, I've deleted it" is a claim).
	cs, ns := i, i
	for cs > 0 && i-cs < window(x.code) && !toks[cs-1].brk && !x.breaks[toks[cs-1].w] {
		cs--
		if !toks[cs].comma && ns == cs+1 {
			ns = cs
		}
	}
	for _, t := range toks[ns:i] {
		if x.negation[t.w] || x.modal[t.w] || conditional(x, t.w) {
			return false
		}
	}
	for _, t := range toks {
		if x.await[t.w] {
			return false
		}
	}
	if i+1 < len(toks) {
		switch toks[i+1].w {
		case "ich", "wir", "ik", "we", "wij":
			if x.code == "de" || x.code == "nl" {
				return false // "Daarna herstart ik": a present tense, inverted
			}
		}
	}
	w := toks[i].w
	for _, t := range toks[cs:i] {
		if x.first[t.w] || x.success[t.w] || t.w == "✅" {
			return true
		}
	}
	if hasSuffix(w, x.firstSuffix) {
		return true
	}
	if i+1 < len(toks) && x.success[toks[i+1].w] { // "gelöscht erfolgreich", "eliminado con éxito"
		return true
	}
	passive := hasSuffix(w, x.impersonal)
	for _, t := range toks[cs:i] {
		if x.passive[t.w] {
			passive = true
		}
	}
	if passive {
		return !reads(toks, x)
	}
	// A status line: "Deleted.", "Restarted nginx and reloaded the
	// config.", "Note deleted.", "Ticket created: SUP-1094".
	short := i <= 2 && (len(toks) <= 5 || toks[i].colon || toks[0].item) && !toks[0].colon && !numeric(toks[0].w)
	if toks[i].first && !base[w] || short {
		for _, t := range toks {
			if x.finite[t.w] || x.passive[t.w] {
				return false
			}
		}
		return !reads(toks, x)
	}
	return false
}

// conditional reports whether w is a conditional or subjunctive form that
// says a change would happen (Polish "zostałoby", "usunąłby").
func conditional(x *lexicon, w string) bool {
	if x.code != "pl" {
		return false
	}
	for _, s := range []string{"łby", "łaby", "łoby", "łyby", "liby"} {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// reads reports whether the sentence reports what a record says rather
// than what the assistant did: it names when it happened ("on 3 May",
// "yesterday", "4 hours ago"), how often ("twice"), by whom ("by the
// support team") or where it was read ("according to the logs"), or opens
// with a time ("02:14 nginx restarted").
func reads(toks []token, x *lexicon) bool {
	if len(toks) > 1 && numeric(toks[0].w) && toks[0].colon && numeric(toks[1].w) {
		return true
	}
	for j, t := range toks {
		switch {
		case x.read[t.w]:
			return true
		case x.agent[t.w] && j+1 < len(toks) && (toks[j+1].cap || x.articles[toks[j+1].w]):
			return true // "by the support team", "by Alice"
		case x.agent[t.w] && (t.w == "vom" || t.w == "pelo" || t.w == "pela"):
			return true
		case date(x, t):
			aimed := false
			for k := max(0, j-5); k < j; k++ {
				if x.target[toks[k].w] {
					aimed = true
				}
			}
			if !aimed {
				return true
			}
		}
	}
	return false
}

// doneMarker reports whether the sentence opens with a done marker that
// stands alone: "Done!", "All set — …", "Erledigt: …", "Okay, done.".
func doneMarker(toks []token) (Claim, bool) {
	for li := range lexicons {
		x := &lexicons[li]
		start := 0
		for start < len(toks)-1 && x.softener[toks[start].w] {
			start++
		}
		for _, d := range x.done {
			end := start + len(d)
			if end > len(toks) || !words(toks[start:end], d) {
				continue
			}
			last := toks[end-1]
			if end == len(toks) || last.brk || toks[end].w == "✅" || toks[end].first {
				return Claim{Lang: x.code, Word: strings.Join(d, " ")}, true
			}
		}
	}
	return Claim{}, false
}

// acabar reports a Spanish or Portuguese "acabo de enviar" (I have just
// sent) at toks[i]: the infinitive after it names a completed change.
func acabar(toks []token, i int) (Claim, bool) {
	var w string
	switch toks[i].w {
	case "acabo", "acabei", "acabamos", "acabé":
		if i+2 >= len(toks) || toks[i+1].w != "de" {
			return Claim{}, false
		}
		w = toks[i+2].w
	case "viens", "venons": // French "je viens d'envoyer"
		if i+1 >= len(toks) || !strings.HasPrefix(toks[i+1].w, "d'") {
			return Claim{}, false
		}
		w = strings.TrimPrefix(toks[i+1].w, "d'")
	default:
		return Claim{}, false
	}
	for n := 2; n < min(len(w), maxStem+1); n++ {
		for _, li := range byStem[w[:n]] {
			if x := &lexicons[li]; (x.code == "es" || x.code == "pt" || x.code == "fr") && (strings.HasSuffix(w, "r") || strings.HasSuffix(w, "er")) {
				for _, t := range toks[max(0, i-3):i] {
					if x.negation[t.w] {
						return Claim{}, false
					}
				}
				return Claim{Lang: x.code, Word: w}, true
			}
		}
	}
	return Claim{}, false
}

func words(toks []token, d []string) bool {
	for i, w := range d {
		if toks[i].w != w {
			return false
		}
	}
	return true
}

func hasSuffix(w string, sufs []string) bool {
	for _, s := range sufs {
		if len(w) > len(s)+1 && strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// numeric reports whether w is all ASCII digits.
func numeric(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// date reports whether t names a month, a weekday or a year.
func date(x *lexicon, t token) bool {
	w := t.w
	if i := strings.IndexByte(w, '-'); i > 0 { // "segunda-feira"
		w = w[:i]
	}
	return x.dates[w] || !t.glued && year(t.w)
}

// year reports whether w is a year from 1900 to 2099.
func year(w string) bool {
	return len(w) == 4 && numeric(w) && (w[:2] == "19" || w[:2] == "20")
}

// guess scores the languages the sentence may be in by the small words it
// uses (subjects, auxiliaries, articles, prepositions), each word counting
// more the fewer languages share it. A word such as "cancelada" reads as
// Spanish and Portuguese, and "se" means "if" in one and marks a passive
// in the other: the score picks the reading.
func guess(toks []token) [8]int {
	var hits [8]int
	for _, t := range toks {
		langs := smallWords[t.w]
		for _, li := range langs {
			hits[li] += 840 / len(langs)
		}
	}
	return hits
}

// likeliest keeps, of the languages in langs, those the sentence most
// likely is in.
func likeliest(langs []int, hits *[8]int) []int {
	best := -1
	for _, li := range langs {
		best = max(best, hits[li])
	}
	out := langs[:0]
	for _, li := range langs {
		if hits[li] == best && !slices.Contains(out, li) {
			out = append(out, li)
		}
	}
	return out
}
