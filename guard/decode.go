package guard

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Candidate runs (encodings, spellings and hidden-text carriers, see
// findEncodedRuns) are decoded and, when they decode to text, scanned
// again. Nesting stops at maxDecodeDepth and the decoded bytes of one call
// at maxDecodedBytes, so a crafted input cannot make the guard slow; every
// decoded run costs at least minDecodeCost of that budget, which bounds the
// number of payload scans too.
const (
	minEncodedRun   = 16
	maxDecodeDepth  = 2
	maxDecodedBytes = 64 << 10
	minDecodeCost   = 256
)

// encodedRun is a candidate run in the original text [start, end), and
// the scheme it may be written in.
type encodedRun struct {
	start, end int
	via        string
}

// findEncodedRuns calls fn for every candidate run: base64, base32, hex
// and percent-encoded runs of minEncodedRun characters or more, Adobe
// ascii85 blocks and uuencoded blocks; the runs of the word gate (rot13,
// atbash, reversed, nato, bare ascii85: see textGate), which looks at the
// words this walk passes over anyway; and the Morse, braille and carrier
// runs of findSymbolRuns.
func findEncodedRuns(text string, fn func(encodedRun)) {
	pct := strings.IndexByte(text, '%') >= 0 // a percent run needs one
	var g textGate
	for i := 0; i < len(text); {
		c := text[i]
		if runByte[c]&rB64 == 0 && c != '%' {
			if c == ' ' { // the commonest byte, so the token's end is inline
				if i-g.tStart >= 20 {
					g.endToken(text, i, fn)
				}
				g.tStart, g.tPunct, g.tBad = i+1, 0, false
			} else {
				g.other(text, i, fn)
			}
			i++
			continue
		}
		if i > 0 && runByte[text[i-1]]&rB64 != 0 {
			i++
			continue
		}
		if pct {
			// Percent runs: URL-ish characters with at least 3 escapes.
			e, esc := i, 0
			for e < len(text) && (isURLChar(text[e]) || text[e] == '%') {
				if text[e] == '%' {
					if e+2 < len(text) && isHex(text[e+1]) && isHex(text[e+2]) {
						esc++
						e += 3
						continue
					}
					break
				}
				e++
			}
			if esc >= 3 && e-i >= minEncodedRun {
				fn(encodedRun{start: i, end: e, via: "percent"})
				i = e
				continue
			}
		}
		e, all := i, uint8(rB64|rHex)
		for e < len(text) {
			k := runByte[text[e]]
			if k&rB64 == 0 {
				break
			}
			all &= k
			e++
		}
		data := e
		for e < len(text) && text[e] == '=' && e-i < 4096 {
			e++
		}
		if e-i >= minEncodedRun {
			switch {
			case all&rHex != 0 && (e-i)%2 == 0:
				fn(encodedRun{start: i, end: e, via: "hex"})
			case isBase32Run(text[i:data]):
				fn(encodedRun{start: i, end: e, via: "base32"})
			default:
				fn(encodedRun{start: i, end: e, via: "base64"})
			}
		}
		// The word gate: one lookup per word of prose; plain English
		// words, the commonest hits, are counted inline.
		var m uint8
		if n := data - i; n >= 2 && n <= 12 && (i == 0 || proseDelim[text[i-1]]) && (data == len(text) || proseDelim[text[data]]) {
			m = wordTable[wordKey(text, i, data)]
		}
		if m == wPlain && g.nWords == 0 {
			g.cnt[0]++
		} else if (m != 0 || g.nWords != 0) && data > i {
			g.word(text, i, data, m, fn)
		}
		if e == i {
			e++
		}
		i = e
	}
	g.finish(text, fn)
	findASCII85Blocks(text, fn)
	findUUBlocks(text, fn)
	findSymbolRuns(text, fn)
}

// findASCII85Blocks calls fn for every Adobe "<~ ... ~>" block.
func findASCII85Blocks(text string, fn func(encodedRun)) {
	for i := 0; ; {
		s := strings.Index(text[i:], "<~")
		if s < 0 {
			return
		}
		s += i
		e := strings.Index(text[s+2:], "~>")
		if e < 0 {
			return // no later block can close either
		}
		e += s + 4
		if e-s-4 >= minEncodedRun/2 {
			fn(encodedRun{start: s, end: e, via: "ascii85"})
		}
		i = e
	}
}

// findUUBlocks calls fn for every uuencoded block: a "begin NNN name" line
// and the encoded lines after it, or bare encoded lines starting with a
// full line ('M' and 60 characters, 45 bytes).
func findUUBlocks(text string, fn func(encodedRun)) {
	for i := 0; i < len(text); {
		line, next := nextLine(text, i)
		begin := isUUBegin(line)
		if !begin && (len(line) != 61 || line[0] != 'M') {
			i = next
			continue
		}
		e, lines := next, 0
		if !begin {
			e = i
		}
		for e < len(text) {
			l, n := nextLine(text, e)
			if l == "end" {
				e = n
				break
			}
			k, ok := uuLine(l)
			if !ok || lines == 0 && !begin && k != 45 {
				break
			}
			e = n
			if k == 0 { // the zero-length last line, then "end"
				if l, n := nextLine(text, e); l == "end" {
					e = n
				}
				break
			}
			lines++
		}
		if lines > 0 {
			fn(encodedRun{start: i, end: e, via: "uuencode"})
			i = e
			continue
		}
		i = next
	}
}

func isB64Char(c byte) bool { return runByte[c]&rB64 != 0 }

// runByte classifies bytes for findEncodedRuns: the base64 alphabets
// (standard and URL) and hex digits.
const (
	rB64 = 1 << iota
	rHex
)

var runByte = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if isAlnum(b) || b == '+' || b == '/' || b == '-' || b == '_' {
			t[c] |= rB64
		}
		if isDigit(b) || 'a' <= b|0x20 && b|0x20 <= 'f' {
			t[c] |= rHex
		}
	}
	return t
}()

