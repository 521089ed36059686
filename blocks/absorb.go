package blocks

import (
	"slices"
	"strings"
)

// Absorb adds a streamed block to the stored transcript list and returns
// the updated list: consecutive Markdown blocks merge into one, as do
// consecutive Reasoning blocks, Load blocks
// (placeholders) and Meta blocks (kept on the message, not in its blocks)
// are dropped, and every other block is appended as is.
//
// Feeding a stream's blocks through Absorb yields the same list however the
// model text was split into deltas.
func Absorb(list []Block, b Block) []Block {
	switch b.Kind {
	case Load, Meta:
		return list
	case Markdown, Reasoning:
		if n := len(list); n > 0 && list[n-1].Kind == b.Kind {
			list[n-1].Content += b.Content
			return list
		}
	}
	return append(list, b)
}

// List builds a stored transcript from streamed blocks, as Absorb does, but
// joins a run of Markdown chunks once rather than re-copying the run for
// every chunk: a long answer arrives in thousands of them. The zero List is
// empty and ready to use.
type List struct {
	blocks  []Block
	run     strings.Builder // Markdown or Reasoning not yet in blocks
	runKind Kind            // which of the two run holds
}

// Add absorbs b.
func (l *List) Add(b Block) {
	switch b.Kind {
	case Load, Meta:
		return
	case Markdown, Reasoning:
		if l.runKind != b.Kind {
			l.flush()
			l.runKind = b.Kind
		}
		l.run.WriteString(b.Content)
		return
	}
	l.flush()
	l.blocks = Absorb(l.blocks, b)
}

// Blocks returns the transcript so far, the pending Markdown run included.
// The caller owns the result; the List is unchanged.
func (l *List) Blocks() []Block {
	bs := slices.Clone(l.blocks)
	if l.run.Len() > 0 {
		bs = Absorb(bs, Block{Kind: l.runKind, Content: l.run.String()})
	}
	return bs
}

func (l *List) flush() {
	if l.run.Len() > 0 {
		l.blocks = Absorb(l.blocks, Block{Kind: l.runKind, Content: l.run.String()})
		l.run.Reset()
	}
}
