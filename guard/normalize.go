package guard

import (
	"io"
	"slices"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A view is one normalized rendering of a text, with a map from each of
// its bytes back to the original: b[i] came from original[start[i]:end[i]].
type view struct {
	b     []byte
	start []int32
	end   []int32
}

func (v *view) reset() {
	v.b, v.start, v.end = v.b[:0], v.start[:0], v.end[:0]
}

func (v *view) add(c byte, a, e int) {
	v.b = append(v.b, c)
	v.start = append(v.start, int32(a))
	v.end = append(v.end, int32(e))
}

func (v *view) addRune(r rune, a, e int) {
	if r < utf8.RuneSelf {
		v.add(byte(r), a, e)
		return
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		v.add(c, a, e)
	}
}

// orig maps the view span [i, j) to the original span it came from.
func (v *view) orig(i, j int) (int, int) {
	if j <= i {
		return int(v.start[i]), int(v.end[i])
	}
	return int(v.start[i]), int(v.end[j-1])
}

// A compactView is the compact view: b[i] is the main view's byte
// idx[i], and start and end are the main view's maps.
type compactView struct {
	b          []byte
	idx        []int32
	start, end []int32
}

func (v *compactView) reset() {
	v.b, v.idx = v.b[:0], v.idx[:0]
}

// orig maps the view span [i, j) to the original span it came from.
func (v *compactView) orig(i, j int) (int, int) {
	k, l := v.idx[i], v.idx[i]
	if j > i {
		l = v.idx[j-1]
	}
	return int(v.start[k]), int(v.end[l])
}

// tagRun is a run of Unicode tag characters decoded to ASCII.
type tagRun struct {
	start, end int    // original span
	text       []byte // decoded
	flag       bool   // an emoji flag sequence (U+1F3F4 + tags), not hidden text
}

// normalizer holds the views of one text. It is pooled; its slices are
// reused across calls.
type normalizer struct {
	main    view // NFKC, spaces, ignorables stripped, folded, marks stripped, spaces collapsed
	leet    []byte
	compact compactView // letters only, from the leet view
	tags    []tagRun
	bidi    [][2]int // original spans of bidi controls
	leetOK  bool     // leet differs from main
	leetAt  []int32  // the bytes that make leet differ: a symbol inside a word, a digit by a letter
	it      norm.Iter

	pending   byte // ' ' or '\n' to emit before the next visible rune, 0 for none
	pendStart int
	pendEnd   int
	prevRune  rune // last rune seen in the original, for emoji flags
	// fold is foldTable, taken at the first rune past ASCII: not once a
	// rune.
	fold *[1 << 16]uint16
}

// normalize fills n's views from s. The order is the one of the package
// doc: NFKC, space look-alikes, tag characters, default ignorables, case
// fold, confusables, combining marks, whitespace collapse; then the leet
// and compact views.
//
// Most text is ASCII, and NFKC leaves an ASCII byte alone unless a
// combining mark follows it: every ASCII byte starts a segment of the NFKC
// iterator, and one followed by another ASCII byte is a segment of its
// own. So runs of ASCII go through asciiRun in bulk, and the iterator is
// only sought to the ASCII byte before each non-ASCII stretch (it may
// compose with a mark there) and run until the next ASCII byte.
func (n *normalizer) normalize(s string) {
	n.main.reset()
	n.compact.reset()
	n.leet = n.leet[:0]
	n.tags = n.tags[:0]
	n.bidi = n.bidi[:0]
	n.pending, n.prevRune = 0, 0
	q := indexNonASCII(s, 0)
	if q == len(s) {
		n.asciiRun(s, 0, len(s))
		n.derive()
		return
	}
	n.it.InitString(norm.NFKC, s)
	for pos := 0; pos < len(s); {
		if pos > 0 {
			q = indexNonASCII(s, pos)
		}
		if q == len(s) {
			n.asciiRun(s, pos, q)
			break
		}
		if q > pos+1 {
			n.asciiRun(s, pos, q-1)
			pos = q - 1
		}
		n.it.Seek(int64(pos), io.SeekStart)
		for {
			a := n.it.Pos()
			seg := n.it.Next()
			e := n.it.Pos()
			for len(seg) > 0 {
				r, size := utf8.DecodeRune(seg)
				seg = seg[size:]
				n.rune(r, a, e)
			}
			if e >= len(s) || s[e] < utf8.RuneSelf {
				pos = e
				break
			}
		}
	}
	n.derive()
}

// indexNonASCII is the index of the first byte of s at or after i that is
// not ASCII, or len(s).
func indexNonASCII(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

func isASCII(s string) bool { return indexNonASCII(s, 0) == len(s) }

// asciiFold maps an ASCII byte to the main view's byte for it (lower case
// for a letter), or for whitespace to asciiSpace with the kind of
// collapsed whitespace it makes.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		switch b := byte(c); b {
		case ' ', '\t':
			t[c] = asciiSpace | ' '
		case '\n', '\r', '\v', '\f':
			t[c] = asciiSpace | '\n'
		default:
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			t[c] = b
		}
	}
	return t
}()

