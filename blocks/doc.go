// Package blocks defines Block, the unit of assistant output, and the code
// that moves blocks around: the NDJSON wire codec, the verbose stored codec,
// the Parser that turns streamed model text into blocks, and Absorb, which
// folds a stream into the transcript that is persisted.
//
// # Blocks
//
// A Block is one typed piece of a reply: a paragraph of prose, a code
// sample, a tool call, an approval card, an error. The same value is
// streamed to the client and stored with the message, so reloading a thread
// renders exactly what streamed, with no conversion. A client renders each
// block with the component registered for its Kind; consecutive Markdown
// blocks are parts of one text and are appended to each other.
//
// # Kinds
//
// Each kind uses only some fields; the others stay empty.
//
//	Kind         Fields used                                  Meaning
//	markdown     Content                                      prose; consecutive blocks concatenate
//	reasoning    Content                                      the model's visible reasoning, shown apart; consecutive blocks concatenate
//	code         Content, Tag (language, may be empty)        a fenced code block
//	mermaid      Content                                      mermaid diagram source
//	load         Tag ("code" or "mermaid")                    placeholder while a fenced block streams
//	tool_call    ID, Name, Data (arguments), ClientSide       the model called a tool; ClientSide: the client runs it
//	tool_result  ID, Name, OK, Content, ErrorCode, Data       a tool's outcome: Content is the summary, or the
//	                                                          error message with ErrorCode the tool error code
//	                                                          (CodeDeclined: a human declined the call; Data
//	                                                          {"reason"} then holds the reason they gave)
//	confirm      ID (approval token), Name (tool), Content,   a card asking the user to approve the call CallID;
//	             CallID, Effect                               Effect is the tool's, "mutate" or "destructive"
//	form         ID (call id), Data (questions)               an ask_user form
//	component    Tag (component name), Data (props)           a host-registered UI block
//	warning      Content, Data                                a notice to the user; Data, if any, what it is about
//	error        ErrorCode, Content (safe message)            terminal: always the last block
//	meta         Meta                                         turn metadata (ids, title, usage, finish)
//
// Decoders accept kinds outside this list, so that a reader survives data
// written by a newer version; only a missing or empty kind is an error.
//
// # Wire and stored forms
//
// Both forms are JSON objects defined by one field table, so they cannot
// drift apart. The wire form is NDJSON (application/x-ndjson): one compact
// object per line with short keys, written by AppendNDJSON or an Encoder and
// read by ParseNDJSON. The stored form uses verbose keys, for readable and
// queryable rows; it is what encoding/json produces and reads through
// Block's MarshalJSON and UnmarshalJSON, so a []Block marshals to the
// stored list.
//
//	Field      Wire key  Stored key   JSON type
//	Kind       k         kind         string, always written
//	Content    c         content      string
//	Tag        t         tag          string
//	ErrorCode  e         error_code   string
//	ID         id        id           string
//	Name       n         name         string
//	CallID     ci        call_id      string
//	ClientSide cs        client_side  bool
//	Effect     ef        effect       string
//	OK         ok        ok           bool, always written on tool_result blocks
//	Data       d         data         any JSON value
//	Meta       m         meta         object, keys below
//
// Meta's keys are the same in both forms: thread_id, message_id,
// user_message_id, title, input_tokens, output_tokens, finish, waiting,
// connection, model.
//
// Empty fields are omitted (false is empty). Strings are escaped as encoding/json escapes
// them, without HTML escaping: invalid UTF-8 becomes U+FFFD, and control
// characters, U+2028 and U+2029 are escaped. Data is written compacted,
// with invalid UTF-8 inside its strings replaced by \ufffd; if Data is not
// one valid JSON value (or nests deeper than 1000 levels) it is written as
// a JSON string holding its bytes. The encoders therefore always produce
// valid JSON, and a wire line never contains a raw newline.
//
// Decoding ignores unknown keys and returns an error wrapping ErrInvalid for
// anything that is not an object, a field of the wrong JSON type, or a
// missing kind. Decoded Data is canonical (compacted), so a decoded block
// re-encodes and decodes to an equal block. The literal null given to
// UnmarshalJSON leaves the block unchanged, as encoding/json expects.
// Note that json.Marshal HTML-escapes what MarshalJSON returns, so strings
// inside Data stored that way may come back with <, > and & written as
// \u003c, \u003e and \u0026: the same value in different bytes. Use an
// encoding/json Encoder with SetEscapeHTML(false), or MarshalJSON itself,
// to keep the bytes.
//
// # Blocks from before ClientSide and Effect
//
// Tag used to carry two more meanings: "client" on a client-side
// tool_call block, and the tool's effect on a confirm block. Threads
// stored then still hold blocks written so, and readers written then
// (NDJSON clients, an older instance sharing the store) still look there.
// So on these two kinds the tag key (t, tag) keeps its old meaning in
// both directions: the encoders write "client" there for a ClientSide
// tool_call block and the Effect for a confirm block, beside the new keys,
// and the decoders read it into ClientSide and Effect when the new key is
// absent. A decoded tool_call or confirm block has no Tag.
//
// # Parsing model text
//
// A Parser turns the model's streamed text into blocks. Text is split on
// fence lines: a line that starts with three or more backticks opens a
// fenced block (a line starting with ``` whose info string contains a
// backtick is prose, as in CommonMark), and a line of at least as many
// backticks followed only by spaces or tabs closes it. Backticks that are
// indented or inside a line never form a fence.
//
//   - Prose is buffered and emitted as Markdown blocks once 50 bytes have
//     accumulated, and before a fence and at Flush. A chunk never ends
//     inside a UTF-8 rune; an incomplete rune is held until its remaining
//     bytes arrive. The chunks concatenate to exactly the prose: nothing is
//     trimmed or lost, including the newline that ends a line before a fence.
//   - At a line start, backticks that may begin a fence are held back until
//     the line shows whether it is one.
//   - When an opening fence line ends, a Load block is emitted with Tag
//     "mermaid" if the fence's language is mermaid and "code" otherwise.
//   - When the fence closes, a Code block (Tag = the language, the first
//     word of the info string, possibly empty; unknown languages are just
//     code) or a Mermaid block is emitted. Its Content is the text between
//     the fence lines, including the newline ending its last line.
//   - Text after a closing fence is prose again.
//   - Flush ends the text: a held line is resolved, an unclosed fence is
//     emitted as its block with the body received so far, and remaining
//     prose is emitted.
//
// Apart from where prose is cut into chunks, the blocks do not depend on how
// the text was split into deltas. Absorb builds the stored transcript from
// the stream: it merges consecutive Markdown blocks (and Reasoning blocks) and drops Load and Meta
// blocks, so the stored list does not depend on the split at all.
//
// # Concurrency
//
// A Parser or an Encoder is not safe for concurrent use; use one per stream.
// AppendNDJSON, ParseNDJSON, Absorb and the JSON methods keep no state and
// may be called from any number of goroutines.
package blocks
