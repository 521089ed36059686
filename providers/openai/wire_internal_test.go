package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
)

// wireSeeds are chunks as servers send them, and the quirks that send a
// chunk to openai-go's decoder.
var wireSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732700000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" answer"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`,
	`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"a\":"}},{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":null}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"x","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":200,"total_tokens":300,"prompt_tokens_details":{"cached_tokens":64}}}`,
	`{"id":"x","choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"other"}}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{"reasoning":"only this"}}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{"reasoning":12,"content":"n"}}]}`,
	`{"id":"x","choices":[{"index":"0","delta":{"content":"string index"}}]}`,
	`{"id":"x","choices":[],"usage":{"prompt_tokens":12.0,"completion_tokens":3}}`,
	`{"id":"x","choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}],"usage":{}}`,
	`{"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}],"choices":[]}`,
	`{"choices":[{"index":1,"delta":{"content":"second choice"}}],"model":"` + "\xff" + `"}`,
	`{"choices":[{"delta":{"content":"a\u0000b\ud800"}}]}`,
	`{"choices":null,"usage":null,"model":null}`,
	`{"choices":{"index":0}}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"delta":{"refusal":"b"}}],"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"a"},"function":{"arguments":"{}"}}]}}]}`,
	`[]`, `null`, `"x"`, `{`, ``,
}

// FuzzWireChunk holds the plain decoding of a chunk to what openai-go's
// decoder reads of it: the same fields, the same error.
func FuzzWireChunk(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got wireChunk
		gotErr := json.Unmarshal(data, &got)
		var sdk oai.ChatCompletionChunk
		sdkErr := json.Unmarshal(data, &sdk)
		if (gotErr == nil) != (sdkErr == nil) {
			t.Fatalf("%q: error %v, openai-go's %v", data, gotErr, sdkErr)
		}
		if sdkErr != nil {
			return
		}
		if ambiguousKeys(data) {
			return
		}
		if want := fromSDK(sdk); !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// wireKeys are the keys a wireChunk reads.
var wireKeys = []string{"model", "choices", "usage", "index", "delta", "finish_reason", "content", "refusal",
	"reasoning_content", "reasoning", "tool_calls", "id", "function", "name", "arguments",
	"prompt_tokens", "completion_tokens", "prompt_tokens_details", "cached_tokens"}

// ambiguousKeys reports whether valid JSON data repeats a key within an
// object, or holds a key equal to one of wireKeys only when case is
// ignored: encoding/json reads the last of repeated keys and matches keys
// regardless of case, where openai-go reads the first and matches exactly.
func ambiguousKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var objects []map[string]bool // the keys seen in each open object
	var inArray []bool            // whether each open container is an array
	expectKey := func() bool { return len(inArray) > 0 && !inArray[len(inArray)-1] }
	key := true
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				objects = append(objects, map[string]bool{})
				inArray = append(inArray, false)
				key = true
				continue
			case '[':
				inArray = append(inArray, true)
			case '}':
				objects = objects[:len(objects)-1]
				inArray = inArray[:len(inArray)-1]
			case ']':
				inArray = inArray[:len(inArray)-1]
			}
		case string:
			if expectKey() && key {
				seen := objects[len(objects)-1]
				if seen[tok] {
					return true
				}
				seen[tok] = true
				for _, k := range wireKeys {
					if tok != k && strings.EqualFold(tok, k) {
						return true
					}
				}
				key = false
				continue
			}
		}
		key = expectKey() // a value ended: a key comes next in an object
	}
}

// normal is c with every string as encoding/json would decode it, one
// U+FFFD per invalid byte.
func normal(c wireChunk) wireChunk {
	n := func(s string) string { return string([]rune(s)) }
	c.Model = n(c.Model)
	choices := make([]wireChoice, len(c.Choices))
	for i, ch := range c.Choices {
		d := ch.Delta
		d.Content, d.Refusal, d.Reasoning, d.ReasoningContent = n(d.Content), n(d.Refusal), n(d.Reasoning), n(d.ReasoningContent)
		calls := make([]wireToolCall, len(d.ToolCalls))
		for j, tc := range d.ToolCalls {
			tc.ID, tc.Function.Name, tc.Function.Arguments = n(tc.ID), n(tc.Function.Name), n(tc.Function.Arguments)
			calls[j] = tc
		}
		if len(calls) == 0 {
			calls = nil
		}
		d.ToolCalls = calls
		ch.Delta, ch.FinishReason = d, n(ch.FinishReason)
		choices[i] = ch
	}
	if len(choices) == 0 {
		choices = nil
	}
	c.Choices = choices
	return c
}

// The fallback is taken: a chunk whose index is a string, or whose usage
// counts are floats, reads as openai-go read it.
func TestAChunkThePlainTypeCannotHoldIsReadByOpenAIGo(t *testing.T) {
	var c wireChunk
	if err := json.Unmarshal([]byte(`{"choices":[{"index":"0","delta":{"content":"x"}}],"usage":{"prompt_tokens":12.0,"completion_tokens":3}}`), &c); err != nil {
		t.Fatal(err)
	}
	var plain struct {
		Choices []wireChoice
	}
	if json.Unmarshal([]byte(`{"choices":[{"index":"0"}]}`), &plain) == nil {
		t.Fatal("a string index decodes as a plain struct: this test no longer reaches the fallback")
	}
	if len(c.Choices) != 1 || c.Choices[0].Delta.Content != "x" || c.Usage == nil || c.Usage.PromptTokens != 12 || c.Usage.CompletionTokens != 3 {
		t.Fatalf("got %+v", c)
	}
}

func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(wireSeeds[0])
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("openai-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c oai.ChatCompletionChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The fuzz target skips the chunks ambiguousKeys reports; it must report
// only those.
func TestAmbiguousKeysAreRepeatedOrFoldedOnes(t *testing.T) {
	for in, want := range map[string]bool{
		wireSeeds[0]: false,
		wireSeeds[1]: false,
		`{"choices":[{"delta":{"content":"a"},"delta":{}}]}`:          true,
		`{"choices":[],"choices":[]}`:                                 true,
		`{"a":{"x":1},"b":{"x":1}}`:                                   false,
		`{"choices":[{"Delta":{"content":"a"}}]}`:                     true,
		`{"choices":[{"delta":{"content":"{\"content\":1}"}}]}`:       false,
		`[{"content":"a"},{"content":"b"}]`:                           false,
		`{"choices":[{"index":0},{"index":1}],"x":["model","model"]}`: false,
	} {
		if got := ambiguousKeys([]byte(in)); got != want {
			t.Errorf("ambiguousKeys(%s) = %v, want %v", in, got, want)
		}
	}
}
