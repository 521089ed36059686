package openai

import (
	"encoding/json"

	oai "github.com/openai/openai-go/v3"

	"github.com/parleyhq/parley/providers"
)

// reasoningFields are the non-standard delta fields servers use for visible
// reasoning: reasoning_content (DeepSeek, LM Studio, older vLLM) and
// reasoning (vLLM, Ollama, OpenRouter).
var reasoningFields = [...]string{"reasoning_content", "reasoning"}

// maxModelName bounds the model name a server reports that is kept.
const maxModelName = 256

// chunk handles one chunk and reports whether the consumer wants more.
func chunk(a *providers.Assembler, c oai.ChatCompletionChunk, yield func(providers.Event, error) bool) bool {
	if c.Model != "" && len(c.Model) <= maxModelName {
		a.Model = c.Model
	}
	if c.JSON.Usage.Valid() {
		// Some servers repeat cumulative usage on every chunk; keep the last.
		a.Usage = &providers.Usage{
			InputTokens:       c.Usage.PromptTokens,
			OutputTokens:      c.Usage.CompletionTokens,
			CachedInputTokens: c.Usage.PromptTokensDetails.CachedTokens,
		}
	}
	for _, ch := range c.Choices {
		// Parley never asks for n > 1, and nothing may follow the finish
		// reason: tool calls were already emitted then.
		if ch.Index != 0 || a.Finished() {
			continue
		}
		d := ch.Delta
		for _, f := range reasoningFields {
			if text := rawString(d.JSON.ExtraFields[f].Raw()); text != "" {
				if !yield(providers.Event{Kind: providers.ReasoningDelta, Text: text}, nil) {
					return false
				}
				break
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
