package blocks

// fieldType says how a Block field is encoded.
type fieldType uint8

const (
	stringField fieldType = iota // a JSON string, omitted when empty
	boolField                    // a JSON bool, omitted when false (unless written always on the block's kind)
	dataField                    // a raw JSON value, omitted when empty
	metaField                    // a nested MetaInfo object, omitted when nil
)

// form selects one of the two key sets of a field.
type form uint8

const (
	wireForm   form = iota // compact NDJSON keys
	storedForm             // verbose persisted keys
)

// field is one row of the field table: a Block field, its two keys, and how
// to reach it.
type field struct {
	keys [2]string // indexed by form
	typ  fieldType
	str  func(*Block) *string // for stringField
	// out, when set, gives the string written instead of *str: the tag
	// key keeps its old meaning on tool_call and confirm blocks.
	out    func(*Block) string
	flag   func(*Block) *bool // for boolField
	always Kind               // for boolField: written even when false on blocks of this kind
}

// fields is the one definition of the Block wire and stored shapes. Both
// codecs (encoder and decoder, both forms) are driven by it, in this order;
// Kind comes first and is always written. TestFieldTableCoversBlock checks
// that every Block field appears exactly once.
var fields = [...]field{
	{keys: [2]string{"k", "kind"}, typ: stringField, str: func(b *Block) *string { return (*string)(&b.Kind) }},
	{keys: [2]string{"c", "content"}, typ: stringField, str: func(b *Block) *string { return &b.Content }},
	{keys: [2]string{"t", "tag"}, typ: stringField, str: func(b *Block) *string { return &b.Tag }, out: legacyTag},
	{keys: [2]string{"e", "error_code"}, typ: stringField, str: func(b *Block) *string { return &b.ErrorCode }},
	{keys: [2]string{"id", "id"}, typ: stringField, str: func(b *Block) *string { return &b.ID }},
	{keys: [2]string{"n", "name"}, typ: stringField, str: func(b *Block) *string { return &b.Name }},
	{keys: [2]string{"ci", "call_id"}, typ: stringField, str: func(b *Block) *string { return &b.CallID }},
	{keys: [2]string{"cs", "client_side"}, typ: boolField, flag: func(b *Block) *bool { return &b.ClientSide }},
	{keys: [2]string{"ef", "effect"}, typ: stringField, str: func(b *Block) *string { return &b.Effect }},
	{keys: [2]string{"ok", "ok"}, typ: boolField, flag: func(b *Block) *bool { return &b.OK }, always: ToolResult},
	{keys: [2]string{"d", "data"}, typ: dataField},
	{keys: [2]string{"m", "meta"}, typ: metaField},
}

// metaFields lists MetaInfo's keys for the hand-rolled encoder, in struct
// order. They must equal MetaInfo's json tags (the decoder uses the tags);
// TestMetaTableMatchesStructTags keeps the two in step.
var metaFields = [...]struct {
	key string
	str func(*MetaInfo) *string // exactly one of str and num is set
	num func(*MetaInfo) *int64
}{
	{key: "thread_id", str: func(m *MetaInfo) *string { return &m.ThreadID }},
	{key: "message_id", str: func(m *MetaInfo) *string { return &m.MessageID }},
	{key: "user_message_id", str: func(m *MetaInfo) *string { return &m.UserMessageID }},
	{key: "title", str: func(m *MetaInfo) *string { return &m.Title }},
	{key: "input_tokens", num: func(m *MetaInfo) *int64 { return &m.InputTokens }},
	{key: "output_tokens", num: func(m *MetaInfo) *int64 { return &m.OutputTokens }},
	{key: "finish", str: func(m *MetaInfo) *string { return &m.Finish }},
	{key: "waiting", str: func(m *MetaInfo) *string { return &m.Waiting }},
	{key: "connection", str: func(m *MetaInfo) *string { return &m.Connection }},
	{key: "model", str: func(m *MetaInfo) *string { return &m.Model }},
}
