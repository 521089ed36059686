package guard

import (
	"slices"
	"strings"
)

// Text can hide in a spelling rather than an encoding: ROT13, atbash,
// reversal, the NATO alphabet, Morse code, braille. Benign text must not
// pay for looking, so nothing here makes a pass of its own over the text:
// the word gate rides on the walk findEncodedRuns already makes (one table
// lookup per word), and the symbol finder jumps between the few bytes that
// can start a Morse, braille or carrier run with IndexByte.

// textGate is what findEncodedRuns keeps while it walks the text:
//
//   - "rot13", "atbash", "reversed": clauses (split at . ! ? : ; and line
//     breaks) in which the common English words of the transform ("gur",
//     "gsv", "eht" for "the") number at least 2 and more than twice the
//     plain ones; consecutive such clauses make one run. Benign English
//     never passes, so it never pays for the views.
//   - "nato": 4 or more consecutive words of the NATO spelling alphabet.
//   - "ascii85": a bare whitespace-delimited token of 20 or more
//     characters, a tenth of them ascii85 punctuation, none outside its
//     alphabet (lower-case v-z are left to the decoder).
type textGate struct {
	segStart int
	cnt      [4]int // listed words in the plain, rot13, atbash, reversed view
	runs     [3]struct {
		s, e int
		open bool
	}
	nStart, nEnd, nWords int // NATO run
	tStart, tPunct       int // token, for bare ascii85
	tBad                 bool
}

// Word table bits: the views a word is common English in.
const (
	wPlain = 1 << iota
	wROT13
	wAtbash
	wReversed
	wNATO
)

var transformVias = [...]string{wROT13: "rot13", wAtbash: "atbash", wReversed: "reversed"}

// gateClass classifies the bytes findEncodedRuns does not take as part of
// a word (nor a space, which it handles inline).
const (
	gSegEnd   = 1 << iota // ends a clause
	gTokenEnd             // ends a token
	gA85Punct             // ascii85 punctuation
	gA85Bad               // outside the ascii85 alphabet
)

var gateClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '\n':
			t[c] = gSegEnd | gTokenEnd
		case c == '\t' || c == '\r':
			t[c] = gTokenEnd
		case c == '.' || c == '!' || c == '?' || c == ':' || c == ';':
			t[c] = gSegEnd | gA85Punct
		case '!' <= c && c <= 'u':
			t[c] = gA85Punct
		default:
			t[c] = gA85Bad
		}
	}
	return t
}()

// proseDelim holds the bytes a word must sit between to count for the
// transform gate: fragments of tokens ("eb" in "%Eb0E") say nothing about
// the language. Bytes of other scripts count as delimiters.
var proseDelim = func() (t [256]bool) {
	for _, c := range " \t\r\n.,!?:;\"'()" {
		t[c] = true
	}
	for c := 0x80; c < 256; c++ {
		t[c] = true
	}
	return t
}()

