package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/parleyhq/parley/providers"
)

// maxModelName bounds the model name a server reports that is kept.
const maxModelName = 256

// wireChunk is the part of a chat.completion.chunk this package reads.
//
// openai-go decodes a chunk into its full type through its own reflection
// decoder, which keeps the raw JSON of every field: about 12 µs and 63
// allocations for a typical content delta, paid for each of the hundreds
// of chunks an answer streams, where this type takes about 3 µs and 12.
// A chunk this type cannot hold (a field of an unexpected JSON type: a
// string index, a float token count) or that is not valid UTF-8 is decoded
// by openai-go instead, as before (decode), so a server's quirks read as
// they did; FuzzWireChunk holds the two decodings equal. Two differences
// remain, in chunks no server sends: a key repeated within one object
// reads as its last (openai-go read the first), and a key in other case
// ("Content") matches as encoding/json matches it.
type wireChunk struct {
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
}

type wireChoice struct {
	Index        int64     `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// wireDelta's reasoning fields are the non-standard ones servers use for
// visible reasoning: reasoning_content (DeepSeek, LM Studio, older vLLM)
// and reasoning (vLLM, Ollama, OpenRouter).
type wireDelta struct {
	Content          string         `json:"content"`
	Refusal          string         `json:"refusal"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// decode decodes data as a plain struct, and through openai-go's type
// when that fails; the error is openai-go's.
func (c *wireChunk) decode(data []byte) error {
	// encoding/json makes each invalid UTF-8 byte U+FFFD, where the SDK's
	// decoder keeps the bytes: a character a server splits across two
	// chunks must join again in the assembled text or arguments.
	if utf8.Valid(data) && json.Unmarshal(data, c) == nil {
		return nil
	}
	var sdk oai.ChatCompletionChunk
	if err := json.Unmarshal(data, &sdk); err != nil {
		return err
	}
	*c = fromSDK(sdk)
	return nil
}

// chunks reads a chat-completions stream as openai-go's ssestream.Stream
// reads it, event by event from its Decoder: an event whose data begins
// with [DONE] ends the stream, one whose JSON has a top-level "error" fails
// it with the same *ssestream.StreamError, and any other is a chunk. It
// decodes each chunk once: through ssestream.Stream, encoding/json would
// validate the chunk for an UnmarshalJSON method and then again inside it,
// about 1.8 µs of a chunk's 4.4 (TestChunksReadAsSSEStreamReads holds the
// two readings equal).
type chunks struct {
	dec       ssestream.Decoder
	cur       wireChunk
	err       error
	done      atomic.Bool // Close was called; it may be, while Next reads
	closeOnce sync.Once
	closeErr  error
}

// newChunks reads res, the response of a request that failed with err when
// err is not nil.
func newChunks(res *http.Response, err error) *chunks {
	return &chunks{dec: ssestream.NewDecoder(res), err: err}
}

// Next reads the next chunk into Current; false at the end of the stream,
// on its error (Err), or once closed.
func (s *chunks) Next() bool {
	if s.err != nil {
		return s.finish(s.err)
	}
	if s.done.Load() || s.dec == nil {
		return false
	}
	if !s.dec.Next() {
		return s.finish(s.dec.Err())
	}
	ev := s.dec.Event()
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		return s.finish(nil)
	}
	if ep := gjson.GetBytes(ev.Data, "error"); ep.Exists() {
		return s.finish(&ssestream.StreamError{Message: fmt.Sprintf("received error while streaming: %s", ep.String()), Event: ev})
	}
	s.cur = wireChunk{}
	if strings.HasPrefix(ev.Type, "thread.") {
		// The Assistants API's events, which ssestream wraps before it
		// decodes them; no chat server sends them: read as it reads them.
		sdk := ssestream.NewStream[oai.ChatCompletionChunk](&oneEvent{ev: ev}, nil)
		if !sdk.Next() {
			return s.finish(sdk.Err())
		}
		s.cur = fromSDK(sdk.Current())
		return true
	}
	if err := s.cur.decode(ev.Data); err != nil {
		return s.finish(err)
	}
	return true
}

