package guard

import (
	"encoding/ascii85"
	"strings"
	"unicode/utf8"
)

// The decoders of this file turn one candidate run into text. Each is
// linear in its source, appends to dst (the pooled decode buffer) and
// writes at most maxDecodedBytes; whether the result is worth scanning is
// decided by isText in decodeRun. The finders are in decode.go,
// spellings.go and carriers.go.

// decodeBase32 decodes the RFC 4648 standard alphabet, in either case,
// ignoring padding and leftover bits: a truncated run still yields its
// whole bytes.
func decodeBase32(dst []byte, src string) []byte {
	var acc uint32
	bits := 0
	for i := 0; i < len(src) && len(dst) < maxDecodedBytes; i++ {
		v := b32val[src[i]]
		if v == 0xFF {
			break // '=' or anything else ends the data
		}
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			dst = append(dst, byte(acc>>bits))
		}
	}
	return dst
}

var b32val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" {
		t[c] = byte(i)
		if c >= 'A' {
			t[c|0x20] = byte(i)
		}
	}
	return t
}()

// isBase32Run reports whether a run (without its '=' padding) uses only the
// base32 alphabet in one case: mixed case is base64.
func isBase32Run(s string) bool {
	upper, lower := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '2' <= c && c <= '7':
		default:
			return false
		}
	}
	return upper != lower
}

// decodeASCII85 decodes an Adobe "<~ ... ~>" block or a bare run with
// encoding/ascii85. The source is copied behind the output area of dst
// (ascii85 needs a []byte) and cut so that at most maxDecodedBytes come
// out: one 'z' stands for four bytes.
func decodeASCII85(dst []byte, src string) ([]byte, bool) {
	src = strings.TrimPrefix(src, "<~")
	src = strings.TrimSuffix(src, "~>")
	out, chars := 0, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == 'z' && chars%5 == 0:
			out += 4
		case '!' <= c && c <= 'u':
			chars++
			if chars%5 == 0 {
				out += 4
			}
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
		default:
			return dst, false
		}
		if out >= maxDecodedBytes {
			src = src[:i+1]
			break
		}
	}
	n := len(src)
	need := out + 4 + n
	if cap(dst) < need {
		dst = make([]byte, need)
	}
	dst = dst[:need]
	in := dst[need-n:]
	copy(in, src)
	m, _, err := ascii85.Decode(dst[:need-n], in, true)
	if err != nil {
		return dst[:0], false
	}
	return dst[:m], true
}

// uuLine reports whether line is an encoded uuencode line and how many
// bytes it holds. The length character is followed by 4 characters per 3
// bytes; one or two extra characters (a checksum some encoders add) are
// allowed.
func uuLine(line string) (n int, ok bool) {
	if line == "" {
		return 0, false
	}
	for i := 0; i < len(line); i++ {
		if line[i] < 0x20 || line[i] > 0x60 {
			return 0, false
		}
	}
	n = int(line[0]-0x20) & 0x3F
	need := (n + 2) / 3 * 4
	return n, len(line)-1 >= need && len(line)-1 <= need+2
}

// isUUBegin reports a "begin NNN name" header line.
func isUUBegin(line string) bool {
	rest, ok := strings.CutPrefix(line, "begin ")
	if !ok {
		return false
	}
	d := 0
	for d < len(rest) && '0' <= rest[d] && rest[d] <= '7' {
		d++
	}
	return 3 <= d && d <= 4 && len(rest) > d+1 && rest[d] == ' '
}

// nextLine returns the line of s starting at i without its line break, and
// the start of the next line.
func nextLine(s string, i int) (line string, next int) {
	e := strings.IndexByte(s[i:], '\n')
	if e < 0 {
		e, next = len(s), len(s)
	} else {
		e += i
		next = e + 1
	}
	return strings.TrimSuffix(s[i:e], "\r"), next
}

// decodeUU decodes uuencoded lines, after an optional begin line, up to a
// zero-length line, an "end" line or a line that is not uuencoded.
func decodeUU(dst []byte, src string) []byte {
	for i := 0; i < len(src) && len(dst) < maxDecodedBytes; {
		line, next := nextLine(src, i)
		i = next
		if isUUBegin(line) {
			continue
		}
		n, ok := uuLine(line)
		if !ok || n == 0 {
			break
		}
		for k := 1; k+4 <= len(line) && n > 0; k += 4 {
			v := uint32(line[k]-0x20)&0x3F<<18 | uint32(line[k+1]-0x20)&0x3F<<12 |
				uint32(line[k+2]-0x20)&0x3F<<6 | uint32(line[k+3]-0x20)&0x3F
			for _, b := range [3]byte{byte(v >> 16), byte(v >> 8), byte(v)} {
				if n > 0 {
					dst = append(dst, b)
					n--
				}
			}
		}
	}
	return dst
}

