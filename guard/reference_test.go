package guard

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The straightforward implementations the fast paths replaced, kept as
// references: agree_test.go checks that the fast ones give the same
// views, runs and findings on the corpora and under fuzzing.

// refNormalizer is the byte-at-a-time normalizer: every byte goes through
// ascii or rune, and every view byte is appended with its own start and
// end.
type refNormalizer struct {
	main    view
	leet    []byte
	compact view
	tags    []tagRun
	bidi    [][2]int
	leetOK  bool
	it      norm.Iter

	pending   byte
	pendStart int
	pendEnd   int
	prevRune  rune
}

func refAdd(v *view, c byte, a, e int) {
	v.b = append(v.b, c)
	v.start = append(v.start, int32(a))
	v.end = append(v.end, int32(e))
}

func refAddRune(v *view, r rune, a, e int) {
	if r < utf8.RuneSelf {
		refAdd(v, byte(r), a, e)
		return
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		refAdd(v, c, a, e)
	}
}

func (n *refNormalizer) normalize(s string) {
	n.main.b, n.main.start, n.main.end = n.main.b[:0], n.main.start[:0], n.main.end[:0]
	n.compact.b, n.compact.start, n.compact.end = n.compact.b[:0], n.compact.start[:0], n.compact.end[:0]
	n.leet = n.leet[:0]
	n.tags = n.tags[:0]
	n.bidi = n.bidi[:0]
	n.pending, n.prevRune = 0, 0
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			n.ascii(s[i], i, i+1)
		}
	} else {
		n.it.InitString(norm.NFKC, s)
		for !n.it.Done() {
			a := n.it.Pos()
			seg := n.it.Next()
			e := n.it.Pos()
			for len(seg) > 0 {
				r, size := utf8.DecodeRune(seg)
				seg = seg[size:]
				n.rune(r, a, e)
			}
		}
	}
	n.derive()
}

func (n *refNormalizer) ascii(c byte, a, e int) {
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
		refAdd(&n.main, c, a, e)
	}
	n.prevRune = rune(c)
}

func (n *refNormalizer) space(kind byte, a, e int) {
	if n.pending == 0 {
		n.pendStart, n.pendEnd = a, e
		n.pending = kind
	} else if kind == '\n' {
		n.pending = '\n'
	}
}

func (n *refNormalizer) flush() {
	if n.pending != 0 {
		if len(n.main.b) > 0 {
			refAdd(&n.main, n.pending, n.pendStart, n.pendEnd)
		}
		n.pending = 0
	}
}

func (n *refNormalizer) rune(r rune, a, e int) {
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
		n.prevRune = prev
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
	r, ok := foldRune(r)
	if !ok {
		return
	}
	n.flush()
	if r == 'ß' {
		refAdd(&n.main, 's', a, e)
		refAdd(&n.main, 's', a, e)
		return
	}
	refAddRune(&n.main, r, a, e)
}

func (n *refNormalizer) tag(r, prev rune, a, e int) {
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

func (n *refNormalizer) derive() {
	b := n.main.b
	n.leetOK = false
	for i, c := range b {
		l := c
		if m := leetMap[c]; m != 0 {
			digit := c >= '0' && c <= '9'
			if digit || (i > 0 && isAlnum(b[i-1])) && i+1 < len(b) && isAlnum(b[i+1]) {
				l = m
				if !digit || i > 0 && isLetter(b[i-1]) || i+1 < len(b) && isLetter(b[i+1]) {
					n.leetOK = true
				}
			}
		}
		n.leet = append(n.leet, l)
	}
	for i := 0; i < len(n.leet); {
		c := n.leet[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				refAdd(&n.compact, c, int(n.main.start[i]), int(n.main.end[i]))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(n.leet[i:])
		if unicode.IsLetter(r) {
			for k := i; k < i+size; k++ {
				refAdd(&n.compact, n.leet[k], int(n.main.start[k]), int(n.main.end[k]))
			}
		}
		i += size
	}
}