// finish ends the stream with err, closing the body, and returns false.
func (s *chunks) finish(err error) bool {
	s.err = err
	_ = s.Close()
	return false
}

func (s *chunks) Current() wireChunk { return s.cur }

func (s *chunks) Err() error { return s.err }

// Close closes the response body once; every call returns what the first
// returned.
func (s *chunks) Close() error {
	s.closeOnce.Do(func() {
		s.done.Store(true)
		if s.dec != nil {
			s.closeErr = s.dec.Close()
		}
	})
	return s.closeErr
}

// oneEvent is an ssestream.Decoder of one event.
type oneEvent struct {
	ev   ssestream.Event
	read bool
}

func (d *oneEvent) Next() bool {
	if d.read {
		return false
	}
	d.read = true
	return true
}

func (d *oneEvent) Event() ssestream.Event { return d.ev }
func (d *oneEvent) Close() error           { return nil }
func (d *oneEvent) Err() error             { return nil }

// fromSDK is the part of c this package reads.
func fromSDK(c oai.ChatCompletionChunk) wireChunk {
	w := wireChunk{Model: c.Model}
	if c.JSON.Usage.Valid() {
		w.Usage = &wireUsage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
		w.Usage.PromptTokensDetails.CachedTokens = c.Usage.PromptTokensDetails.CachedTokens
	}
	for _, ch := range c.Choices {
		d := wireDelta{
			Content:          ch.Delta.Content,
			Refusal:          ch.Delta.Refusal,
			ReasoningContent: rawString(ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()),
			Reasoning:        rawString(ch.Delta.JSON.ExtraFields["reasoning"].Raw()),
		}
		for _, tc := range ch.Delta.ToolCalls {
			t := wireToolCall{Index: tc.Index, ID: tc.ID}
			t.Function.Name, t.Function.Arguments = tc.Function.Name, tc.Function.Arguments
			d.ToolCalls = append(d.ToolCalls, t)
		}
		w.Choices = append(w.Choices, wireChoice{Index: ch.Index, Delta: d, FinishReason: ch.FinishReason})
	}
	return w
}

// chunk handles one chunk and reports whether the consumer wants more.
func chunk(a *providers.Assembler, c wireChunk, yield func(providers.Event, error) bool) bool {
	if c.Model != "" && len(c.Model) <= maxModelName {
		a.Model = c.Model
	}
	if u := c.Usage; u != nil {
		// Some servers repeat cumulative usage on every chunk; keep the last.
		a.Usage = &providers.Usage{
			InputTokens:       u.PromptTokens,
			OutputTokens:      u.CompletionTokens,
			CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		// Parley never asks for n > 1, and nothing may follow the finish
		// reason: tool calls were already emitted then.
		if ch.Index != 0 || a.Finished() {
			continue
		}
		d := &ch.Delta
		if text := cmp.Or(d.ReasoningContent, d.Reasoning); text != "" {
			if !yield(providers.Event{Kind: providers.ReasoningDelta, Text: text}, nil) {
				return false
			}
		}
		if d.Content != "" {
			if !yield(providers.Event{Kind: providers.TextDelta, Text: d.Content}, nil) {
				return false
			}
		}
		if d.Refusal != "" {
			// A refusal is the model's answer to the user.
			if !yield(providers.Event{Kind: providers.TextDelta, Text: d.Refusal}, nil) {
				return false
			}
		}
		for _, tc := range d.ToolCalls {
			if !a.Append(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments, yield) {
				return false
			}
		}
		if ch.FinishReason != "" && !a.Finish(finishReason(ch.FinishReason), yield) {
			return false
		}
	}
	return true
}

func finishReason(s string) providers.FinishReason {
	switch s {
	case "stop":
		return providers.FinishStop
	case "length":
		return providers.FinishLength
	case "tool_calls", "function_call":
		return providers.FinishToolCalls
	case "content_filter":
		return providers.FinishContentFilter
	}
	return providers.FinishReason(s)
}

// rawString decodes a raw JSON string value; anything else is "".
func rawString(raw string) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}
