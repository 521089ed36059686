package guard

import (
	"encoding/base64"
	"encoding/hex"
	"unicode/utf8"
)

// Encoded runs of at least minEncodedRun characters (base64, hex,
// percent-encoding) are decoded and, when they decode to text, scanned
// again. Nesting stops at maxDecodeDepth and the decoded bytes of one call
// at maxDecodedBytes, so a crafted input cannot make the guard slow.
const (
	minEncodedRun   = 16
	maxDecodeDepth  = 2
	maxDecodedBytes = 64 << 10
)

// encodedRun is a candidate run in the original text.
type encodedRun struct {
	start, end int
	via        string
}

// findEncodedRuns calls fn for every base64, hex or percent-encoded run.
func findEncodedRuns(text string, fn func(encodedRun)) {
	for i := 0; i < len(text); {
		c := text[i]
		if !isB64Char(c) && c != '%' {
			i++
			continue
		}
		if i > 0 && isB64Char(text[i-1]) {
			i++
			continue
		}
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
			fn(encodedRun{i, e, "percent"})
			i = e
			continue
		}
		e = i
		hexOnly := true
		for e < len(text) && isB64Char(text[e]) {
			hexOnly = hexOnly && isHex(text[e])
			e++
		}
		for e < len(text) && text[e] == '=' && e-i < 4096 {
			e++
		}
		if e-i >= minEncodedRun {
			if hexOnly && (e-i)%2 == 0 {
				fn(encodedRun{i, e, "hex"})
			} else {
				fn(encodedRun{i, e, "base64"})
			}
		}
		if e == i {
			e++
		}
		i = e
	}
}

func isB64Char(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_' }
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
	default:
		dst, err = decodeBase64(dst, src)
	}
	if err != nil || len(dst) < 8 || !utf8.Valid(dst) {
		return dst, false
	}
	printable, letters := 0, 0
	for _, r := range string(dst) {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r >= ' ' && r != 0x7F:
			printable++
		}
		if isLetter(byte(r)) || r >= 0x80 {
			letters++
		}
	}
	n := utf8.RuneCount(dst)
	return dst, printable*100 >= n*95 && letters*2 >= n
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