// Morse. A letter's code is indexed by 1<<len | bits, a dash being 1.
var morseTable = func() (t [256]byte) {
	codes := map[byte]string{
		'a': ".-", 'b': "-...", 'c': "-.-.", 'd': "-..", 'e': ".", 'f': "..-.", 'g': "--.", 'h': "....",
		'i': "..", 'j': ".---", 'k': "-.-", 'l': ".-..", 'm': "--", 'n': "-.", 'o': "---", 'p': ".--.",
		'q': "--.-", 'r': ".-.", 's': "...", 't': "-", 'u': "..-", 'v': "...-", 'w': ".--", 'x': "-..-",
		'y': "-.--", 'z': "--..", '0': "-----", '1': ".----", '2': "..---", '3': "...--", '4': "....-",
		'5': ".....", '6': "-....", '7': "--...", '8': "---..", '9': "----.", '.': ".-.-.-", ',': "--..--",
		'?': "..--..", '\'': ".----.", '!': "-.-.--", ':': "---...", ';': "-.-.-.", '=': "-...-",
		'+': ".-.-.", '"': ".-..-.", '@': ".--.-.", '(': "-.--.", ')': "-.--.-", '&': ".-...", '-': "-....-",
	}
	for c, code := range codes {
		k := 1
		for i := 0; i < len(code); i++ {
			k <<= 1
			if code[i] == '-' {
				k |= 1
			}
		}
		t[k] = c
	}
	return t
}()

// morseSymbol reports whether s[i:] starts with a Morse dot ('.', '·') or
// dash ('-', '_', '–', '−'), and its size.
func morseSymbol(s string, i int) (size int, dash, ok bool) {
	switch s[i] {
	case '.':
		return 1, false, true
	case '-', '_':
		return 1, true, true
	case 0xC2: // U+00B7 ·
		if i+1 < len(s) && s[i+1] == 0xB7 {
			return 2, false, true
		}
	case 0xE2: // U+2013 –, U+2212 −
		if i+2 < len(s) && (s[i+1] == 0x80 && s[i+2] == 0x93 || s[i+1] == 0x88 && s[i+2] == 0x92) {
			return 3, true, true
		}
	}
	return 0, false, false
}

// morseSpace reports the bytes that separate Morse letters; '/' and '|'
// separate words.
func morseSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' || c == '|'
}

// decodeMorse decodes a Morse run: letters apart by spaces, words by '/'
// or '|'. bad counts the groups that are not a code.
func decodeMorse(dst []byte, src string) (out []byte, groups, bad int) {
	k, n := 1, 0 // the current group's index and length
	flush := func() {
		if n == 0 {
			return
		}
		groups++
		c := byte(0)
		if n <= 7 {
			c = morseTable[k]
		}
		if c == 0 {
			bad++
			c = '?'
		}
		dst = append(dst, c)
		k, n = 1, 0
	}
	for i := 0; i < len(src) && len(dst) < maxDecodedBytes; {
		if size, dash, ok := morseSymbol(src, i); ok {
			n++
			if n <= 7 {
				k <<= 1
				if dash {
					k |= 1
				}
			}
			i += size
			continue
		}
		flush()
		if c := src[i]; (c == '/' || c == '|') && len(dst) > 0 && dst[len(dst)-1] != ' ' {
			dst = append(dst, ' ')
		}
		i++
	}
	flush()
	return dst, groups, bad
}

// Braille, Grade 1 English: a cell's dots 1-8 are bits 0-7 of its offset
// from U+2800.
const (
	brailleCapital = 0x20 // dot 6
	brailleNumber  = 0x3C // dots 3456
)

var brailleTable = func() (t [256]byte) {
	letters := [26]byte{0x01, 0x03, 0x09, 0x19, 0x11, 0x0B, 0x1B, 0x13, 0x0A, 0x1A, // a-j
		0x05, 0x07, 0x0D, 0x1D, 0x15, 0x0F, 0x1F, 0x17, 0x0E, 0x1E, // k-t
		0x25, 0x27, 0x3A, 0x2D, 0x3D, 0x35} // u v w x y z
	for i, d := range letters {
		t[d] = 'a' + byte(i)
	}
	for c, d := range map[byte]byte{',': 0x02, ';': 0x06, ':': 0x12, '.': 0x32, '!': 0x16, '?': 0x26, '\'': 0x04, '-': 0x24} {
		t[d] = c
	}
	t[0] = ' '
	return t
}()

// brailleCell reports whether s[i:] starts with a braille pattern
// (U+2800-U+28FF is E2 A0-A3 xx in UTF-8) and returns its dots.
func brailleCell(s string, i int) (byte, bool) {
	if s[i] != 0xE2 || i+2 >= len(s) || s[i+1] < 0xA0 || s[i+1] > 0xA3 {
		return 0, false
	}
	return (s[i+1]-0xA0)<<6 | s[i+2]&0x3F, true
}

