package assistant

import (
	"sync"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// transcript is what a turn says, in the three forms it takes: the blocks
// the user sees and the store keeps, the model messages replayed on later
// turns, and the turn's outcome (usage, finish reason, error). The worker
// goroutine writes it; the stored blocks are also read, under mu, by the
// heartbeat and the stop write.
type transcript struct {
	parser blocks.Parser
	mu     sync.Mutex          // guards stored
	stored blocks.List         // the blocks as they will be persisted
	msgs   []providers.Message // model messages of this turn

	usage    providers.Usage
	finish   string
	err      error // why the turn failed, if it did
	textSeen bool  // the model has streamed text this turn

	callIDs map[string]bool // every call id of the thread, so new ones stay unique
	invalid map[string]bool // call ids that never validly reached a tool; not stored

	outBytes int  // what the model wrote this turn, for the output cap
	capped   bool // the output cap ended the turn
}

// add keeps b in the stored blocks.
func (o *transcript) add(b blocks.Block) {
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

// called records the model's message that makes tool calls, with the text
// that came with them.
func (o *transcript) called(text string, calls []providers.ToolCall) {
	o.msgs = append(o.msgs, providers.Message{Role: providers.Assistant, Content: text, ToolCalls: calls})
}

// answered records a tool's answer to the call with that id, as the model
// reads it.
func (o *transcript) answered(id, content string) {
	o.msgs = append(o.msgs, providers.Message{Role: providers.Tool, ToolCallID: id, Content: content})
}

// say records the model's text from a call whose tool calls, if any, will
// not run: the model message that ends the turn.
func (o *transcript) say(text string) {
	if text != "" {
		o.msgs = append(o.msgs, providers.Message{Role: providers.Assistant, Content: text})
	}
}
