package sqlstore

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The stored form is part of the schema: migration 4 escapes existing
// U+0001 as U+0001 '1', and rows already written must keep reading back.
func TestEscapeTextForm(t *testing.T) {
	for _, c := range []struct{ in, stored string }{
		{"", ""},
		{"plain ünïcødé 🎉 \ufffd \u2028", "plain ünïcødé 🎉 \ufffd \u2028"},
		{"a\x00b", "a\x010b"},
		{"\x00\x00", "\x010\x010"},
		{"\x01", "\x011"},
		{"\x010", "\x0110"},
		{"bad \xff", "bad \x01xff"},
		{"\xed\xa0\x80", "\x01xed\x01xa0\x01x80"}, // a UTF-8-encoded surrogate is three invalid bytes
		{"cut \xe2\x82", "cut \x01xe2\x01x82"},
		{`{"s":"\u0000\ud800"}`, `{"s":"\u0000\ud800"}`},
	} {
		if got := escapeText(c.in); got != c.stored {
			t.Errorf("escapeText(%q) = %q, want %q", c.in, got, c.stored)
		}
		if got := unescapeText(c.stored); got != c.in {
			t.Errorf("unescapeText(%q) = %q, want %q", c.stored, got, c.in)
		}
	}
}

// Escape bytes that start no sequence of escapeText (written by something
// else) read back as they are stored.
func TestUnescapeTextKeepsStrayEscapes(t *testing.T) {
	for _, s := range []string{"\x01", "a\x01", "\x01z", "\x01x", "\x01x4", "\x01xZZ", "\x01xAB", "\x01\x01"} {
		if got := unescapeText(s); got != s {
			t.Errorf("unescapeText(%q) = %q, want it unchanged", s, got)
		}
	}
}

// FuzzEscapeText checks the properties the PostgreSQL dialect relies on:
// every string round-trips exactly; the stored form is valid UTF-8 without
// 0x00 (what text columns accept); text that needs no escape, valid JSON
// included, is stored unchanged; and unescapeText accepts any input.
func FuzzEscapeText(f *testing.F) {
	for _, s := range []string{
		"", "hello", "a\x00b", "\x00", "\x01", "\x010", "\x011", "\x01x00", "\x01xff",
		"\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\ufffd", "\u2028\u2029",
		"\U0001F600", "\uFDD0\uFFFE\uFFFF\U0010FFFF", `{"s":"\u0000","t":"\ud800"}`,
		strings.Repeat("x\x00é", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stored := escapeText(s)
		if got := unescapeText(stored); got != s {
			t.Fatalf("unescapeText(escapeText(%q)) = %q via %q", s, got, stored)
		}
		if !utf8.ValidString(stored) || strings.IndexByte(stored, 0) >= 0 {
			t.Fatalf("escapeText(%q) = %q: not valid UTF-8 without NUL", s, stored)
		}
		plain := utf8.ValidString(s) && !strings.ContainsAny(s, "\x00\x01")
		if plain != (stored == s) || plain != (needsEscape(s) < 0) {
			t.Fatalf("escapeText(%q) = %q; the string needs no escape: %v", s, stored, plain)
		}
		if json.Valid([]byte(s)) && utf8.ValidString(s) && stored != s {
			t.Fatalf("valid JSON %q stored as %q", s, stored)
		}
		_ = unescapeText(s) // any stored text reads back without panicking
	})
}