const asciiSpace = 0x80

// asciiRun does what ascii does for each byte of s[i:j], all ASCII and
// each its own NFKC segment. The loop has no data-dependent branch but
// the rare newline one (word lengths would defeat the branch predictor):
// every byte is written at the view's end, and the end only advances for
// a visible byte or the first byte of a whitespace run. The whitespace
// byte stays the run's view byte, made '\n' if the run holds a line
// break; a run still open at the end is taken back as the pending space.
func (n *normalizer) asciiRun(s string, i, j int) {
	if i >= j {
		return
	}
	if c := asciiFold[s[j-1]&0x7F]; c&asciiSpace == 0 {
		n.prevRune = rune(c)
	} else {
		n.prevRune = rune(s[j-1])
	}
	v := &n.main
	m := len(v.b)
	if m == 0 {
		// Leading whitespace is dropped.
		for i < j && asciiFold[s[i]&0x7F]&asciiSpace != 0 {
			i++
		}
		n.pending = 0
		if i == j {
			return
		}
	}
	// Each byte makes at most one view byte, plus one for a pending space
	// from before the run.
	size := m + j - i + 1
	b := slices.Grow(v.b, size-m)[:size]
	start := slices.Grow(v.start, size-m)[:size]
	end := slices.Grow(v.end, size-m)[:size]
	open := 0 // 1 while the view ends in a whitespace run
	if n.pending != 0 {
		b[m], start[m], end[m] = n.pending, int32(n.pendStart), int32(n.pendEnd)
		m++
		open = 1
	}
	for k := i; k < j; k++ {
		c := asciiFold[s[k]&0x7F]
		ws := int(c >> 7)
		b[m], start[m], end[m] = c&^asciiSpace, int32(k), int32(k+1)
		if c == asciiSpace|'\n' && open != 0 {
			b[m-1] = '\n'
		}
		m += 1 - ws&open
		open = ws
	}
	n.pending = 0
	if open != 0 {
		m--
		n.pending, n.pendStart, n.pendEnd = b[m], int(start[m]), int(end[m])
	}
	v.b, v.start, v.end = b[:m], start[:m], end[:m]
}

func (n *normalizer) ascii(c byte, a, e int) {
	switch c {
	case ' ', '\t':
		n.space(' ', a, e)
	case '\n', '\r', '\v', '\f':
		n.space('\n', a, e)
	default:
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		n.flush()
		n.main.add(c, a, e)
	}
	n.prevRune = rune(c)
}

func (n *normalizer) space(kind byte, a, e int) {
	if n.pending == 0 {
		n.pendStart, n.pendEnd = a, e
		n.pending = kind
	} else if kind == '\n' {
		n.pending = '\n'
	}
}

