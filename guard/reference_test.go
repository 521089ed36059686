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

// newPIIKeywordMatcher is the automaton refPIIScan finds the keywords with.
func newPIIKeywordMatcher() *matcher {
	kws := make([]string, len(piiKeywords))
	for i, k := range piiKeywords {
		kws[i] = k.kw
	}
	return newMatcher(kws, true, nil)
}

// refPIIScan is the scan that runs the keyword automaton over the whole
// text (twice when a secret keyword occurs) and walks every byte for
// tokens and numbers. It appends the PII and credential findings in text.
func refPIIScan(p *piiScanner, kw *matcher, text string, out []rawFinding) []rawFinding {
	base := len(out)
	// Specific formats first, then generic `password = value`
	// assignments, which must not swallow a token already identified.
	next, secrets := 0, false // keyword hits before next are inside a reported match
	kw.eachString(text, func(id, start int) {
		kind := piiKeywords[id].kind
		if kind == kwSecret {
			secrets = true
			return
		}
		if start < next {
			return
		}
		if f, ok := p.keyword(text, kind, start); ok {
			out = append(out, f)
			next = f.end
		}
	})
	if secrets {
		next = 0
		kw.eachString(text, func(id, start int) {
			if piiKeywords[id].kind != kwSecret || start < next {
				return
			}
			if f, ok := secretAssignment(text, start); ok && !overlaps(out, base, f.start, f.end) {
				out = append(out, f)
				next = f.end
			}
		})
	}
	out = refScanTokens(text, out, base)
	out = refScanNumbers(text, out, base)
	return out
}

// refScanTokens finds the IDs that start with letters: IBAN, EU VAT numbers,
// Spanish NIF/NIE and Italian codici fiscali.
func refScanTokens(text string, out []rawFinding, base int) []rawFinding {
	for i := 0; i < len(text); {
		c := text[i]
		if !isAlnum(c) {
			i++
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			i++
			continue
		}
		e := i + span(text, i, isAlnum)
		if f, ok := tokenAt(text, i, e); ok && !overlaps(out, base, f.start, f.end) {
			out = append(out, f)
			i = f.end
			continue
		}
		i = e
	}
	return out
}

// refScanNumbers finds digit runs (with single ' ', '-', '.' or '/'
// separators, an optional leading '+' and a parenthesized area code) and
// classifies them: card, SSN, NHS, PESEL, Aadhaar, phone, IPv4.
func refScanNumbers(text string, out []rawFinding, base int) []rawFinding {
	var digits [24]byte
	var groups [12]int8
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !isDigit(c) && c != '+' && c != '(' {
			continue
		}
		if i > 0 && (isWordByte(text[i-1]) || text[i-1] == '.' || text[i-1] == '-' || text[i-1] == '/' || text[i-1] == '+') {
			continue
		}
		plus := c == '+'
		k := i
		if c == '+' || c == '(' {
			if k+1 >= len(text) || !isDigit(text[k+1]) {
				continue
			}
			k++
		}
		nd, ng := 0, 0
		var sep byte // the first separator seen; 0 if none
		mixed, tooLong, paren := false, false, c == '('
		glen := 0
		for k < len(text) {
			d := text[k]
			if isDigit(d) {
				if nd == len(digits) {
					tooLong = true
					break
				}
				digits[nd] = d
				nd++
				glen++
				k++
				continue
			}
			if k+1 < len(text) && (isDigit(text[k+1]) || d == ')' && text[k+1] == ' ' && k+2 < len(text) && isDigit(text[k+2])) &&
				(d == ' ' || d == '-' || d == '.' || d == '/' || d == ')' && paren) {
				if ng < len(groups) {
					groups[ng] = int8(glen)
				}
				ng++
				glen = 0
				if d == ')' {
					paren = false
					k++
					if text[k] == ' ' {
						k++
					}
					continue
				}
				if sep == 0 {
					sep = d
				} else if sep != d {
					mixed = true
				}
				k++
				continue
			}
			break
		}
		if ng < len(groups) {
			groups[ng] = int8(glen)
		}
		ng++
		if tooLong || nd < 4 || isWordAt(text, k) || (k < len(text) && text[k] == '.' && k+1 < len(text) && isDigit(text[k+1])) {
			i = k
			continue
		}
		if f, ok := classifyNumber(text, i, k, digits[:nd], groups[:min(ng, len(groups))], sep, mixed, plus); ok && !overlaps(out, base, f.start, f.end) {
			out = append(out, f)
		}
		i = k
	}
	return out
}
