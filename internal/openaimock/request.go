package openaimock

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Raw    []byte // the body as received
	Body   ChatRequest
	// Fields holds every top-level body field, for fields ChatRequest does
	// not model (extra body fields, provider extensions).
	Fields map[string]json.RawMessage
	// DecodeErr is set when the body was not a JSON object.
	DecodeErr error
}

// ChatRequest is the decoded body of a chat-completions request.
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []Message      `json:"messages"`
	Tools               []Tool         `json:"tools,omitempty"`
	MaxTokens           *int64         `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64         `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *StreamOptions `json:"stream_options,omitempty"`
}

// StreamOptions is the stream_options request field.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one entry of the messages array.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"` // a string or an array of content parts
	Name       string          `json:"name,omitempty"`
	ToolCalls  []MessageCall   `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text returns the message content as text: the string, or the text parts
// joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// MessageCall is a tool call replayed in an assistant message.
type MessageCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is one entry of the tools array.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	} `json:"function"`
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

func (r recorded) decode() Request {
	req := Request{Method: r.method, Path: r.path, Header: r.header.Clone(), Raw: r.body}
	if err := json.Unmarshal(r.body, &req.Fields); err != nil {
		req.DecodeErr = err
		return req
	}
	req.DecodeErr = json.Unmarshal(r.body, &req.Body)
	return req
}