func isURLChar(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+'
}
func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// decodeRun decodes r into dst and reports whether the result is text
// worth scanning: valid UTF-8, mostly printable, with letters.
func decodeRun(dst []byte, text string, r encodedRun) ([]byte, bool) {
	src := text[r.start:r.end]
	var err error
	switch r.via {
	case "hex":
		if n := hex.DecodedLen(len(src)); cap(dst) < n {
			dst = make([]byte, n)
		} else {
			dst = dst[:n]
		}
		_, err = hex.Decode(dst, []byte(src))
	case "percent":
		dst = dst[:0]
		for i := 0; i < len(src); i++ {
			switch c := src[i]; {
			case c == '%' && i+2 < len(src):
				v, _ := hex.DecodeString(src[i+1 : i+3])
				dst = append(dst, v...)
				i += 2
			case c == '+':
				dst = append(dst, ' ')
			default:
				dst = append(dst, c)
			}
		}
	case "base32":
		dst = decodeBase32(dst[:0], src)
	case "ascii85":
		var ok bool
		if dst, ok = decodeASCII85(dst[:0], src); !ok {
			return dst, false
		}
	case "uuencode":
		dst = decodeUU(dst[:0], src)
	case "morse":
		var groups, bad int
		dst, groups, bad = decodeMorse(dst[:0], src)
		if bad*5 > groups {
			return dst, false
		}
	case "braille":
		var cells, bad int
		dst, cells, bad = decodeBraille(dst[:0], src)
		if bad*5 > cells {
			return dst, false
		}
	case "nato":
		dst = decodeNATO(dst[:0], src)
	case "rot13":
		dst = decodeROT13(dst[:0], src)
	case "atbash":
		dst = decodeAtbash(dst[:0], src)
	case "reversed":
		dst = decodeReversed(dst[:0], src)
	case "variation_selectors":
		dst = decodeVariationSelectors(dst[:0], src)
	case "invisible_operators":
		return decodeInvisibleOperators(dst[:0], src)
	default:
		dst, err = decodeBase64(dst, src)
	}
	if err != nil {
		return dst, false
	}
	return dst, isText(dst)
}

// isText reports decoded bytes worth scanning: at least 8 bytes of valid
// UTF-8, 95% printable, half letters.
func isText(b []byte) bool {
	if len(b) < 8 || !utf8.Valid(b) {
		return false
	}
	printable, letters, n := 0, 0, 0
	for _, r := range string(b) {
		n++
		if r == '\n' || r == '\r' || r == '\t' || r >= ' ' && r != 0x7F {
			printable++
		}
		if isLetter(byte(r)) || r >= 0x80 {
			letters++
		}
	}
	return printable*100 >= n*95 && letters*2 >= n
}

func decodeBase64(dst []byte, src string) ([]byte, error) {
	enc := base64.StdEncoding
	for i := 0; i < len(src); i++ {
		if src[i] == '-' || src[i] == '_' {
			enc = base64.URLEncoding
			break
		}
	}
	trimmed := src
	for len(trimmed) > 0 && trimmed[len(trimmed)-1] == '=' {
		trimmed = trimmed[:len(trimmed)-1]
	}
	raw := enc.WithPadding(base64.NoPadding)
	n := raw.DecodedLen(len(trimmed))
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	m, err := raw.Decode(dst, []byte(trimmed))
	return dst[:m], err
}
