package blocks

import "unicode/utf8"

const hex = "0123456789abcdef"

// appendString appends s as a JSON string escaped exactly as encoding/json
// does with HTML escaping off: invalid UTF-8 becomes \ufffd, control
// characters and U+2028/U+2029 are escaped.
func appendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune decodes the first rune of s. Only a rune's worth is converted,
// so a []byte argument does not allocate.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	n := min(len(s), utf8.UTFMax)
	return utf8.DecodeRuneInString(string(s[:n]))
}

// maxDataDepth bounds the nesting of a Data value. It sits well below
// encoding/json's limit (10000) so that a block carrying such a value, even
// inside a larger stored document, still decodes.
const maxDataDepth = 1000

// appendData appends raw, which must be exactly one JSON value (surrounding
// whitespace allowed), in canonical form: insignificant whitespace removed
// (so the value cannot break an NDJSON line) and invalid UTF-8 inside
// strings replaced with \ufffd. Everything else is copied byte for byte.
// If raw is not valid it returns dst unchanged and false. Canonical input is
// a fixed point: appendData of its own output yields the same bytes.
func appendData(dst, raw []byte) ([]byte, bool) {
	orig := len(dst)
	var isObj [maxDataDepth/64 + 1]uint64 // bit d: container at depth d is an object
	depth := 0
	const (
		wantValue  = iota // a value must come next
		wantKey           // an object key must come next
		afterValue        // a value just ended
	)
	state := wantValue
	i := skipSpace(raw, 0)
	for {
		if i >= len(raw) {
			if state == afterValue && depth == 0 {
				return dst, true
			}
			return dst[:orig], false
		}
		c := raw[i]
		switch state {
		case wantValue:
			switch {
			case c == '{' || c == '[':
				if depth == maxDataDepth {
					return dst[:orig], false
				}
				if c == '{' {
					isObj[depth/64] |= 1 << (depth % 64)
				} else {
					isObj[depth/64] &^= 1 << (depth % 64)
				}
				depth++
				dst = append(dst, c)
				i = skipSpace(raw, i+1)
				if i < len(raw) && raw[i] == c+2 { // '{'+2 == '}', '['+2 == ']'
					dst = append(dst, raw[i])
					i++
					depth--
					state = afterValue
				} else if c == '{' {
					state = wantKey
				}
				continue
			case c == '"':
				var ok bool
				if dst, i, ok = appendDataString(dst, raw, i); !ok {
					return dst[:orig], false
				}
			case c == '-' || ('0' <= c && c <= '9'):
				n := scanNumber(raw, i)
				if n == 0 {
					return dst[:orig], false
				}
				dst = append(dst, raw[i:i+n]...)
				i += n
			default:
				n := 0
				for _, lit := range [...]string{"true", "false", "null"} {
					if len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit {
						n = len(lit)
						break
					}
				}
				if n == 0 {
					return dst[:orig], false
				}
				dst = append(dst, raw[i:i+n]...)
				i += n
			}
			state = afterValue
		case wantKey:
			if c != '"' {
				return dst[:orig], false
			}
			var ok bool
			if dst, i, ok = appendDataString(dst, raw, i); !ok {
				return dst[:orig], false
			}
			i = skipSpace(raw, i)
			if i >= len(raw) || raw[i] != ':' {
				return dst[:orig], false
			}
			dst = append(dst, ':')
			state = wantValue
			i++
		case afterValue:
			if depth == 0 { // trailing garbage after the value
				return dst[:orig], false
			}
			obj := isObj[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			switch {
			case c == ',':
				dst = append(dst, c)
				state = wantValue
				if obj {
					state = wantKey
				}
			case c == '}' && obj, c == ']' && !obj:
				dst = append(dst, c)
				depth--
			default:
				return dst[:orig], false
			}
			i++
		}
		i = skipSpace(raw, i)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// appendDataString copies the JSON string starting at raw[i] (a quote),
// replacing invalid UTF-8 with \ufffd. It returns the index after the
// closing quote.
func appendDataString(dst, raw []byte, i int) ([]byte, int, bool) {
	dst = append(dst, '"')
	i++
	start := i
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == '"':
			dst = append(dst, raw[start:i+1]...)
			return dst, i + 1, true
		case c == '\\':
			if i+1 >= len(raw) {
				return dst, i, false
			}
			switch raw[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(raw) {
					return dst, i, false
				}
				for _, h := range raw[i+2 : i+6] {
					if !isHex(h) {
						return dst, i, false
					}
				}
				i += 6
			default:
				return dst, i, false
			}
		case c < 0x20:
			return dst, i, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := decodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, raw[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
		}
	}
	return dst, i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber returns the length of the JSON number at b[i:], or 0 if there
// is none.
func scanNumber(b []byte, i int) int {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		j = skipDigits(b, j)
	default:
		return 0
	}
	if j < len(b) && b[j] == '.' {
		k := skipDigits(b, j+1)
		if k == j+1 {
			return 0
		}
		j = k
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := skipDigits(b, j)
		if k == j {
			return 0
		}
		j = k
	}
	return j - i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