// flush emits the pending collapsed whitespace before a visible byte.
// Leading whitespace is dropped.
func (n *normalizer) flush() {
	if n.pending != 0 {
		if len(n.main.b) > 0 {
			n.main.add(n.pending, n.pendStart, n.pendEnd)
		}
		n.pending = 0
	}
}

func (n *normalizer) rune(r rune, a, e int) {
	if r < utf8.RuneSelf {
		n.ascii(byte(r), a, e)
		return
	}
	prev := n.prevRune
	n.prevRune = r
	switch {
	case r == 0x85 || r == 0x2028 || r == 0x2029:
		n.space('\n', a, e)
		return
	case isSpaceLike(r):
		n.space(' ', a, e)
		return
	case 0xE0000 <= r && r <= 0xE007F:
		n.tag(r, prev, a, e)
		n.prevRune = prev // a flag's tags all follow the black flag
		if r == 0xE007F {
			n.prevRune = r
		}
		return
	case isDefaultIgnorable(r):
		if isBidiControl(r) {
			n.bidi = append(n.bidi, [2]int{a, e})
		}
		return
	}
	if n.fold == nil {
		n.fold = foldTable()
	}
	r, ok := foldBMP(n.fold, r)
	if !ok {
		return
	}
	n.flush()
	if r == 'ß' {
		n.main.add('s', a, e)
		n.main.add('s', a, e)
		return
	}
	n.main.addRune(r, a, e)
}

// tag records a Unicode tag character in the current tag run.
func (n *normalizer) tag(r, prev rune, a, e int) {
	k := len(n.tags) - 1
	if k < 0 || n.tags[k].end < a {
		flag := prev == 0x1F3F4
		n.tags = append(n.tags, tagRun{start: a, end: a, text: nil, flag: flag})
		k++
	}
	t := &n.tags[k]
	t.end = e
	if 0xE0020 <= r && r < 0xE007F {
		t.text = append(t.text, byte(r-0xE0000))
	}
}

// foldTable is foldRune of every rune of the Basic Multilingual Plane
// past ASCII, built the first time a text holds one: 0 for a rune to
// drop, noFold for one to fold with foldRune (a surrogate, U+FFFF, or a
// rune that would fold past the plane). foldRune looked up four tables
// and a decomposition for each rune of a text in another script: 7% of a
// check of the benign corpus.
var foldTable = sync.OnceValue(newFoldTable)

func newFoldTable() *[1 << 16]uint16 {
	t := new([1 << 16]uint16)
	for r := rune(utf8.RuneSelf); r < 1<<16; r++ {
		f, ok := foldRune(r)
		switch {
		case r == noFold || utf16.IsSurrogate(r) || f >= 1<<16 || f == noFold:
			t[r] = noFold
		case ok:
			t[r] = uint16(f)
		}
	}
	return t
}

const noFold = 0xFFFF

// foldBMP is foldRune, from t (foldTable) where the rune is in it.
func foldBMP(t *[1 << 16]uint16, r rune) (rune, bool) {
	if r < 1<<16 {
		if f := t[r]; f != noFold {
			return rune(f), f != 0
		}
	}
	return foldRune(r)
}

// foldRune applies case folding, confusable folding and combining-mark
// stripping to one non-ASCII rune. ok is false for a rune to drop (a
// combining mark).
func foldRune(r rune) (rune, bool) {
	switch r {
	case '‘', '’', '‛', 'ʼ', '′':
		return '\'', true
	case '“', '”', '„', '‟', '″':
		return '"', true
	case '‐', '‑', '‒', '–', '—', '―', '−', '⁃':
		return '-', true
	}
	if c, ok := scriptFold(r); ok {
		return c, c != 0
	}
	if c, ok := confusableUpper[r]; ok {
		return rune(c), true
	}
	r = unicode.ToLower(r)
	if r < utf8.RuneSelf {
		return r, true
	}
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return 0, false
	}
	var buf [utf8.UTFMax]byte
	sz := utf8.EncodeRune(buf[:], r)
	if d := norm.NFD.Properties(buf[:sz]).Decomposition(); len(d) > 0 {
		base, _ := utf8.DecodeRune(d)
		if base != r && !unicode.In(base, unicode.Mn, unicode.Me) {
			r = unicode.ToLower(base)
			if r < utf8.RuneSelf {
				return r, true
			}
		}
	}
	if c, ok := confusableLower[r]; ok {
		return rune(c), true
	}
	return r, true
}

