package assistant

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/phantom"
)

// refRelease is release as it was before it resumed its scan: each
// sentence end looked for from the start of what is held.
func refRelease(c *claims, all bool) {
	for c.held != "" {
		n := phantom.SentenceEnd(c.held)
		switch {
		case n > 0:
		case all, strings.ContainsRune(".!?…", lastRune(c.held)):
			n = len(c.held)
		case len(c.held) > maxHeld:
			n = strings.LastIndexByte(c.held[:maxHeld], ' ') + 1
			if n <= 0 {
				n = truncatedLen(c.held, maxHeld)
			}
			if n == 0 {
				n = maxHeld
			}
		default:
			return
		}
		s := c.held[:n]
		c.held = c.held[n:]
		c.pass(s)
	}
}

// A run of bytes that are not UTF-8, with no rune start in its first
// maxHeld bytes, is passed on, not held for ever: release cut it at 0
// bytes and looped, emitting empty sentences.
func TestClaimCheckPassesOnBytesThatAreNotUTF8(t *testing.T) {
	text := "a" + strings.Repeat("\x80", 700) + " and more"
	var got []string
	c := claims{on: true, emit: func(b blocks.Block) {
		if b.Content == "" || len(got) > 100 {
			panic("release emits empty or endless sentences")
		}
		got = append(got, b.Content)
	}}
	c.take(blocks.Block{Kind: blocks.Markdown, Content: text})
	c.flush()
	if strings.Join(got, "") != text {
		t.Errorf("passed on %q, want all of the text", got)
	}
}

// FuzzClaimsReleaseAsFromTheStart holds release's resumed scan to the scan
// from the start: text streamed in any cuts is passed on and withheld in
// the same sentences.
func FuzzClaimsReleaseAsFromTheStart(f *testing.F) {
	long := strings.Repeat("word ", 200) + strings.Repeat("x", 1500) + "... I have deleted note 1. Done"
	for _, s := range []string{"Sure. I have deleted note 1. Anything else?", long, "a…b… c\xe2\x80", "完成。我已删除", "3.5 is out. Really?! Yes", "a" + strings.Repeat("\x80", 700)} {
		f.Add(s, []byte{1, 7, 3, 250, 2})
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		var got, want []string
		c := claims{on: true, emit: func(b blocks.Block) { got = append(got, b.Content) }}
		ref := claims{on: true, emit: func(b blocks.Block) { want = append(want, b.Content) }}
		for i := 0; text != ""; i++ {
			n := len(text)
			if len(cuts) > 0 {
				n = min(n, 1+int(cuts[i%len(cuts)])*int(cuts[i%len(cuts)])/16)
			}
			c.take(blocks.Block{Kind: blocks.Markdown, Content: text[:n]})
			ref.held += text[:n]
			refRelease(&ref, false)
			text = text[n:]
		}
		c.flush()
		refRelease(&ref, true)
		if !slices.Equal(got, want) || !slices.Equal(c.withheld, ref.withheld) {
			t.Fatalf("passed on %q and withheld %q; from the start, %q and %q", got, c.withheld, want, ref.withheld)
		}
	})
}

// BenchmarkClaimsRelease streams 256 KiB of prose through the check in
// 4 KiB deltas and in one, as release does it and as it did from the
// start each time: with full stops every sentence, and as one run
// without any.
func BenchmarkClaimsRelease(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{
		{"sentences", "The note was read back to the user as it stands. "},
		{"no-stop", "word "},
	} {
		text := strings.Repeat(tc.unit, 256<<10/len(tc.unit))
		for _, how := range []string{"resumed", "from-the-start"} {
			for _, delta := range []int{4 << 10, len(text)} {
				b.Run(fmt.Sprintf("%s/%dKiB/%s", tc.name, delta>>10, how), func(b *testing.B) {
					b.SetBytes(int64(len(text)))
					for b.Loop() {
						c := claims{on: true, emit: func(blocks.Block) {}}
						for s := text; s != ""; {
							n := min(len(s), delta)
							if how == "resumed" {
								c.take(blocks.Block{Kind: blocks.Markdown, Content: s[:n]})
							} else {
								c.held += s[:n]
								refRelease(&c, false)
							}
							s = s[n:]
						}
					}
				})
			}
		}
	}
}
