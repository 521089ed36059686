package mcptools

import (
	"strings"
	"unicode/utf8"
)

// maxNameBytes is the longest tool name tools.Spec allows.
const maxNameBytes = 64

// Name is the Parley name of the MCP tool remote imported with prefix:
// prefix and remote with every character outside [a-zA-Z0-9_-] (a dot, a
// slash, a space, a byte of a multi-byte character, a NUL) made '_', cut
// to 64 bytes. It is a valid tools.Spec name unless both are empty; two
// remote names may map to one Name, and Import keeps the first.
func Name(prefix, remote string) string {
	var b strings.Builder
	for _, s := range [2]string{prefix, remote} {
		for len(s) > 0 && b.Len() < maxNameBytes {
			r, size := utf8.DecodeRuneInString(s)
			s = s[size:]
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