// scriptFold folds the variants of other scripts that mean one thing, so
// that the grams of a text carry across its spellings: decimal digits of
// any script to ASCII (Arabic-Indic ٣, Devanagari ३, Bengali ৩, Thai ๓),
// the sentence and clause marks of Arabic, Devanagari and CJK to ASCII
// ones (؟ ، ؛ । 。 、 「」), the Arabic letters written one for the other
// (alef maqsura and ya, ta marbuta and ha, Persian kaf and ya), and the
// Arabic tatweel, a letter stretcher, dropped (c == 0). ok is false for a
// rune it leaves alone. Letters with a hamza or madda, Cyrillic ё and
// Turkish İ fold by their decomposition and case (foldRune).
func scriptFold(r rune) (c rune, ok bool) {
	if r < 0x0600 || r > 0x30FB {
		return 0, false
	}
	switch r {
	case 'ـ': // tatweel
		return 0, true
	case '؟':
		return '?', true
	case '،', '、':
		return ',', true
	case '؛':
		return ';', true
	case '।', '॥', '。', '۔':
		return '.', true
	case '「', '」', '『', '』':
		return '"', true
	case 'ى', 'ی', 'ي':
		return 'ي', true
	case 'ة':
		return 'ه', true
	case 'ک':
		return 'ك', true
	}
	for _, zero := range [...]rune{0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50} {
		if zero <= r && r <= zero+9 {
			return '0' + r - zero, true
		}
	}
	return 0, false
}

// derive builds the leet and compact views from the main view, in one
// pass: the leet view starts as a copy of the main view and takes the
// mapped bytes; the compact view takes the letters of the leet view. As in
// asciiRun, each byte is written at the compact view's end, which only
// advances for a letter, so word lengths cost no mispredicted branches.
func (n *normalizer) derive() {
	b := n.main.b
	n.leetOK = false
	n.leetAt = n.leetAt[:0]
	n.leet = append(n.leet[:0], b...)
	cv := &n.compact
	cv.start, cv.end = n.main.start, n.main.end
	// One spare byte: the write past the last letter.
	cb := slices.Grow(cv.b[:0], len(b)+1)[:len(b)+1]
	ci := slices.Grow(cv.idx[:0], len(b)+1)[:len(b)+1]
	m := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		k := deriveClass[c]
		if k > dLetter {
			if k == dMulti {
				size := 0
				m, size = n.deriveRune(cb, ci, m, i)
				i += size - 1
				continue
			}
			c, k = n.deriveLeet(i)
		}
		cb[m], ci[m] = c, int32(i)
		m += int(k)
	}
	cv.b, cv.idx = cb[:m], ci[:m]
}

// deriveLeet maps the leetMap byte b[i] of the main view in the leet view,
// if its neighbours make it leetspeak, and returns its leet byte and
// class.
func (n *normalizer) deriveLeet(i int) (byte, uint8) {
	b := n.main.b
	c := b[i]
	// Symbols only count inside a word, so "$5" and "hi!" stay. Digits
	// always map, but only one next to a letter ("1gn0re", not "2024")
	// makes the view worth scanning.
	digit := c >= '0' && c <= '9'
	if !digit && !(i > 0 && isAlnum(b[i-1]) && i+1 < len(b) && isAlnum(b[i+1])) {
		return c, dOther
	}
	if !digit || i > 0 && isLetter(b[i-1]) || i+1 < len(b) && isLetter(b[i+1]) {
		n.leetOK = true
		n.leetAt = append(n.leetAt, int32(i))
	}
	c = leetMap[c]
	n.leet[i] = c
	return c, dLetter
}

