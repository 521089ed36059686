package assistant

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
)

// transcript is what a turn says, in the three forms it takes: the blocks
// the user sees and the store keeps, the model messages replayed on later
// turns, and the turn's outcome (usage, finish reason, error). It is the
// only writer of them: the model call, the tool rounds, the continuation
// and the final write call its methods, and no other code assigns its
// fields. It also holds the turn's output cap, since only it sees
// everything the model writes.
//
// The worker goroutine writes it; the stored blocks are also read, under
// mu, by the heartbeat and the stop write.
type transcript struct {
	parser blocks.Parser
	mu     sync.Mutex          // guards stored
	stored blocks.List         // the blocks as they will be persisted
	msgs   []providers.Message // model messages of this turn

	usage    providers.Usage // every call of the turn: its rounds, and the summary and topic calls
	sideOut  int64           // output tokens of the summary and topic calls, which the output cap does not count
	finish   string
	err      error // why the turn failed, if it did
	textSeen bool  // the model has streamed text this turn

	claims claims // holds back and withholds what the model claims it did (claims.go)

	callIDs map[string]bool // every call id of the thread, so new ones stay unique
	invalid map[string]bool // call ids that never validly reached a tool; not stored

	// The output cap: what the model may write over the turn's rounds, in
	// reported tokens and in bytes.
	maxTokens, maxBytes int
	outBytes            int  // what the model wrote this turn
	capped              bool // the output cap ended the turn
}

// init sets the output cap and the call ids the thread already used: the
// calls of the stored blocks (including calls still waiting on a card, a
// form or the client, which the replay does not hold yet) and of the replay.
func (o *transcript) init(maxTokens, maxBytes int, prior []store.Message, past []stretch) {
	o.maxTokens, o.maxBytes = maxTokens, maxBytes
	o.callIDs = make(map[string]bool)
	for _, m := range prior {
		for _, b := range m.Blocks {
			if b.Kind == blocks.ToolCall || b.Kind == blocks.Form {
				o.callIDs[b.ID] = true
			}
		}
	}
	for _, s := range past {
		for _, m := range s.msgs {
			for _, c := range m.ToolCalls {
				o.callIDs[c.ID] = true
			}
		}
	}
}

// keep adds b to the stored blocks.
func (o *transcript) keep(b blocks.Block) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stored.Add(b)
}

// storedBlocks returns a copy of the blocks kept so far: safe to write
// while the worker goes on.
func (o *transcript) storedBlocks() []blocks.Block {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stored.Blocks()
}

// uniqueIDs gives every call of a round a distinct, non-empty id: some
// OpenAI-compatible servers send none, or number calls per response so ids
// repeat across rounds, and clients match results to calls by id. calls
// is the model's own slice, not yet recorded.
func (o *transcript) uniqueIDs(calls []providers.ToolCall, round int) []providers.ToolCall {
	for i := range calls {
		for n := 0; calls[i].ID == "" || o.callIDs[calls[i].ID]; n++ {
			calls[i].ID = fmt.Sprintf("call_r%d_%d", round, i)
			if n > 0 { // taken by an earlier turn of the thread
				calls[i].ID = fmt.Sprintf("call_r%d_%d_%d", round, i, n)
			}
		}
		o.callIDs[calls[i].ID] = true
	}
	return calls
}

// called records the model's message that makes tool calls, with the text
// that came with them. It keeps its own copy of calls: what the guard
// later removes from their arguments is removed with withhold.
func (o *transcript) called(text string, calls []providers.ToolCall) {
	text = o.claims.strip(text)
	for _, c := range calls {
		o.callIDs[c.ID] = true
	}
	o.msgs = append(o.msgs, providers.Message{Role: providers.Assistant, Content: text, ToolCalls: slices.Clone(calls)})
}

// withhold replaces the recorded arguments of call id, in the last message
// that made calls, by what the guard let through: neither the store nor
// later rounds keep what it removed.
func (o *transcript) withhold(id string, args json.RawMessage) {
	for i := len(o.msgs) - 1; i >= 0; i-- {
		if j := slices.IndexFunc(o.msgs[i].ToolCalls, func(c providers.ToolCall) bool { return c.ID == id }); j >= 0 {
			o.msgs[i].ToolCalls[j].Args = args
			return
		}
	}
}

