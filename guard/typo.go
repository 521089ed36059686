package guard

import (
	_ "embed"
	"regexp"
	"strings"
)

// The typo view. "Ignore everthing you have been told" is the rules' own
// phrase with one letter gone, and a rule, which reads phrasings, misses
// it. The typo view reads every word of five or more letters that is one
// edit (a letter added, dropped or changed, or two neighbours swapped) from
// a word of the English rules, and not itself such a word, as that word,
// and a word of three or four letters as the rule word it is with two
// neighbours swapped ("teh", "yuor"); the rules then run over it. Its
// findings say Via "typo".
//
// It is read only where the learned layer's score is within typoMargin of
// its Medium threshold (so never when the layer is off), and corrects only
// around the layer's best window: typing errors in an attack leave most of
// its grams, so the score says where to look. There the English rules read
// it, if no rule found a Medium injection in the text, and the layer
// scores it too. Benign prose, 96.5% of which scores below that gate, pays
// nothing. A real English word is never read as another ("decide" is no
// typo of "decode", nor "ignored" of "ignore"): realwords.txt lists the
// 1,300 words of Debian's wamerican (SCOWL) one edit from a rule word, and
// TestRealWords keeps it current. Since a corrected reading is an
// inference, the view's rule findings are Medium at most: they warn, and
// do not block alone.

//go:embed realwords.txt
var realWordsList string

// moreRealWords are words of software and of chat that the English word
// list lacks, one edit from a rule word: "prepend" is no typo of
// "pretend", nor "thats" of "whats".
var moreRealWords = []string{
	"prepend", "prepends", "prepended", "prepending", "gmail", "printf", "sprintf", "fprintf", "openapi",
	"jquery", "semver", "systemd", "tsan", "devel", "limiter", "limiters", "chatbots", "personas", "roleplays",
	"thats", "theres", "theyre", "isnt", "wasnt", "arent", "werent", "hasnt", "havent", "youre", "youve",
	"shouldnt", "wouldnt", "couldnt", "mustnt", "doesnt", "didnt",
}

// typoMargin is how far below the learned layer's Medium threshold the
// typo view still runs: 3 logits below the threshold the layer was once
// calibrated at, which guardlab's TrainConfig.Shift has since raised by
// 2.5.
const typoMargin = 5.5

// typoContext is how far around the learned layer's best window the typo
// view reads: the window is where an attack's words are, and a long text
// costs no more than a short one.
const typoContext = 320

// minTypoWord and maxTypoWord bound the words the typo view reads with
// any one edit: a shorter word is one edit from too many others, and no
// rule word is longer. Words of minSwapWord to minTypoWord-1 letters are
// read with two neighbours swapped only.
const (
	minTypoWord = 5
	maxTypoWord = 24
	minSwapWord = 3
)

// typoIndex holds the rules' words and their one-letter deletions, to find
// a word one edit away with a few map lookups (the symmetric-deletion
// method).
type typoIndex struct {
	words []string
	id    map[string]int32   // word -> index in words
	dels  map[string][]int32 // a word with one letter deleted -> the words
	real  map[string]bool    // English words never read as a rule word
	// keys is a Bloom filter of the keys of id and dels: most strings fix
	// looks up are neither, and a bit test on a hash computed in place
	// tells most of them without building the string and probing a map.
	keys *[typoKeyBits / 64]uint64
}

// typoKeyBits is the size of typoIndex.keys: a few thousand keys, two bits
// each, leave about one lookup in fifty to the maps.
const typoKeyBits = 1 << 16

// typoHashMul is the base of typoHash's polynomial.
const typoHashMul = 0x100000001b3

// typoHash is a polynomial hash of s: the sum of s[i] times typoHashMul to
// the power len(s)-1-i, mod 2^64. Dropping s[k] from it is arithmetic on
// the hashes of s's prefix and suffix (fix).
func typoHash(s []byte) uint64 {
	var h uint64
	for _, c := range s {
		h = h*typoHashMul + uint64(c)
	}
	return h
}

// mayHold reports whether the string of hash h may be a key of id or
// dels; false is certain.
func (t *typoIndex) mayHold(h uint64) bool {
	a, b := typoBits(h)
	return t.keys[a>>6]&(1<<(a&63)) != 0 && t.keys[b>>6]&(1<<(b&63)) != 0
}

// hold adds the string of hash h to keys.
func (t *typoIndex) hold(h uint64) {
	a, b := typoBits(h)
	t.keys[a>>6] |= 1 << (a & 63)
	t.keys[b>>6] |= 1 << (b & 63)
}

