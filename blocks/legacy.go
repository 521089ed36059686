package blocks

// Before ClientSide and Effect, Tag carried both: "client" on the
// tool_call block of a client-side call, and the tool's effect on a
// confirm block. Threads stored then hold blocks written so, and readers
// from then (NDJSON clients, older instances sharing the store) read them
// so. Both keep working: the decoder reads the old spellings into the new
// fields, and the encoders still write the tag key on these two kinds with
// its old meaning, beside the new keys.

// legacyClientTag is the tag that marked a client-side call.
const legacyClientTag = "client"

// legacyTag is the value written for the tag key: Tag, except on a
// client-side tool_call block ("client") and on a confirm block with an
// Effect (the effect).
func legacyTag(b *Block) string {
	switch {
	case b.Kind == ToolCall && b.ClientSide:
		return legacyClientTag
	case b.Kind == Confirm && b.Effect != "":
		return b.Effect
	}
	return b.Tag
}

// upgrade reads the old meanings of the tag key on a decoded block into
// the fields that hold them now. A tool_call or confirm block has no Tag
// of its own, so decoding leaves it empty there: what the key held is the
// client marker or the effect, and re-encoding writes it back the same.
func (b *Block) upgrade() {
	switch b.Kind {
	case ToolCall:
		b.ClientSide = b.ClientSide || b.Tag == legacyClientTag
		b.Tag = ""
	case Confirm:
		if b.Effect == "" {
			b.Effect = b.Tag
		}
		b.Tag = ""
	}
}
