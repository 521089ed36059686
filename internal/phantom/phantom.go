package phantom

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Claim is what Check found in a sentence.
type Claim struct {
	Lang string // the language of the change word: "en", "de", ...
	Word string // the change word or done marker, lower case
}

// maxWords bounds the words of one sentence Check reads: a claim is made in
// a sentence, and a longer run of text without a full stop is read in its
// first maxWords words.
const maxWords = 96

// maxQuote is how far after an opening quote its closing one is looked for.
const maxQuote = 400

// Check reports whether sentence claims a completed change. It reads one
// sentence; Claims reads a text.
func Check(sentence string) (Claim, bool) {
	var buf [maxWords]token
	toks := tokenize(sentence, buf[:0])
	if len(toks) == 0 || question(sentence) {
		return Claim{}, false
	}
	if c, ok := doneMarker(toks); ok {
		return c, true
	}
	var langs [8]int
	hits := guess(toks)
	for i := range toks {
		if c, ok := acabar(toks, i); ok {
			return c, true
		}
		for _, li := range likeliest(changeLangs(toks[i].w, langs[:0]), &hits) {
			if claimAt(toks, i, &lexicons[li]) {
				return Claim{Lang: lexicons[li].code, Word: toks[i].w}, true
			}
		}
	}
	return Claim{}, false
}

// Claims reports whether any sentence of text claims a completed change,
// and the first such claim.
func Claims(text string) (Claim, bool) {
	for s := range Sentences(text) {
		if c, ok := Check(s); ok {
			return c, true
		}
	}
	return Claim{}, false
}

// Sentences yields the sentences of text: pieces that end at a full stop,
// question or exclamation mark (followed by a space or the end) or at a
// line break. The pieces concatenate to text.
func Sentences(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for text != "" {
			n := SentenceEnd(text)
			if n <= 0 {
				n = len(text)
			}
			if !yield(text[:n]) {
				return
			}
			text = text[n:]
		}
	}
}

// SentenceEnd returns the length of the first complete sentence of s,
// with the spaces after it, or 0 when s holds no complete sentence yet: a
// writer that streams text can emit s[:n] and keep the rest. A sentence is
// complete at a line break, or at '.', '!', '?', '…' or their CJK forms
// followed by a space; at the end of s it is not known to be complete
// ("3." may become "3.5").
func SentenceEnd(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '\n':
			return i
		case '。', '！', '？':
			return skipSpace(s, i)
		case '.', '!', '?', '…':
			for i < len(s) && strings.ContainsRune(sentenceMarks, rune(s[i])) { // "?!", "..."
				i++
			}
			if i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
				return skipSpace(s, i)
			}
		}
	}
	return 0
}

// Decided returns how much of s, in which SentenceEnd found no complete
// sentence, no later text can change that for: s without the sentence
// marks that end it ("It ends here." waits for what follows the full
// stop) and without a rune cut short at its end. A writer that streams
// text and has seen SentenceEnd(s) == 0 need not read s[:d] again, for
// d = Decided(s): whatever t follows, SentenceEnd(s+t) is 0 where
// SentenceEnd((s+t)[d:]) is, and d more where it is not.
func Decided(s string) int {
	d := len(strings.TrimRight(s, sentenceMarks))
	// A rune cut at the end of s may be completed by what follows.
	for k := d - 1; k >= 0 && k > d-utf8.UTFMax; k-- {
		if utf8.RuneStart(s[k]) {
			if !utf8.FullRuneInString(s[k:d]) {
				d = k
			}
			break
		}
	}
	return d
}

// sentenceMarks end a sentence when a space follows them: at the end of
// a text, whether one does is not yet known.
const sentenceMarks = ".!?…"

// skipSpace returns i moved past the spaces and tabs at s[i:] and, if one
// follows, a single line break.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	if i < len(s) && s[i] == '\n' {
		i++
	}
	return i
}

// question reports whether the sentence asks: it ends with a question mark
// (before closing quotes and spaces) or opens with '¿'.
func question(s string) bool {
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'”’»)*_", r)
	})
	t := strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '¿' })
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") || strings.HasPrefix(t, "¿")
}

// A token is a word of a sentence, lower case, with what follows it.
type token struct {
	w     string
	colon bool // a ':' follows
	brk   bool // a clause break (':', ';', '—', '–') follows
	comma bool // a comma or a clause break follows
	first bool // the first word of the sentence or of a list item
	item  bool // the first word of a list item or a table cell
	cap   bool // written with a capital
	glued bool // written right after a '/', '.', '#', '_' or digit: part of an id, not a word
}

// tokenize splits s into lower-case words, leaving out what is quoted
// ("…", “…”, „…“, «…», `…`) and a quoted line ("> …"): a claim in a quote
// or a draft is not the assistant's. Check marks ✅, ✔ and ☑ as words.
func tokenize(s string, toks []token) []token {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, ">") {
		return toks
	}
	first, item := true, false
	var quote rune // the closing quote being looked for; 0: none
	for i := 0; i < len(s) && len(toks) < cap(toks); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if quote != 0 {
			i += size
			if r == quote || (quote == '"' && r == '”') {
				quote = 0
			}
			continue
		}
		if close := closingQuote(r, s[i+size:]); close != 0 {
			quote = close
			i += size
			continue
		}
		switch {
		case r == '✅' || r == '✔' || r == '☑':
			toks = append(toks, token{w: "✅", first: first, item: first && item})
			first, item = false, false
			i += size
		case isWordRune(r):
			j := i + size
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) && !(r2 == '\'' || r2 == '’' || r2 == '-') {
					break
				}
				j += n
			}
			w := strings.TrimRight(s[i:j], "'’-")
			glued := i > 0 && strings.IndexByte("/.#_", s[i-1]) >= 0
			toks = append(toks, token{w: lower(w), first: first, item: first && item, cap: unicode.IsUpper(r), glued: glued})
			first, item = false, false
			i = j
		default:
			if len(toks) > 0 {
				last := &toks[len(toks)-1]
				switch r {
				case ':':
					if i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9' {
						break // a time or a ratio: "9:30", "1:1"
					}
					last.colon, last.brk, last.comma = true, true, true
				case ';', '—', '–':
					last.brk, last.comma = true, true
				case ',':
					last.comma = true
				}
			}
			if r == '|' || ((r == '-' || r == '*' || r == '•' || r == '+') && lineStart(s, i)) {
				first, item = true, true // a table cell or a list item starts afresh
			}
			i += size
		}
	}
	return toks
}

// closingQuote returns the quote that closes one opened by r, or 0 when r
// opens no quote. A straight double quote opens one only if it closes
// later in the sentence; a backtick likewise.
func closingQuote(r rune, rest string) rune {
	var close rune
	switch r {
	case '"', '`':
		close = r
	case '“':
		close = '”'
	case '„':
		close = '“'
	case '«':
		close = '»'
	default:
		return 0
	}
	if len(rest) > maxQuote {
		rest = rest[:maxQuote] // a quote closes within a sentence's length, or is no quote
	}
	if !strings.ContainsRune(rest, close) && !(r == '"' && strings.ContainsRune(rest, '”')) {
		return 0
	}
	return close
}

// lineStart reports whether only spaces precede s[i] on its line.
func lineStart(s string, i int) bool {
	for i > 0 {
		i--
		switch s[i] {
		case ' ', '\t':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '#' }

// lower returns w in lower case, with ’ as ', sparing the allocation for
// ASCII lower-case words.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return strings.ReplaceAll(strings.ToLower(w), "’", "'")
		}
	}
	return w
}