// answered records a tool's answer to the call with that id, as the model
// reads it.
func (o *transcript) answered(id, content string) {
	o.msgs = append(o.msgs, providers.Message{Role: providers.Tool, ToolCallID: id, Content: content})
}

// say records the model's text from a call whose tool calls, if any, will
// not run: the model message that ends the turn.
func (o *transcript) say(text string) {
	if text = o.claims.strip(text); text != "" {
		o.msgs = append(o.msgs, providers.Message{Role: providers.Assistant, Content: text})
	}
}

// amend adds text to what the turn's answer says to later turns: to the
// model's last message when that ends the turn, else as one of its own.
func (o *transcript) amend(text string) {
	if n := len(o.msgs); n > 0 && o.msgs[n-1].Role == providers.Assistant && len(o.msgs[n-1].ToolCalls) == 0 {
		o.msgs[n-1].Content = strings.TrimRight(o.msgs[n-1].Content, " \n") + "\n\n" + text
		return
	}
	o.msgs = append(o.msgs, providers.Message{Role: providers.Assistant, Content: text})
}

// checkClaims turns the check of what the model claims it did on (the turn
// has made no change) or off, for the next model call.
func (o *transcript) checkClaims(on bool) { o.claims.check(on) }

// invalidCall marks a call that never validly reached a tool: it is kept
// out of the stored model messages (B12), so later turns do not replay,
// and learn from, the mistake.
func (o *transcript) invalidCall(id string) {
	if o.invalid == nil {
		o.invalid = make(map[string]bool)
	}
	o.invalid[id] = true
}

// charge adds a model call's usage to the turn's.
func (o *transcript) charge(u providers.Usage) { o.usage = o.usage.Add(u) }

// chargeSide adds the usage of a call made for the turn but not part of
// its answer (the summary, the topic verdict): charged like the rest, but
// not counted against the answer's output cap.
func (o *transcript) chargeSide(u providers.Usage) {
	o.usage = o.usage.Add(u)
	o.sideOut += u.OutputTokens
}

// answerOut is the output tokens of the turn's own rounds.
func (o *transcript) answerOut() int64 { return o.usage.OutputTokens - o.sideOut }

// end sets the turn's finish reason.
func (o *transcript) end(finish string) { o.finish = finish }

// fail records why the turn failed.
func (o *transcript) fail(err error) { o.err = err }

// callLimit is the byte limit of the next model call under the output
// cap: bytes the model wrote over every round, and tokens, reported or at
// four bytes a token while the call streams, come down to one byte limit:
// the tokens left after the reported usage, at four bytes each (+3: a
// token counts once whole).
func (o *transcript) callLimit() int64 {
	tokensLeft := int64(o.maxTokens) - o.answerOut()
	return min(int64(o.outBytes)+4*tokensLeft+3, int64(o.maxBytes))
}

// wrote counts n bytes the model wrote against limit, and reports whether
// the output cap ended the call.
func (o *transcript) wrote(n int, limit int64) bool {
	o.outBytes += n
	if int64(o.outBytes) > limit {
		o.capped = true
	}
	return o.capped
}

// spent reports whether the output cap ends the turn: it did during a
// call, or the usage reported at a call's end reached it.
func (o *transcript) spent() bool {
	if o.answerOut() >= int64(o.maxTokens) {
		o.capped = true
	}
	return o.capped
}

// text takes the model's words as the user sees them, through the parser
// into blocks. It returns what it kept (all of s, unless the output cap
// cut it to a rune-aligned part within the byte cap) and whether the cap
// ended the call: a model that never stops costs no more than that.
func (o *transcript) text(s string, limit int64, emit func(blocks.Block)) (string, bool) {
	sink := o.claims.sink(emit)
	if o.wrote(len(s), limit) {
		// Cut at the call's limit, tokens as well as bytes: one huge
		// delta must not be kept, and charged, past the token cap.
		room := len(s) - (o.outBytes - int(limit))
		s = truncate(s, max(0, min(room, len(s))))
		o.parser.Write(s, sink)
		return s, true
	}
	o.parser.Write(s, sink)
	if !o.textSeen {
		// The first words reach the user at once (or, while claims are
		// checked, at the end of the first sentence); later prose is
		// buffered by the parser to reduce jitter.
		o.textSeen = true
		o.parser.FlushProse(sink)
	}
	return s, false
}

