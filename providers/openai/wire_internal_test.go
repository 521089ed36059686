package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parleyhq/parley/providers/providertest"
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
		gotErr := got.decode(data)
		var sdk oai.ChatCompletionChunk
		sdkErr := json.Unmarshal(data, &sdk)
		if (gotErr == nil) != (sdkErr == nil) {
			t.Fatalf("%q: error %v, openai-go's %v", data, gotErr, sdkErr)
		}
		if sdkErr != nil {
			return
		}
		if providertest.AmbiguousKeys(data, wireKeys) {
			return
		}
		if want := fromSDK(sdk); !reflect.DeepEqual(canon(got), canon(want)) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// canon is c with empty slices nil: encoding/json makes [] an empty
// slice, openai-go's type a nil one.
func canon(c wireChunk) wireChunk {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	choices := slices.Clone(c.Choices)
	for i := range choices {
		if len(choices[i].Delta.ToolCalls) == 0 {
			choices[i].Delta.ToolCalls = nil
		}
	}
	c.Choices = choices
	return c
}

// wireKeys are the keys a wireChunk reads.
var wireKeys = []string{"model", "choices", "usage", "index", "delta", "finish_reason", "content", "refusal",
	"reasoning_content", "reasoning", "tool_calls", "id", "function", "name", "arguments",
	"prompt_tokens", "completion_tokens", "prompt_tokens_details", "cached_tokens"}

// The fallback is taken: a chunk whose index is a string, or whose usage
// counts are floats, reads as openai-go read it.
func TestAChunkThePlainTypeCannotHoldIsReadByOpenAIGo(t *testing.T) {
	var c wireChunk
	if err := c.decode([]byte(`{"choices":[{"index":"0","delta":{"content":"x"}}],"usage":{"prompt_tokens":12.0,"completion_tokens":3}}`)); err != nil {
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
			if err := c.decode(data); err != nil {
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

// The fuzz target compares the seeds servers send: none of them has a
// key providertest.AmbiguousKeys reports.
func TestTheFuzzTargetComparesRealSeeds(t *testing.T) {
	for _, in := range wireSeeds[:2] {
		if providertest.AmbiguousKeys([]byte(in), wireKeys) {
			t.Errorf("AmbiguousKeys(%s) = true: the fuzz target skips it", in)
		}
	}
}

// FuzzChunks holds chunks to openai-go's ssestream.Stream on any SSE
// body: the same chunks, and the same end.
func FuzzChunks(f *testing.F) {
	for _, s := range chunkStreamSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		compareReadings(t, body)
	})
}

// chunkStreamSeeds are SSE bodies: the stream's end, error events, named
// events, comments, a [DONE] with more after it, data split over lines.
var chunkStreamSeeds = []string{
	"data: " + wireSeeds[0] + "\n\ndata: " + wireSeeds[2] + "\n\ndata: [DONE]\n\n",
	"data: " + wireSeeds[1] + "\n\ndata: [DONE]\n\ndata: " + wireSeeds[0] + "\n\n",
	": OPENROUTER PROCESSING\n\ndata: " + wireSeeds[3] + "\n\n",
	"data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n",
	"data: {\"error\": null}\n\ndata: " + wireSeeds[0] + "\n\n",
	"data: {\"error\":\"boom\"\n\n",
	"event: thread.run\ndata: {\"x\":1}\n\n",
	"event: error\ndata: {\"message\":\"x\"}\n\n",
	"data: {\"choices\":\ndata: [{\"index\":0,\"delta\":{\"content\":\"split\"}}]}\n\n",
	"data: not json\n\n",
	"data: [DONE]",
	"data: " + wireSeeds[7] + "\r\n\r\n",
	"",
}

// compareReadings reads body as a response through chunks and through
// openai-go's ssestream.Stream of its own chunk type, and fails t unless
// they yield the same chunks and end alike.
func compareReadings(t *testing.T, body []byte) {
	t.Helper()
	resp := func() *http.Response {
		return &http.Response{
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"text/event-stream"}},
			Body:       io.NopCloser(bytes.NewReader(body)),
		}
	}
	ours := newChunks(resp(), nil)
	sdk := ssestream.NewStream[oai.ChatCompletionChunk](ssestream.NewDecoder(resp()), nil)
	for i := 0; ; i++ {
		a, b := ours.Next(), sdk.Next()
		if a != b {
			t.Fatalf("%q: event %d: chunks goes on %v, ssestream %v (errors %v, %v)", body, i, a, b, ours.Err(), sdk.Err())
		}
		if !a {
			break
		}
		raw := sdk.Current().RawJSON()
		if providertest.AmbiguousKeys([]byte(raw), wireKeys) {
			return
		}
		if got, want := canon(ours.Current()), canon(fromSDK(sdk.Current())); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: event %d:\n got %+v\nwant %+v", body, i, got, want)
		}
	}
	ea, eb := ours.Err(), sdk.Err()
	if (ea == nil) != (eb == nil) || ea != nil && (ea.Error() != eb.Error() || reflect.TypeOf(ea) != reflect.TypeOf(eb)) {
		t.Fatalf("%q: chunks ends with %T %v, ssestream with %T %v", body, ea, ea, eb, eb)
	}
}

func TestChunksReadAsSSEStreamReads(t *testing.T) {
	for _, s := range chunkStreamSeeds {
		compareReadings(t, []byte(s))
	}
}

// closeCounter counts Close calls and returns err from each.
type closeCounter struct {
	io.Reader
	n   int
	err error
}

func (c *closeCounter) Close() error { c.n++; return c.err }

// chunks closes its body when ssestream.Stream does: a request error closes
// it on the first Next, every Close returns the first one's result, and a
// Close from another goroutine ends a Next that waits for the body.
func TestChunksCloseAsSSEStreamCloses(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}

	body := &closeCounter{Reader: strings.NewReader("")}
	c := newChunks(&http.Response{StatusCode: 400, Header: sse, Body: body}, errors.New("400"))
	if c.Next() || body.n != 1 || c.Err() == nil {
		t.Errorf("after a request error: Next went on, or the body was closed %d times, or Err is %v", body.n, c.Err())
	}

	body = &closeCounter{Reader: strings.NewReader(""), err: errors.New("close failed")}
	c = newChunks(&http.Response{StatusCode: 200, Header: sse, Body: body}, nil)
	for c.Next() {
	}
	if err1, err2 := c.Close(), c.Close(); body.n != 1 || err1 == nil || err2 == nil {
		t.Errorf("closed %d times, Close gave %v then %v; want once, the first result each time", body.n, err1, err2)
	}

	r, w := io.Pipe()
	defer w.Close()
	c = newChunks(&http.Response{StatusCode: 200, Header: sse, Body: r}, nil)
	done := make(chan bool)
	go func() { done <- c.Next() }()
	time.Sleep(10 * time.Millisecond) // Next waits for the body
	_ = c.Close()
	if <-done {
		t.Error("Next went on after Close")
	}
}