// deriveRune adds the rune at b[i] to the compact view if it is a letter,
// and returns the compact view's new length and the rune's size.
func (n *normalizer) deriveRune(cb []byte, ci []int32, m, i int) (int, int) {
	b := n.main.b
	r, size := utf8.DecodeRune(b[i:])
	if unicode.IsLetter(r) {
		for k := i; k < i+size; k++ {
			cb[m], ci[m] = b[k], int32(k)
			m++
		}
	}
	return m, size
}

// deriveClass classifies the main view's bytes for derive.
const (
	dOther  = 0
	dLetter = 1 // a-z: goes to the compact view
	dLeet   = 2 // in leetMap
	dMulti  = 3 // starts a multi-byte rune
)

var deriveClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z':
			t[c] = dLetter
		case leetMap[c] != 0:
			t[c] = dLeet
		case c >= utf8.RuneSelf:
			t[c] = dMulti
		}
	}
	return t
}()

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z'
}

var leetMap = [256]byte{
	'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b',
	'@': 'a', '$': 's', '!': 'i', '|': 'l', '+': 't',
}

// isSpaceLike reports runes that render as blank space: every Zs, and the
// blank-looking letters and symbols used to fake spaces.
func isSpaceLike(r rune) bool {
	switch r {
	case 0x1680, 0x2800, 0x3164, 0xFFA0, 0x115F, 0x1160:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// isDefaultIgnorable reports the Default_Ignorable_Code_Point set of
// Unicode's DerivedCoreProperties (the space-like fillers are handled
// before this).
func isDefaultIgnorable(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160,
		r == 0x17B4, r == 0x17B5, r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case 0x180B <= r && r <= 0x180F,
		0x200B <= r && r <= 0x200F,
		0x202A <= r && r <= 0x202E,
		0x2060 <= r && r <= 0x206F,
		0xFE00 <= r && r <= 0xFE0F,
		0xFFF0 <= r && r <= 0xFFF8,
		0x1BCA0 <= r && r <= 0x1BCA3,
		0x1D173 <= r && r <= 0x1D17A,
		0xE0000 <= r && r <= 0xE0FFF:
		return true
	}
	return false
}

// isBidiControl reports the embedding, override and isolate controls that
// reorder displayed text ("Trojan Source"); the plain marks LRM, RLM and
// ALM are left alone, as right-to-left writers use them.
func isBidiControl(r rune) bool {
	return 0x202A <= r && r <= 0x202E || 0x2066 <= r && r <= 0x2069
}

// confusableUpper maps capital letters of other scripts that look like a
// Latin capital to that Latin letter, in lower case. It applies before case
// folding, because the lower case forms no longer look alike (Cyrillic Н
// looks like H, but н does not look like h).
var confusableUpper = map[rune]byte{
	// Cyrillic
	'А': 'a', 'В': 'b', 'Е': 'e', 'Ѕ': 's', 'І': 'i', 'Ј': 'j', 'К': 'k', 'М': 'm',
	'Н': 'h', 'О': 'o', 'Р': 'p', 'С': 'c', 'Т': 't', 'У': 'y', 'Х': 'x', 'Ү': 'y',
	'Ԛ': 'q', 'Ԝ': 'w', 'Һ': 'h', 'Ӏ': 'i', 'Ԁ': 'd', 'Ԍ': 'g',
	// Greek
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm',
	'Ν': 'n', 'Ο': 'o', 'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x', 'Ϲ': 'c', 'Ϳ': 'j',
	// Armenian
	'Օ': 'o', 'Ս': 'u', 'Տ': 's', 'Լ': 'l', 'Ց': 'g', 'Զ': 'z',
	// Cherokee and Latin look-alikes NFKC keeps
	'Ꭺ': 'a', 'Ᏼ': 'b', 'Ꮯ': 'c', 'Ꭼ': 'e', 'Ꮋ': 'h', 'Ꮃ': 'w', 'Ꮪ': 's', 'Ꭲ': 't',
	'Ɪ': 'i', 'Ʋ': 'v',
}

// confusableLower maps lower-case letters of other scripts, and Latin
// variants NFKC leaves alone, to the Latin letter they look like.
var confusableLower = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'к': 'k', 'м': 'm',
	'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ү': 'y',
	'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ԁ': 'd', 'ɡ': 'g', 'ь': 'b', 'ԍ': 'g',
	'п': 'n', 'г': 'r', 'ѵ': 'v', 'ә': 'e', 'ӡ': 'z',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k',
	'μ': 'u', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'σ': 'o', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'ω': 'w', 'ϲ': 'c', 'ϳ': 'j', 'ς': 'c',
	// Armenian
	'ա': 'w', 'բ': 'p', 'գ': 'q', 'զ': 'q', 'հ': 'h', 'ո': 'n', 'ս': 'u', 'ց': 'g',
	'ք': 'p', 'օ': 'o', 'յ': 'j', 'ւ': 'l', 'ռ': 'n',
	// Latin letters NFKC keeps
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɩ': 'i', 'ɪ': 'i', 'ʏ': 'y', 'ʋ': 'v', 'ɒ': 'a',
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ғ': 'f', 'ɢ': 'g', 'ʜ': 'h',
	'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r',
	'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z', 'ſ': 's', 'ꞵ': 'b',
	'ꮪ': 's', 'ꭺ': 'a', 'ꭼ': 'e', 'ꮃ': 'w', 'ꮋ': 'h', 'ꭲ': 't',
}