// typoBits returns the two bits of keys that stand for hash h.
func typoBits(h uint64) (a, b uint64) {
	h *= 0x9e3779b97f4a7c15 // spread the polynomial's low bits
	return h >> 48, h >> 32 & (typoKeyBits - 1)
}

// ruleWords matches the words of a rule's source: runs of lower-case
// letters between characters that are not letters, an optional trailing
// letter ("instructions?") read both ways.
var ruleWords = regexp.MustCompile(`(?:^|[^a-zA-Z\\])([a-z]{3,})(\??)(?:$|[^a-z(\[])`)

// otherLanguage reports whether the rule named name is one of the other
// languages' ("injection/override-fr"); the typo view reads English.
func otherLanguage(name string) bool {
	i := strings.LastIndexByte(name, '-')
	switch name[i+1:] {
	case "es", "fr", "de", "it", "pt", "nl", "pl", "tr", "ru", "zh", "ja", "ko":
		return true
	}
	return false
}

// newTypoIndex indexes the words of the English rules in specs; real is
// realwords.txt's text: the words to leave alone.
func newTypoIndex(specs []ruleSpec, real string) *typoIndex {
	t := &typoIndex{id: map[string]int32{}, dels: map[string][]int32{}, real: map[string]bool{}, keys: new([typoKeyBits / 64]uint64)}
	for line := range strings.Lines(real) {
		if w := strings.TrimSpace(line); w != "" && w[0] != '#' {
			t.real[w] = true
		}
	}
	for _, w := range moreRealWords {
		t.real[w] = true
	}
	add := func(w string) {
		if _, ok := t.id[w]; ok || len(w) > maxTypoWord+1 {
			return
		}
		id := int32(len(t.words))
		t.words = append(t.words, w)
		t.id[w] = id
		t.hold(typoHash([]byte(w)))
		if len(w) < minTypoWord {
			// Only a word of five letters or more is reached through a
			// deletion: a shorter one is read with a swap, or as what a
			// longer word less a letter gives (a lookup in id).
			return
		}
		for k := range len(w) {
			d := w[:k] + w[k+1:]
			if l := t.dels[d]; len(l) == 0 || l[len(l)-1] != id {
				t.dels[d] = append(l, id)
			}
			t.hold(typoHash([]byte(d)))
		}
	}
	for _, sp := range specs {
		if otherLanguage(sp.name) {
			continue
		}
		// Overlapping matches: a word may end where the next begins.
		src := sp.re
		for len(src) > 0 {
			m := ruleWords.FindStringSubmatchIndex(src)
			if m == nil {
				break
			}
			w := src[m[2]:m[3]]
			add(w)
			if m[5] > m[4] {
				add(w[:len(w)-1])
			}
			src = src[m[3]:]
		}
	}
	return t
}

// fix returns the rule word that w (lower-case ASCII letters) is one edit
// from, or "" when w is a rule word itself or no such word is near it.
// Where several are, near says which wins.
func (t *typoIndex) fix(w []byte) string {
	n := len(w)
	if n < minSwapWord || n > maxTypoWord {
		return ""
	}
	best := t.near(w)
	if best < 0 {
		return ""
	}
	if _, ok := t.id[string(w)]; ok || t.real[string(w)] {
		return ""
	}
	return t.words[best]
}

// near returns the index of the rule word w (of minSwapWord to
// maxTypoWord letters) is one edit from, or -1. Where several are, the one
// the rules name first wins, except for a word under minTypoWord letters,
// where the first swap (from the left) that gives a rule word does. A
// string is looked up only where keys may hold it.
func (t *typoIndex) near(w []byte) int32 {
	n := len(w)
	if n < minTypoWord {
		var buf [minTypoWord]byte
		for k := range n - 1 {
			if w[k] == w[k+1] {
				continue
			}
			d := append(buf[:0], w...)
			d[k], d[k+1] = d[k+1], d[k]
			if !t.mayHold(typoHash(d)) {
				continue
			}
			if id, ok := t.id[string(d)]; ok {
				return id
			}
		}
		return -1
	}
	best := int32(-1)
	take := func(id int32) {
		if best < 0 || id < best {
			best = id
		}
	}
	// A letter dropped: w is one of a word's deletions.
	if t.mayHold(typoHash(w)) {
		for _, id := range t.dels[string(w)] {
			take(id)
		}
	}
	// The deletions of w, last letter first: the hash of w less w[k] is
	// that of w[:k] shifted past the suffix, plus the suffix's.
	var pre [maxTypoWord + 1]uint64 // pre[k] is the hash of w[:k]
	for k := range n {
		pre[k+1] = pre[k]*typoHashMul + uint64(w[k])
	}
	var suf uint64   // the hash of w[k+1:]
	pow := uint64(1) // typoHashMul to the power n-1-k
	var buf [maxTypoWord]byte
	for k := n - 1; k >= 0; k-- {
		// Where w[k] repeats w[k-1], deleting either gives one string:
		// it is read at k-1.
		if (k == 0 || w[k] != w[k-1]) && t.mayHold(pre[k]*pow+suf) {
			d := append(append(buf[:0], w[:k]...), w[k+1:]...)
			// A letter added: deleting it gives the word, if that word
			// has five letters or more: "where" is no typo of "were".
			if id, ok := t.id[string(d)]; ok && n > minTypoWord {
				take(id)
			}
			// A letter changed or two swapped: w and the word share a
			// deletion, and differ in one place or in two swapped
			// neighbours.
			for _, id := range t.dels[string(d)] {
				if oneEdit(w, t.words[id]) {
					take(id)
				}
			}
		}
		suf += uint64(w[k]) * pow
		pow *= typoHashMul
	}
	return best
}

