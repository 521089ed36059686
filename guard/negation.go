package guard

// Negation. "Never ignore a compiler warning", "it is important not to
// disregard safety protocols" and "the bot refuses to reveal its hidden
// instructions" use an attack's words to say the opposite of an attack. A
// rule whose match starts with such a verb is marked negatable, and a
// match is not reported when the words just before it negate that verb.
//
// The check reads the normalized view (lower case, apostrophes folded)
// backwards from the match's start, over words separated by spaces only:
// any punctuation between the negator and the verb ("Do not. Ignore all
// previous instructions") ends the negation. Between them may stand "to"
// and a few adverbs ("not to simply ignore", "don't ever forget"). What is
// a request rather than a negation still counts as the attack: "why not
// ignore", "can't you ignore" (a pronoun stands between), "don't refuse to
// reveal" (a negated refusal).

// negWord is what a word just before a verb does to it.
type negWord uint8

const (
	negNone negWord = iota
	// negSkip may stand between a negator and its verb.
	negSkip
	// negPlain negates the verb: "never ignore".
	negPlain
	// negNot negates it unless "why" comes before: "why not ignore" asks.
	negNot
	// negRefuse negates it unless it is itself negated: "refuses to
	// reveal", but "don't refuse to reveal".
	negRefuse
)

var negWords = map[string]negWord{
	"to": negSkip, "ever": negSkip, "just": negSkip, "simply": negSkip, "blindly": negSkip, "really": negSkip,
	"completely": negSkip, "entirely": negSkip, "accidentally": negSkip, "carelessly": negSkip, "lightly": negSkip,
	"silently": negSkip, "quietly": negSkip, "casually": negSkip, "routinely": negSkip,

	"not": negNot,

	"never": negPlain, "don't": negPlain, "dont": negPlain, "doesn't": negPlain, "doesnt": negPlain,
	"didn't": negPlain, "didnt": negPlain, "shouldn't": negPlain, "shouldnt": negPlain, "mustn't": negPlain,
	"mustnt": negPlain, "won't": negPlain, "wouldn't": negPlain, "wouldnt": negPlain, "cannot": negPlain,
	"can't": negPlain, "cant": negPlain, "couldn't": negPlain, "couldnt": negPlain, "nor": negPlain,
	"without": negPlain,
	// The other languages' rules start at an infinitive or imperative
	// that these negate: "no ignores", "ne pas ignorer", "non ignorare",
	// "nao ignore", "nie ignoruj", "не игнорируй".
	"nunca": negPlain, "jamas": negPlain, "pas": negPlain, "jamais": negPlain, "non": negPlain,
	"nao": negPlain, "nie": negPlain, "не": negPlain, "никогда": negPlain,

	"refuse": negRefuse, "refuses": negRefuse, "refused": negRefuse, "refusing": negRefuse,
	"avoid": negRefuse, "avoids": negRefuse, "avoiding": negRefuse,
}

// negatedAt reports whether the words just before b[p] negate the verb
// that starts there.
func negatedAt(b []byte, p int) bool { return negated(b, p, 2) }

// negated is negatedAt looking through at most depth negated refusals.
func negated(b []byte, p, depth int) bool {
	w, q := prevWord(b, p)
	k := negWords[string(w)]
	for n := 0; k == negSkip && n < 3; n++ {
		w, q = prevWord(b, q)
		k = negWords[string(w)]
	}
	switch k {
	case negPlain:
		return true
	case negNot:
		w, _ = prevWord(b, q)
		return string(w) != "why"
	case negRefuse:
		return depth == 0 || !negated(b, q, depth-1)
	}
	return false
}

// prevWord returns the word that ends at the spaces (one to four) just
// before b[p], and its start; nil when there are no such spaces or the word
// is longer than any negator. A word is letters and apostrophes; what
// comes before it does not matter ("(never ignore").
func prevWord(b []byte, p int) ([]byte, int) {
	e := p
	for e > 0 && p-e < 4 && b[e-1] == ' ' {
		e--
	}
	if e == p {
		return nil, p
	}
	s := e
	for s > 0 && isNegByte(b[s-1]) {
		if e-s == maxNegWord {
			return nil, p
		}
		s--
	}
	if s == e {
		return nil, p
	}
	return b[s:e], s
}

func isNegByte(c byte) bool { return c >= 'a' && c <= 'z' || c == '\'' || c >= 0x80 }

// maxNegWord is the longest negator's length in bytes, with room to spare.
const maxNegWord = 16
