package blocks

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// parse feeds deltas to a fresh Parser and flushes it.
func parse(deltas ...string) []Block {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	for _, d := range deltas {
		p.Write(d, emit)
	}
	p.Flush(emit)
	return out
}

// mergeMarkdown joins consecutive Markdown blocks, keeping everything else,
// so outputs can be compared regardless of where prose was chunked.
func mergeMarkdown(bs []Block) []Block {
	var out []Block
	for _, b := range bs {
		if n := len(out); n > 0 && b.Kind == Markdown && out[n-1].Kind == Markdown {
			out[n-1].Content += b.Content
			continue
		}
		out = append(out, b)
	}
	return out
}

// splitEvery cuts s into pieces of n bytes, ignoring rune boundaries.
func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func TestParserZeroValueReady(t *testing.T) {
	got := parse("hello")
	if want := []Block{{Kind: Markdown, Content: "hello"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestParserEmptyInputEmitsNothing(t *testing.T) {
	if got := parse("", ""); len(got) != 0 {
		t.Errorf("got %+v", got)
	}
}

func TestParserBuffersProseUntil50Bytes(t *testing.T) {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	p.Write(strings.Repeat("a", 49), emit)
	if len(out) != 0 {
		t.Fatalf("emitted before 50 bytes: %+v", out)
	}
	p.Write("bc", emit)
	if len(out) != 1 || out[0].Content != strings.Repeat("a", 49)+"bc" {
		t.Fatalf("at 51 bytes got %+v", out)
	}
	p.Write("tail", emit)
	p.Flush(emit)
	if len(out) != 2 || !reflect.DeepEqual(out[1], Block{Kind: Markdown, Content: "tail"}) {
		t.Errorf("Flush did not emit the buffered rest: %+v", out)
	}
}

func TestParserNeverSplitsRune(t *testing.T) {
	// 49 ASCII bytes then "é€😀", fed one byte at a time: every chunk
	// boundary must fall between runes.
	text := strings.Repeat("x", 49) + "é€😀" + strings.Repeat("y", 48) + "😀z"
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	for _, d := range splitEvery(text, 1) {
		p.Write(d, emit)
		for _, b := range out {
			if !utf8.ValidString(b.Content) {
				t.Fatalf("chunk %q splits a rune", b.Content)
			}
		}
	}
	p.Flush(emit)
	if len(out) < 2 {
		t.Fatalf("expected several chunks, got %d", len(out))
	}
	var sb strings.Builder
	for _, b := range out {
		if !utf8.ValidString(b.Content) {
			t.Errorf("chunk %q splits a rune", b.Content)
		}
		sb.WriteString(b.Content)
	}
	if sb.String() != text {
		t.Errorf("chunks do not rebuild the text")
	}
}

func TestParserProseChunksConcatenateExactly(t *testing.T) {
	text := "  leading spaces\n\n\n* list\n  * nested with `inline` and ``double``\n\ttab\r\nend  \n\n"
	text = strings.Repeat(text, 5)
	for _, n := range []int{1, 3, 7, 50, 1000} {
		got := mergeMarkdown(parse(splitEvery(text, n)...))
		if len(got) != 1 || got[0].Content != text {
			t.Errorf("split %d: prose not preserved: %+v", n, got)
		}
	}
}

func TestParserCodeFence(t *testing.T) {
	got := parse("Look:\n```go\nfmt.Println(1)\n\nx := `raw`\n```\nDone.")
	want := []Block{
		{Kind: Markdown, Content: "Look:\n"},
		{Kind: Load, Tag: "code"},
		{Kind: Code, Tag: "go", Content: "fmt.Println(1)\n\nx := `raw`\n"},
		{Kind: Markdown, Content: "Done."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParserMermaidFence(t *testing.T) {
	got := parse("```mermaid\ngraph LR\nA-->B\n```\n")
	want := []Block{
		{Kind: Load, Tag: "mermaid"},
		{Kind: Mermaid, Content: "graph LR\nA-->B\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParserUnknownLanguageIsCode(t *testing.T) {
	got := parse("```klingon extra words\nqapla'\n```")
	want := []Block{{Kind: Load, Tag: "code"}, {Kind: Code, Tag: "klingon", Content: "qapla'\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestParserFenceWithoutLanguage(t *testing.T) {
	got := parse("```\nplain\n```\n")
	want := []Block{{Kind: Load, Tag: "code"}, {Kind: Code, Content: "plain\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestParserEmitsLoadWhenFenceOpens(t *testing.T) {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	p.Write("Hi\n```py", emit)
	if len(out) != 0 {
		t.Fatalf("emitted before the fence line ended: %+v", out)
	}
	p.Write("thon\nprint(1)\n", emit)
	want := []Block{{Kind: Markdown, Content: "Hi\n"}, {Kind: Load, Tag: "code"}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v, want %+v", out, want)
	}
	p.Write("``", emit)
	p.Write("`\n", emit)
	if n := len(out); n != 3 || !reflect.DeepEqual(out[2], Block{Kind: Code, Tag: "python", Content: "print(1)\n"}) {
		t.Errorf("got %+v", out)
	}
}

func TestParserHoldsBacktickRunAtLineStart(t *testing.T) {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	p.Write(strings.Repeat("p", 49)+"\n`", emit)
	if len(out) != 1 || out[0].Content != strings.Repeat("p", 49)+"\n" {
		t.Fatalf("the backtick at a line start was not held back: %+v", out)
	}
	p.Write("`", emit)
	if len(out) != 1 {
		t.Fatalf("two backticks at a line start were not held back: %+v", out)
	}
	p.Write("x is code", emit) // "``x" cannot be a fence: released as prose
	p.Flush(emit)
	if got := mergeMarkdown(out); len(got) != 1 || got[0].Content != strings.Repeat("p", 49)+"\n``x is code" {
		t.Errorf("got %+v", got)
	}
}

func TestParserInlineTripleBackticksAreProse(t *testing.T) {
	text := "use ```go``` inline, not a fence\n```not`a fence either\n ```indented is prose\n"
	got := mergeMarkdown(parse(splitEvery(text, 2)...))
	if len(got) != 1 || got[0].Content != text {
		t.Errorf("got %+v", got)
	}
}

func TestParserClosingFenceNeedsAtLeastOpeningBackticks(t *testing.T) {
	got := parse("````md\n```go\nx\n```\n````\nafter")
	want := []Block{
		{Kind: Load, Tag: "code"},
		{Kind: Code, Tag: "md", Content: "```go\nx\n```\n"},
		{Kind: Markdown, Content: "after"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParserClosingFenceAllowsTrailingSpaceOnly(t *testing.T) {
	got := parse("```\na\n```  \t\r\nb\n```x\nc\n```")
	want := []Block{
		{Kind: Load, Tag: "code"},
		{Kind: Code, Content: "a\n"},
		{Kind: Markdown, Content: "b\n"},
		{Kind: Load, Tag: "code"},
		{Kind: Code, Tag: "x", Content: "c\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// "```js" inside a fence is body, not a close.
	got = parse("```\n```js\n```")
	if len(got) != 2 || got[1].Content != "```js\n" {
		t.Errorf("got %+v", got)
	}
}

func TestParserCRLFFences(t *testing.T) {
	got := parse("```sql\r\nSELECT 1;\r\n```\r\nok")
	want := []Block{
		{Kind: Load, Tag: "code"},
		{Kind: Code, Tag: "sql", Content: "SELECT 1;\r\n"},
		{Kind: Markdown, Content: "ok"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParserUnclosedFenceFlushedAsBlock(t *testing.T) {
	got := parse("```mermaid\ngraph TD\nA-->")
	want := []Block{{Kind: Load, Tag: "mermaid"}, {Kind: Mermaid, Content: "graph TD\nA-->"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	got = parse("text\n```rust")
	want = []Block{{Kind: Markdown, Content: "text\n"}, {Kind: Load, Tag: "code"}, {Kind: Code, Tag: "rust"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fence line at end of text: got %+v", got)
	}
}

func TestParserHeldLineAtEndIsProse(t *testing.T) {
	got := parse("a\n``")
	if want := []Block{{Kind: Markdown, Content: "a\n``"}}; !reflect.DeepEqual(mergeMarkdown(got), want) {
		t.Errorf("got %+v", got)
	}
}

func TestParserLongBacktickLineIsProse(t *testing.T) {
	line := "```" + strings.Repeat("x", maxFenceLine) + "\nmore\n"
	got := mergeMarkdown(parse(splitEvery(line, 5)...))
	if len(got) != 1 || got[0].Kind != Markdown || got[0].Content != line {
		t.Errorf("got %+v", got)
	}
}

func TestParserOutputIndependentOfSplit(t *testing.T) {
	text := "Intro é😀 with enough prose to pass one chunk of fifty bytes.\n" +
		"```python\nprint('héllo')\n```\nmiddle `code` text\n``\n" +
		"````mermaid\ngraph LR\n```\n````\ntrailing 中文 prose that runs on\n```\nunclosed"
	want := mergeMarkdown(parse(text))
	for n := 1; n <= 13; n++ {
		if got := mergeMarkdown(parse(splitEvery(text, n)...)); !reflect.DeepEqual(got, want) {
			t.Errorf("split every %d bytes:\n got %+v\nwant %+v", n, got, want)
		}
	}
}

func TestParserResetDiscardsState(t *testing.T) {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	p.Write("abc\n```go\nbody", emit)
	p.Reset()
	p.Write("fresh", emit)
	p.Flush(emit)
	want := []Block{{Kind: Markdown, Content: "abc\n"}, {Kind: Load, Tag: "code"}, {Kind: Markdown, Content: "fresh"}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %+v", out)
	}
}

func TestParserReusableAfterFlush(t *testing.T) {
	var p Parser
	var out []Block
	emit := func(b Block) { out = append(out, b) }
	p.Write("```go\nx", emit)
	p.Flush(emit)
	out = nil
	p.Write("plain", emit)
	p.Flush(emit)
	if want := []Block{{Kind: Markdown, Content: "plain"}}; !reflect.DeepEqual(out, want) {
		t.Errorf("state leaked across Flush: %+v", out)
	}
}

func TestParserDeltaAllocations(t *testing.T) {
	var p Parser
	dst := make([]byte, 0, 512)
	emit := func(b Block) { dst = AppendNDJSON(dst[:0], &b) }
	deltas := splitEvery(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20), 6)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		p.Write(deltas[i%len(deltas)], emit)
		i++
	})
	if allocs > 2 {
		t.Errorf("Parser.Write + AppendNDJSON: %v allocs per delta, want <= 2", allocs)
	}
}

func TestParserFlushProseEmitsShortProseButHoldsFenceAndRune(t *testing.T) {
	var p Parser
	var got []Block
	emit := func(b Block) { got = append(got, b) }
	p.Write("Hi \xe2\x82", emit) // "Hi " then 2 of the 3 bytes of '€'
	if len(got) != 0 {
		t.Fatalf("Write emitted %d blocks before 50 bytes, want 0", len(got))
	}
	p.FlushProse(emit)
	if len(got) != 1 || got[0].Kind != Markdown || got[0].Content != "Hi " {
		t.Fatalf("FlushProse emitted %+v, want one markdown block \"Hi \" (incomplete rune held)", got)
	}
	p.Write("\xac\n``", emit) // completes '€'; "``" may still become a fence
	p.FlushProse(emit)
	if len(got) != 2 || got[1].Content != "€\n" {
		t.Fatalf("second FlushProse emitted %+v, want \"€\\n\" with the backticks held", got[1:])
	}
	p.Write("`go\nx\n```\n", emit)
	p.Flush(emit)
	var kinds []Kind
	for _, b := range got[2:] {
		kinds = append(kinds, b.Kind)
	}
	if len(kinds) != 2 || kinds[0] != Load || kinds[1] != Code || got[3].Content != "x\n" || got[3].Tag != "go" {
		t.Fatalf("after FlushProse the fence parsed as %+v, want load then code \"x\\n\" tagged go", got[2:])
	}
}