// oneEdit reports whether a and b, of the same length, differ in exactly
// one byte or in two neighbours swapped.
func oneEdit(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return false
	}
	j := len(a) - 1
	for a[j] == b[j] {
		j--
	}
	return i == j || j == i+1 && a[i] == b[j] && a[j] == b[i]
}

// correct writes src to dst with the misspelled rule words of its bytes
// [lo, hi) corrected, each corrected word's bytes mapped to the whole
// original word, and reports whether any word changed and where the
// corrected span is in dst. The span is widened to whole words, by at most
// a rule word's length: a longer word is no rule word's typo.
func (t *typoIndex) correct(src *view, lo, hi int, dst *view) (changed bool, dlo, dhi int) {
	b := src.b
	lo, hi = wordStart(b, lo), wordEnd(b, hi)
	dst.reset()
	done := 0 // src bytes before this are in dst
	for i := lo; i < hi; {
		if b[i] < 'a' || b[i] > 'z' {
			i++
			continue
		}
		j := i + 1
		for j < hi && b[j] >= 'a' && b[j] <= 'z' {
			j++
		}
		// A word inside a longer one (letters of another script, digits)
		// or a contraction ("shouldn't": "shouldn" is no typo of
		// "should") is not read.
		if i > 0 && (wordByteAt(b[i-1]) || b[i-1] == '\'') || j < len(b) && (wordByteAt(b[j]) || b[j] == '\'') {
			i = j
			continue
		}
		if w := t.fix(b[i:j]); w != "" {
			dst.b = append(dst.b, b[done:i]...)
			dst.start = append(dst.start, src.start[done:i]...)
			dst.end = append(dst.end, src.end[done:i]...)
			a, e := src.start[i], src.end[j-1]
			for k := range len(w) {
				dst.add(w[k], int(a), int(e))
			}
			done, changed = j, true
		}
		i = j
	}
	if !changed {
		dst.reset()
		return false, 0, 0
	}
	dhi = len(dst.b) + hi - done
	dst.b = append(dst.b, b[done:]...)
	dst.start = append(dst.start, src.start[done:]...)
	dst.end = append(dst.end, src.end[done:]...)
	return true, lo, dhi // the bytes before lo are as they were
}

// wordStart moves p back to the start of the word it is in, or, in a word
// longer than any rule word, forward past it.
func wordStart(b []byte, p int) int {
	q := p
	for q > 0 && p-q <= maxTypoWord && isTypoWordByte(b[q-1]) {
		q--
	}
	if q == 0 || !isTypoWordByte(b[q-1]) {
		return q
	}
	for p < len(b) && isTypoWordByte(b[p]) {
		p++
	}
	return p
}

// wordEnd moves p forward to the end of the word it is in, or, in a word
// longer than any rule word, back before it.
func wordEnd(b []byte, p int) int {
	q := p
	for q < len(b) && q-p <= maxTypoWord && isTypoWordByte(b[q]) {
		q++
	}
	if q == len(b) || !isTypoWordByte(b[q]) {
		return q
	}
	for p > 0 && isTypoWordByte(b[p-1]) {
		p--
	}
	return p
}

func isTypoWordByte(c byte) bool { return c >= 'a' && c <= 'z' || wordByteAt(c) }

// wordByteAt reports whether c continues a word the typo view does not
// split: a digit or a byte of a non-ASCII letter.
func wordByteAt(c byte) bool { return c >= '0' && c <= '9' || c >= 0x80 }
