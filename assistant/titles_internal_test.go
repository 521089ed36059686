package assistant

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A thread named after its first message is named in words, without the
// message's markdown (issue 25.12: the page stripped it, the store kept it).
func TestHeuristicTitleDropsMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"**Shopping list** for `Mum` — _today_": "Shopping list for Mum — today",
		"# Call the plumber":                    "Call the plumber",
		"add a list_notes tool":                 "add a list_notes tool",
		"**":                                    "New chat",
		"> quoted [link](x)":                    "quoted link (x)",
	} {
		if got := heuristicTitle(in); got != want {
			t.Errorf("heuristicTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzHeuristicTitle(f *testing.F) {
	f.Add("**Paris trip** planning!!\nmore")
	f.Add("_a_b_ `c` <d>")
	f.Fuzz(func(t *testing.T, s string) {
		got := heuristicTitle(s)
		if got == "" || len(got) > 80 || strings.ContainsAny(got, "\n\r<>*#`\"\x00") {
			t.Fatalf("heuristicTitle(%q) = %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out: %q", got)
		}
	})
}
