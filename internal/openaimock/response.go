package openaimock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// Response scripts the answer to one request.
//
// A zero Status streams a completion: the leading role chunk, then one chunk
// per Reasoning piece, per Text piece and per tool-call argument piece, then
// the finish chunk, the usage chunk (only when the request set
// stream_options.include_usage) and "data: [DONE]".
type Response struct {
	Model     string     // "model" of every chunk; "" = "mock-model"
	Reasoning []string   // reasoning deltas, sent before the text
	Text      []string   // content deltas, one chunk each
	ToolCalls []ToolCall // several = parallel calls, streamed one after another by index
	// InterleaveToolCalls sends the argument pieces of parallel calls round
	// robin (call 0 piece 0, call 1 piece 0, ...) instead of call after call,
	// as some OpenAI-compatible servers do.
	InterleaveToolCalls bool
	// ReasoningField names the delta field of Reasoning pieces:
	// "reasoning_content" (DeepSeek, vLLM; the default) or "reasoning"
	// (OpenRouter, Ollama).
	ReasoningField string
	FinishReason   string // "" = "tool_calls" when ToolCalls is set, else "stop"
	Usage          Usage  // sent in the final usage chunk

	// Status, when non-zero, answers with this HTTP status and an
	// OpenAI-style error body instead of a stream.
	Status int
	Error  *APIError   // the error body; nil = a default for Status
	Header http.Header // extra response headers (Retry-After, x-should-retry, ...)

	// Fault breaks the stream after FaultAfter deltas (reasoning, text and
	// tool-call pieces counted together; the role chunk always goes first).
	// A FaultAfter past the last delta faults after the finish chunk.
	Fault      Fault
	FaultAfter int
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID   string
	Name string
	Args []string // argument pieces, one delta each; joined they form the JSON arguments
}

// Usage is the token usage reported in the usage chunk.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	CachedTokens     int64 // prompt_tokens_details.cached_tokens
	ReasoningTokens  int64 // completion_tokens_details.reasoning_tokens
}

// APIError is the body of an error response, {"error": {...}}.
type APIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Fault is a way for a stream to break.
type Fault uint8

// Faults.
const (
	NoFault   Fault = iota
	Drop            // close the connection without finishing the stream
	Malformed       // send a chunk that is not valid JSON, then carry on
	Stall           // stop sending and hold the connection until the client goes away
)

// Text returns a Response streaming chunks as content deltas.
func Text(chunks ...string) Response { return Response{Text: chunks} }

// Error returns a Response answering with status and an OpenAI-style error
// body typical of that status (401 invalid_api_key, 404 model_not_found,
// 429 rate_limit_exceeded, 5xx server_error).
func Error(status int) Response { return Response{Status: status} }

func defaultError(status int) APIError {
	code := func(s string) *string { return &s }
	switch {
	case status == http.StatusUnauthorized:
		return APIError{Message: "Incorrect API key provided: sk-mock. You can find your API key at https://platform.openai.com/account/api-keys.", Type: "invalid_request_error", Code: code("invalid_api_key")}
	case status == http.StatusNotFound:
		return APIError{Message: "The model `mock-model` does not exist or you do not have access to it.", Type: "invalid_request_error", Code: code("model_not_found")}
	case status == http.StatusTooManyRequests:
		return APIError{Message: "Rate limit reached for requests. Please try again later.", Type: "requests", Code: code("rate_limit_exceeded")}
	case status >= 500:
		return APIError{Message: "The server had an error while processing your request. Sorry about that!", Type: "server_error"}
	default:
		return APIError{Message: fmt.Sprintf("openaimock: scripted status %d", status), Type: "invalid_request_error"}
	}
}

// prepared is a Response rendered to bytes once.
type prepared struct {
	resp       Response
	errBody    []byte   // Status != 0
	chunks     [][]byte // role chunk, one per delta, finish chunk; each a whole SSE event
	chunksNull [][]byte // chunks with "usage":null, for include_usage requests
	usage      []byte   // the usage chunk event
	plain      []byte   // chunks + [DONE]
	withUsage  []byte   // chunks + usage + [DONE]
	malformed  []byte
}

var responseSeq atomic.Int64

var doneEvent = []byte("data: [DONE]\n\n")