func (g *textGate) emit(text string, s, e int, via string, fn func(encodedRun)) {
	for s < e && isSpaceByte(text[s]) {
		s++
	}
	for e > s && isSpaceByte(text[e-1]) {
		e--
	}
	if s < e {
		fn(encodedRun{start: s, end: e, via: via})
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// word takes the word text[s:e] (letters, digits and + / - _) whose
// word table entry is m, 0 when it was not looked up. findEncodedRuns
// counts plain words itself and calls word for the rest when m is not zero
// or a NATO run is open.
func (g *textGate) word(text string, s, e int, m uint8, fn func(encodedRun)) {
	for k := range g.cnt {
		g.cnt[k] += int(m >> k & 1)
	}
	if !isLetter(text[s]) {
		return // "/" and numbers neither make nor break a NATO run
	}
	if m&wNATO != 0 && natoLetter(text[s:e]) != 0 {
		if g.nWords == 0 {
			g.nStart = s
		}
		g.nWords++
		g.nEnd = e
	} else if g.nWords > 0 {
		g.endNATO(text, fn)
	}
}

// space ends the token before the whitespace at i and starts the next.
// findEncodedRuns does the same inline for ' '.
func (g *textGate) space(text string, i int, fn func(encodedRun)) {
	if i-g.tStart >= 20 {
		g.endToken(text, i, fn)
	}
	g.tStart, g.tPunct, g.tBad = i+1, 0, false
}

// other takes a byte that is neither part of a word nor a space.
func (g *textGate) other(text string, i int, fn func(encodedRun)) {
	k := gateClass[text[i]]
	if k&gA85Punct != 0 {
		g.tPunct++
	}
	if k&gA85Bad != 0 {
		g.tBad = true
	}
	if k&gTokenEnd != 0 {
		g.space(text, i, fn)
	}
	if k&gSegEnd != 0 {
		g.endSegment(text, i, fn)
	}
}

func (g *textGate) endNATO(text string, fn func(encodedRun)) {
	if g.nWords >= 4 {
		g.emit(text, g.nStart, g.nEnd, "nato", fn)
	}
	g.nWords = 0
}

func (g *textGate) endToken(text string, i int, fn func(encodedRun)) {
	if n := i - g.tStart; n >= 20 && g.tPunct >= 3 && g.tPunct*10 >= n && !g.tBad {
		g.emit(text, g.tStart, i, "ascii85", fn)
	}
}

// endSegment closes the clause ending at i: it extends or closes the open
// transform runs. A clause without any listed word does neither.
func (g *textGate) endSegment(text string, i int, fn func(encodedRun)) {
	if g.cnt != [4]int{} {
		for k := 1; k < len(g.cnt); k++ {
			r := &g.runs[k-1]
			switch {
			case g.cnt[k] >= 2 && g.cnt[k] > 2*g.cnt[0]:
				if !r.open {
					r.s, r.open = g.segStart, true
				}
				r.e = i
			case r.open:
				g.emit(text, r.s, r.e, transformVias[1<<k], fn)
				r.open = false
			}
		}
		g.cnt = [4]int{}
	}
	g.segStart = i + 1
}

func (g *textGate) finish(text string, fn func(encodedRun)) {
	g.space(text, len(text), fn)
	if g.nWords > 0 {
		g.endNATO(text, fn)
	}
	g.endSegment(text, len(text), fn)
	for k := range g.runs {
		if r := &g.runs[k]; r.open {
			g.emit(text, r.s, r.e, transformVias[2<<k], fn)
			r.open = false
		}
	}
}

// wordTableBits sizes the word table. It is a one-hash Bloom filter, not
// a set: a rare other word may count, which only moves the gate a little.
const wordTableBits = 13

// wordKey hashes the word text[s:e] (2 to 12 bytes), folding ASCII case,
// into the word table: one 8-byte load, a mask and a multiply for most
// words.
func wordKey(text string, s, e int) uint32 {
	n := e - s
	var x uint64
	if s+8 <= len(text) {
		x = load64(text, s)
	} else {
		for i := len(text) - 1; i >= s; i-- {
			x = x<<8 | uint64(text[i])
		}
	}
	x |= 0x2020202020202020
	if n < 8 {
		x &= 1<<(8*uint(n)) - 1
	}
	for i := s + 8; i < e; i++ {
		x = x*0x100000001B3 ^ uint64(text[i]|0x20)
	}
	x ^= uint64(n) << 59
	return uint32((x * 0x9E3779B97F4A7C15) >> (64 - wordTableBits))
}

// gateWords are common English words, and the words of the commonest
// attacks, for the transform gate.
var gateWords = []string{
	"the", "and", "you", "your", "to", "of", "is", "in", "it", "that", "for", "on", "with", "this",
	"are", "be", "was", "have", "not", "all", "what", "can", "from", "or", "but", "me", "my", "we",
	"will", "do", "an", "as", "at", "by", "if", "so", "no", "now", "any", "please", "they", "there",
	"their", "which", "would", "about", "just", "like", "into", "been", "has", "had", "were", "our",
	"us", "he", "she", "his", "her", "them", "then", "than", "only", "also", "how", "when", "who",
	"new", "out", "up", "one", "some", "more", "very", "here", "should", "must", "could", "does",
	"saw", "won", "ignore", "previous", "instructions", "instruction", "system", "prompt", "reveal",
	"print", "forget", "rules", "disregard", "above", "prior", "tell", "show", "secret", "password",
	"output", "everything", "respond", "answer", "pretend", "act", "mode",
}

var wordTable = func() *[1 << wordTableBits]uint8 {
	t := new([1 << wordTableBits]uint8)
	add := func(w string, bit uint8) { t[wordKey(w, 0, len(w))] |= bit }
	plain := map[string]bool{}
	for _, w := range gateWords {
		plain[w] = true
		add(w, wPlain)
	}
	for _, w := range gateWords {
		r := []byte(w)
		slices.Reverse(r)
		for bit, tw := range map[uint8]string{
			wROT13:    string(decodeROT13(nil, w)),
			wAtbash:   string(decodeAtbash(nil, w)),
			wReversed: string(r),
		} {
			// A transform that is itself a listed word ("be" and "or" in
			// rot13, "no" and "on" reversed) says nothing.
			if !plain[tw] {
				add(tw, bit)
			}
		}
	}
	for _, ws := range natoWords {
		for _, w := range ws {
			add(w, wNATO)
		}
	}
	return t
}()

// symbolLeads are the bytes that can start a Morse symbol, a braille cell
// or a carrier.
var symbolLeads = [...]byte{'.', '-', '_', 0xC2, 0xE2, 0xEF, 0xF3}

// findSymbolRuns calls fn for every Morse run ("morse": dots '.', '·' and
// dashes '-', '_', '–', '−' apart by spaces, '/' or '|', at least 8
// symbols in 2 or more letters), braille run ("braille": 8 or more cells
// of U+2801-U+28FF, blank cells and spaces between) and carrier run (see
// carriers.go). It jumps between the lead bytes with IndexByte, each
// lead's next position cached, so text without them costs a vectorized
// scan per lead and any text stays linear.
func findSymbolRuns(text string, fn func(encodedRun)) {
	var next [len(symbolLeads)]int
	for k := range next {
		next[k] = -1
	}
	for pos := 0; pos < len(text); {
		p := len(text)
		for k, lead := range symbolLeads {
			if next[k] < pos {
				if j := indexByteFrom(text, pos, lead); j >= 0 {
					next[k] = j
				} else {
					next[k] = len(text)
				}
			}
			p = min(p, next[k])
		}
		if p >= len(text) {
			return
		}
		pos = p + 1
		if _, _, ok := morseSymbol(text, p); ok {
			e, syms, groups := morseRun(text, p)
			if syms >= 8 && groups >= 2 {
				fn(encodedRun{start: p, end: e, via: "morse"})
			}
			pos = e
		} else if _, ok := brailleCell(text, p); ok {
			e, cells := brailleRun(text, p)
			if cells >= 8 {
				fn(encodedRun{start: p, end: e, via: "braille"})
			}
			pos = e
		} else if via, _ := carrierAt(text, p); via != "" {
			e, count := carrierRun(text, p, via)
			if count >= minCarrierRun {
				fn(encodedRun{start: p, end: e, via: via})
			}
			pos = e
		}
	}
}

func indexByteFrom(s string, from int, c byte) int {
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// morseRun returns the end of the Morse run starting at p (after its last
// symbol), its symbols and its letters.
func morseRun(text string, p int) (end, syms, groups int) {
	in := false
	for i := p; i < len(text); {
		if size, _, ok := morseSymbol(text, i); ok {
			syms++
			if !in {
				groups++
				in = true
			}
			i += size
			end = i
			continue
		}
		if !morseSpace(text[i]) {
			break
		}
		in = false
		i++
	}
	return end, syms, groups
}

// brailleRun returns the end of the braille run starting at p and its
// cells other than the blank one.
func brailleRun(text string, p int) (end, cells int) {
	for i := p; i < len(text); {
		if d, ok := brailleCell(text, i); ok {
			if d != 0 {
				cells++
			}
			i += 3
			end = i
			continue
		}
		if !isSpaceByte(text[i]) {
			break
		}
		i++
	}
	return end, cells
}
