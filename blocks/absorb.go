package blocks

// Absorb adds a streamed block to the stored transcript list and returns
// the updated list: consecutive Markdown blocks merge into one, Load blocks
// (placeholders) and Meta blocks (kept on the message, not in its blocks)
// are dropped, and every other block is appended as is.
//
// Feeding a stream's blocks through Absorb yields the same list however the
// model text was split into deltas.
func Absorb(list []Block, b Block) []Block {
	switch b.Kind {
	case Load, Meta:
		return list
	case Markdown:
		if n := len(list); n > 0 && list[n-1].Kind == Markdown {
			list[n-1].Content += b.Content
			return list
		}
	}
	return append(list, b)
}