// The wire shapes of a chunk, with fields in OpenAI's order. Usage is a
// json.RawMessage so non-final chunks can carry an explicit null, as OpenAI
// sends when include_usage is set; an omitted usage is the other variant.
type chunkJSON struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []choiceJSON    `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type choiceJSON struct {
	Index        int             `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type toolDeltaJSON struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func prepare(r Response) *prepared {
	p := &prepared{resp: r}
	if r.Status != 0 {
		body := defaultError(r.Status)
		if r.Error != nil {
			body = *r.Error
		}
		p.errBody = mustJSON(map[string]APIError{"error": body})
		return p
	}
	model := r.Model
	if model == "" {
		model = "mock-model"
	}
	base := chunkJSON{
		ID:                fmt.Sprintf("chatcmpl-mock%d", responseSeq.Add(1)),
		Object:            "chat.completion.chunk",
		Created:           1700000000,
		Model:             model,
		SystemFingerprint: "fp_mock",
	}
	event := func(delta any, finish *string) []byte {
		c := base
		c.Choices = []choiceJSON{{Delta: mustJSON(delta), FinishReason: finish}}
		return sse(mustJSON(c))
	}

	p.chunks = append(p.chunks, event(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	field := r.ReasoningField
	if field == "" {
		field = "reasoning_content"
	}
	for _, s := range r.Reasoning {
		p.chunks = append(p.chunks, event(map[string]string{field: s}, nil))
	}
	for _, s := range r.Text {
		p.chunks = append(p.chunks, event(map[string]string{"content": s}, nil))
	}
	for _, td := range toolDeltas(r.ToolCalls, r.InterleaveToolCalls) {
		p.chunks = append(p.chunks, event(map[string]any{"tool_calls": []toolDeltaJSON{td}}, nil))
	}
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(r.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	p.chunks = append(p.chunks, event(map[string]any{}, &finish))

	u := base
	u.Choices = []choiceJSON{}
	u.Usage = mustJSON(map[string]any{
		"prompt_tokens":     r.Usage.PromptTokens,
		"completion_tokens": r.Usage.CompletionTokens,
		"total_tokens":      r.Usage.PromptTokens + r.Usage.CompletionTokens,
		"prompt_tokens_details": map[string]int64{
			"cached_tokens": r.Usage.CachedTokens, "audio_tokens": 0,
		},
		"completion_tokens_details": map[string]int64{
			"reasoning_tokens": r.Usage.ReasoningTokens, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
		},
	})
	p.usage = sse(mustJSON(u))

	var plain, withUsage bytes.Buffer
	for _, c := range p.chunks {
		plain.Write(c)
		// With include_usage OpenAI adds "usage":null to every other chunk.
		c = bytes.Replace(c, []byte(`"choices":`), []byte(`"usage":null,"choices":`), 1)
		p.chunksNull = append(p.chunksNull, c)
		withUsage.Write(c)
	}
	plain.Write(doneEvent)
	withUsage.Write(p.usage)
	withUsage.Write(doneEvent)
	p.plain, p.withUsage = plain.Bytes(), withUsage.Bytes()
	p.malformed = sse([]byte(`{"id":"` + base.ID + `","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"trunc`))
	return p
}

// toolDeltas splits calls into OpenAI-style deltas: the first delta of a call
// carries its id, type and name with empty arguments, the following ones an
// argument piece each.
func toolDeltas(calls []ToolCall, interleave bool) []toolDeltaJSON {
	perCall := make([][]toolDeltaJSON, len(calls))
	for i, c := range calls {
		head := toolDeltaJSON{Index: i, ID: c.ID, Type: "function"}
		head.Function.Name = c.Name
		perCall[i] = append(perCall[i], head)
		for _, a := range c.Args {
			d := toolDeltaJSON{Index: i}
			d.Function.Arguments = a
			perCall[i] = append(perCall[i], d)
		}
	}
	var out []toolDeltaJSON
	if !interleave {
		for _, ds := range perCall {
			out = append(out, ds...)
		}
		return out
	}
	for k := 0; ; k++ {
		more := false
		for _, ds := range perCall {
			if k < len(ds) {
				out = append(out, ds[k])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

func sse(data []byte) []byte {
	b := make([]byte, 0, len(data)+8)
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, '\n', '\n')
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("openaimock: " + err.Error())
	}
	return b
}
