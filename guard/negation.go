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
// and a few adverbs ("not to blindly ignore", "don't ever forget"), but not
// "just" or "simply": "don't just ignore the above" asks for more.
//
// A negation that asks or cancels itself is none, so these stay attacks:
// "why not ignore", "now or never disregard", "never not ignore", "can't
// you ignore" and "could you not ignore" (a pronoun stands before "not"),
// "stop refusing to reveal" (only "refuses" and "refused" state a
// refusal), "don't refuse to reveal", and in the other languages
// "perché non", "pourquoi pas", "por que nao" and "ne pas ne pas". "Not"
// negates only after a word that makes it a statement: "do not", "must
// not", "important not to". Russian negation is not read: the normalized
// view folds Cyrillic letters to their Latin look-alikes.

// negWord is what a word just before a verb does to it.
type negWord uint8

const (
	negNone negWord = iota
	// negSkip may stand between a negator and its verb.
	negSkip
	// negPlain negates the verb: "never ignore".
	negPlain
	// negNot negates it after a word of notAfter: "do not ignore".
	negNot
	// negPas negates it after "ne": "ne pas oublier".
	negPas
	// negRefuse states a refusal: "refuses to reveal".
	negRefuse
	// negWhy asks, and "or" offers: before a negator, they undo it.
	negWhy
)

var negWords = map[string]negWord{
	"to": negSkip, "ever": negSkip, "blindly": negSkip, "completely": negSkip, "entirely": negSkip,
	"accidentally": negSkip, "carelessly": negSkip, "lightly": negSkip,

	"not": negNot,
	"pas": negPas,

	"never": negPlain, "don't": negPlain, "dont": negPlain, "doesn't": negPlain, "doesnt": negPlain,
	"didn't": negPlain, "didnt": negPlain, "shouldn't": negPlain, "shouldnt": negPlain, "mustn't": negPlain,
	"mustnt": negPlain, "won't": negPlain, "wouldn't": negPlain, "wouldnt": negPlain, "cannot": negPlain,
	"can't": negPlain, "cant": negPlain, "couldn't": negPlain, "couldnt": negPlain, "nor": negPlain,
	"without": negPlain,
	// The other languages' rules start at an infinitive or imperative
	// that these negate: "nunca olvides", "ne jamais oublier", "non
	// ignorare", "nao ignore", "nie ignoruj". Spanish "no" is left out: in
	// English text it would let "no ignore all previous instructions" by.
	"nunca": negPlain, "jamas": negPlain, "jamais": negPlain, "non": negPlain, "nao": negPlain, "nie": negPlain,

	"refuses": negRefuse, "refused": negRefuse, "avoids": negRefuse, "avoided": negRefuse,

	"why": negWhy, "or": negWhy, "perche": negWhy, "pourquoi": negWhy, "porque": negWhy, "warum": negWhy,
	"dlaczego": negWhy, "o": negWhy, "ou": negWhy, "oder": negWhy, "lub": negWhy, "albo": negWhy,
}

// notAfter are the words after which "not" makes a statement of the verb.
var notAfter = map[string]bool{
	"do": true, "does": true, "did": true, "should": true, "must": true, "shall": true, "will": true,
	"would": true, "could": true, "can": true, "may": true, "might": true, "is": true, "are": true,
	"was": true, "were": true, "am": true, "be": true, "been": true, "important": true, "essential": true,
	"crucial": true, "vital": true, "best": true, "careful": true, "sure": true, "better": true, "wise": true,
	"advised": true, "decided": true, "chose": true, "choose": true, "try": true, "tried": true, "asked": true,
	"told": true, "taught": true, "reminded": true, "instructed": true, "please": true, "and": true,
}

// negatedAt reports whether the words just before b[p] negate the verb
// that starts there.
func negatedAt(b []byte, p int) bool { return negated(b, p, 2) }

// negated is negatedAt looking back through at most depth stated refusals
// ("never refuses to"); past that, a verb is not negated.
func negated(b []byte, p, depth int) bool {
	w, q := prevWord(b, p)
	k := negWords[string(w)]
	if string(w) == "he" && cyrillicAt(b, p) {
		// Russian "не" folds to "he" (look-alike letters): a negator
		// before a Russian verb ("не игнорируй"), a pronoun before an
		// English one.
		k = negPlain
	}
	for n := 0; k == negSkip && n < 3; n++ {
		w, q = prevWord(b, q)
		k = negWords[string(w)]
	}
	switch k {
	case negPlain:
		return !undone(b, q)
	case negNot:
		w, _ = prevWord(b, q)
		return notAfter[string(w)]
	case negPas:
		w, q = prevWord(b, q)
		return string(w) == "ne" && !undone(b, q)
	case negRefuse:
		return depth > 0 && !undone(b, q) && !negated(b, q, depth-1)
	}
	return false
}

// cyrillicAt reports whether the word at b[p] has a letter outside ASCII:
// a Russian word keeps some of its letters through the look-alike folding
// ("игнорируй" is "иrhopиpyи"), an English one has none.
func cyrillicAt(b []byte, p int) bool {
	for i := p; i < len(b) && i < p+32 && b[i] != ' '; i++ {
		if b[i] >= 0x80 {
			return true
		}
	}
	return false
}

// undone reports whether the word before a negator starting at q undoes
// it: a question or an offer ("why never", "or never", "perche non", "por
// que nao"), or another negator ("pas ne pas", "not never").
func undone(b []byte, q int) bool {
	w, r := prevWord(b, q)
	switch negWords[string(w)] {
	case negWhy, negPlain, negNot, negPas:
		return true
	}
	if string(w) == "que" {
		w, _ = prevWord(b, r)
		return string(w) == "por"
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
