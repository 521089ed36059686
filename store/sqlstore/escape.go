package sqlstore

import (
	"strings"
	"unicode/utf8"
)

// PostgreSQL text holds neither the byte 0x00 nor bytes that are not UTF-8,
// and a model can produce the first (U+0000) and a Go string can hold both.
// So on PostgreSQL every free-text and JSON value passes through escapeText
// on its way in and unescapeText on its way out. The escape character is
// U+0001, which JSON text never holds raw (JSON escapes every control
// character), so a JSON value that is valid UTF-8 is stored unchanged:
//
//	U+0000                 -> U+0001 '0'
//	U+0001                 -> U+0001 '1'
//	a byte not valid UTF-8 -> U+0001 'x' and its two lowercase hex digits
//
// Everything else is copied. The result is valid UTF-8 with no 0x00, and
// unescapeText(escapeText(s)) == s for every string s.
const escapeByte = 0x01

const lowerHex = "0123456789abcdef"

// needsEscape reports the index of the first byte of s that escapeText
// changes, or -1 when s is stored as it is.
func needsEscape(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= escapeByte {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// escapeText returns s in the form PostgreSQL text can hold (see escapeByte).
func escapeText(s string) string {
	i := needsEscape(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= escapeByte {
				b.WriteByte(escapeByte)
				b.WriteByte('0' + c)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(escapeByte)
			b.WriteByte('x')
			b.WriteByte(lowerHex[c>>4])
			b.WriteByte(lowerHex[c&0xf])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unescapeText reverses escapeText. An escape byte that starts no sequence
// escapeText writes (only a writer other than this package can store one)
// is kept as it is, so any stored text reads back as something.
func unescapeText(s string) string {
	i := strings.IndexByte(s, escapeByte)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		n := 1 // bytes of s consumed
		switch {
		case len(s) >= 2 && (s[1] == '0' || s[1] == '1'):
			b.WriteByte(s[1] - '0')
			n = 2
		case len(s) >= 4 && s[1] == 'x' && isLowerHex(s[2]) && isLowerHex(s[3]):
			b.WriteByte(unhex(s[2])<<4 | unhex(s[3]))
			n = 4
		default:
			b.WriteByte(escapeByte)
		}
		s = s[n:]
		i = strings.IndexByte(s, escapeByte)
	}
	b.WriteString(s)
	return b.String()
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