// reasoning takes the model's reasoning: shown and stored apart from the
// answer, never replayed to the model. It reports whether the output cap
// ended the call.
func (o *transcript) reasoning(s string, limit int64, emit func(blocks.Block)) bool {
	if o.wrote(len(s), limit) {
		return true
	}
	sink := o.claims.sink(emit)
	o.parser.FlushProse(sink) // prose waiting in the parser goes first
	sink(blocks.Block{Kind: blocks.Reasoning, Content: s})
	return false
}

// flush emits what the parser still holds.
func (o *transcript) flush(emit func(blocks.Block)) {
	o.parser.Flush(o.claims.sink(emit))
	o.claims.flush()
}

// answerText is the text of the turn's answer.
func (o *transcript) answerText() string {
	var b strings.Builder
	for _, m := range o.msgs {
		if m.Role == providers.Assistant {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}

// reply is the stored reply m as it stands: the blocks kept so far and,
// for a reply that ended with err (nil: complete or still streaming), the
// same error block that streamed, and the status.
func (o *transcript) reply(m store.Message, err error) store.Message {
	m.Blocks = o.storedBlocks()
	m.Status = replyStatus(err)
	if err != nil {
		m.Blocks = blocks.Absorb(m.Blocks, errorBlockFor(err))
	}
	return m
}

// replyStatus is the stored status of a reply that ended with err.
func replyStatus(err error) store.Status {
	switch {
	case err == nil:
		return store.StatusComplete
	case errors.Is(err, ErrCancelled):
		return store.StatusCancelled
	default:
		return store.StatusFailed
	}
}

// modelMessages are the turn's model messages as the store keeps them for
// replay (see persistable and storable), scrubbed of credentials (C9):
// the model's text and its calls' arguments as well as the tool results,
// which answer scrubbed already, so no replay sends a secret back. nil
// when there are none.
func (o *transcript) modelMessages(log *slog.Logger) json.RawMessage {
	msgs := persistable(o.msgs, o.invalid)
	if len(msgs) == 0 {
		return nil
	}
	msgs = scrubMessages(msgs)
	raw, err := json.Marshal(storable(msgs))
	if err != nil {
		log.Error("assistant: encode model messages", "err", err)
	}
	return raw
}

// storable returns msgs ready to encode: a tool call whose arguments are not
// valid JSON (the model's mistake, already answered with INVALID_ARGS) keeps
// its text as a JSON string, so one bad call cannot lose the turn's history.
func storable(msgs []providers.Message) []providers.Message {
	out := msgs
	for i, m := range msgs {
		for j, c := range m.ToolCalls {
			if len(c.Args) == 0 || json.Valid(c.Args) {
				continue
			}
			if &out[0] == &msgs[0] {
				out = slices.Clone(msgs)
			}
			if &out[i].ToolCalls[0] == &msgs[i].ToolCalls[0] {
				out[i].ToolCalls = slices.Clone(m.ToolCalls)
			}
			quoted, _ := json.Marshal(string(c.Args))
			out[i].ToolCalls[j].Args = quoted
		}
	}
	return out
}

// scrubMessages returns msgs with credentials scrubbed from their text and
// their calls' arguments; msgs itself is not changed.
func scrubMessages(msgs []providers.Message) []providers.Message {
	out := make([]providers.Message, len(msgs))
	for i, m := range msgs {
		m.Content, _ = guard.Scrub(m.Content)
		if len(m.ToolCalls) > 0 {
			m.ToolCalls = slices.Clone(m.ToolCalls)
			for j := range m.ToolCalls {
				m.ToolCalls[j].Args, _ = guard.ScrubJSON(m.ToolCalls[j].Args)
			}
		}
		out[i] = m
	}
	return out
}