// decodeBraille decodes a braille run. The capital sign is dropped (the
// scan folds case anyway); the number sign makes a-j digits up to the next
// space. cells and bad count the cells and those that are not Grade 1
// letters or punctuation.
func decodeBraille(dst []byte, src string) (out []byte, cells, bad int) {
	num := false
	for i := 0; i < len(src) && len(dst) < maxDecodedBytes; {
		d, ok := brailleCell(src, i)
		if !ok {
			if c := src[i]; c == ' ' || c == '\n' || c == '\t' {
				num = false
				dst = append(dst, ' ')
			}
			i++
			continue
		}
		i += 3
		switch c := brailleTable[d]; {
		case d == 0: // the blank cell
			num = false
			dst = append(dst, ' ')
			continue
		case d == brailleNumber:
			num = true
		case d == brailleCapital:
		case c == 0:
			bad++
		case num && 'a' <= c && c <= 'j':
			dst = append(dst, "1234567890"[c-'a'])
		default:
			dst = append(dst, c)
		}
		cells++
	}
	return dst, cells, bad
}

// natoWords lists the NATO spelling alphabet by first letter, with the
// common variants; "space" and "stop" spell a space and a full stop.
// Words are runs of base64 characters in findEncodedRuns, so "x-ray" is
// one word.
var natoWords = [26][]string{
	{"alfa", "alpha"}, {"bravo"}, {"charlie"}, {"delta"}, {"echo"}, {"foxtrot"}, {"golf"}, {"hotel"},
	{"india"}, {"juliet", "juliett"}, {"kilo"}, {"lima"}, {"mike"}, {"november"}, {"oscar"}, {"papa"},
	{"quebec"}, {"romeo"}, {"sierra", "space", "stop"}, {"tango"}, {"uniform"}, {"victor"},
	{"whiskey", "whisky"}, {"xray", "x-ray"}, {"yankee"}, {"zulu"},
}

// natoLetter returns what a word spells, in any case, or 0.
func natoLetter(w string) byte {
	if len(w) < 4 || len(w) > 8 {
		return 0
	}
	c := w[0] | 0x20
	if c < 'a' || c > 'z' {
		return 0
	}
	for _, n := range natoWords[c-'a'] {
		if strings.EqualFold(w, n) {
			switch n {
			case "space":
				return ' '
			case "stop":
				return '.'
			}
			return n[0]
		}
	}
	return 0
}

// decodeNATO decodes a NATO run, split into words as findEncodedRuns
// splits it; "/", "|" and line breaks between words are spaces too.
func decodeNATO(dst []byte, src string) []byte {
	space := func() {
		if len(dst) > 0 && dst[len(dst)-1] != ' ' {
			dst = append(dst, ' ')
		}
	}
	for i := 0; i < len(src) && len(dst) < maxDecodedBytes; {
		if !isB64Char(src[i]) {
			if c := src[i]; c == '|' || c == '\n' {
				space()
			}
			i++
			continue
		}
		j := i + 1
		for j < len(src) && isB64Char(src[j]) {
			j++
		}
		switch c := natoLetter(src[i:j]); {
		case src[i:j] == "/" || c == ' ':
			space()
		case c != 0:
			dst = append(dst, c)
		}
		i = j
	}
	return dst
}

// decodeROT13 and decodeAtbash keep case and leave other bytes alone.
func decodeROT13(dst []byte, src string) []byte {
	for i := 0; i < min(len(src), maxDecodedBytes); i++ {
		c := src[i]
		if l := c | 0x20; 'a' <= l && l <= 'z' {
			c = c&^0x1F + (c&0x1F+12)%26 + 1 // letters are 1-26 in the low bits
		}
		dst = append(dst, c)
	}
	return dst
}

func decodeAtbash(dst []byte, src string) []byte {
	for i := 0; i < min(len(src), maxDecodedBytes); i++ {
		c := src[i]
		if l := c | 0x20; 'a' <= l && l <= 'z' {
			c = c&^0x1F + 27 - c&0x1F
		}
		dst = append(dst, c)
	}
	return dst
}

// decodeReversed writes the run reversed rune by rune, a line break, and
// the run with each word reversed in place: "tpmorp eht" and "eht tpmorp"
// both read "the prompt" in one of them.
func decodeReversed(dst []byte, src string) []byte {
	src = src[:min(len(src), maxDecodedBytes/2)]
	dst = appendReversed(dst, src)
	dst = append(dst, '\n')
	for i := 0; i < len(src); {
		j := i
		for j < len(src) && src[j] != ' ' && src[j] != '\n' {
			j++
		}
		dst = appendReversed(dst, src[i:j])
		if j < len(src) {
			dst = append(dst, src[j])
			j++
		}
		i = j
	}
	return dst
}

func appendReversed(dst []byte, src string) []byte {
	for e := len(src); e > 0; {
		_, size := utf8.DecodeLastRuneInString(src[:e])
		dst = append(dst, src[e-size:e]...)
		e -= size
	}
	return dst
}