// foldPattern folds the non-ASCII runes of a regular expression or keyword
// as the main view folds text, so that patterns in other scripts match
// their folded text. ASCII is left alone: it holds the regexp syntax, and
// patterns are written in lower case.
func foldPattern(p string) string {
	out := make([]byte, 0, len(p))
	for _, r := range p {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
			continue
		}
		if r == 'ß' {
			out = append(out, "ss"...)
			continue
		}
		if f, ok := foldRune(r); ok {
			out = utf8.AppendRune(out, f)
		}
	}
	return string(out)
}

// Normalized is the text the injection detectors match, exposed for custom
// detectors and tests. Text is the main view: NFKC, space look-alikes made
// spaces, default-ignorable code points removed, case folded, confusable
// letters folded to Latin, combining marks removed, whitespace runs
// collapsed to one space (or one newline when they held a line break).
type Normalized struct {
	// Text is the main view.
	Text string
	// Compact holds only the letters of Text after leetspeak folding, for
	// spaced and dotted obfuscation such as "i.g.n.o.r.e".
	Compact string
	// Tags holds the ASCII decoded from Unicode tag characters, "" if
	// there are none.
	Tags string

	main    view
	compact compactView
}

// Normalize returns the normalized views of s. Detectors inside the guard
// use pooled buffers; Normalize allocates its result.
func Normalize(s string) *Normalized {
	var n normalizer
	n.normalize(s)
	out := &Normalized{
		Text:    string(n.main.b),
		Compact: string(n.compact.b),
		main:    view{start: n.main.start, end: n.main.end},
		compact: compactView{idx: n.compact.idx, start: n.main.start, end: n.main.end},
	}
	for _, t := range n.tags {
		out.Tags += string(t.text)
	}
	return out
}

// Span maps the byte span [i, j) of Text back to the span of the original
// string it came from. It panics if the span is outside Text.
func (n *Normalized) Span(i, j int) (start, end int) {
	return n.main.orig(i, j)
}

// CompactSpan is Span for Compact.
func (n *Normalized) CompactSpan(i, j int) (start, end int) {
	return n.compact.orig(i, j)
}
