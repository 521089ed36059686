package anthropic_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
	"github.com/parleyhq/parley/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.HarnessFunc(func(t *testing.T, s providertest.Scenario) providertest.Model {
		mock := newMock()
		mock.setFallback(scenarioResponse(s))
		ts := mock.start(t)
		p := anthropic.New(anthropic.Config{BaseURL: ts.URL, APIKey: "sk-ant-test", Model: "default-model", HTTPClient: ts.Client()})
		return providertest.Model{
			Provider: p,
			Received: func() []providers.Request {
				var out []providers.Request
				for _, r := range mock.requests() {
					out = append(out, neutralRequest(t, r))
				}
				return out
			},
		}
	}))
}

// scenarioResponse renders a Scenario as the mock server's response.
func scenarioResponse(s providertest.Scenario) mockResponse {
	r := mockResponse{
		Reasoning: s.Reasoning,
		Text:      s.Text,
		Usage: mockUsage{
			Input:      s.Usage.InputTokens - s.Usage.CachedInputTokens - s.Usage.CacheWriteInputTokens,
			Output:     s.Usage.OutputTokens,
			CacheRead:  s.Usage.CachedInputTokens,
			CacheWrite: s.Usage.CacheWriteInputTokens,
		},
		FaultAfter: len(s.Reasoning) + s.FaultAfter,
	}
	switch s.Finish {
	case providers.FinishStop:
		r.StopReason = "end_turn"
	case providers.FinishLength:
		r.StopReason = "max_tokens"
	case providers.FinishToolCalls:
		r.StopReason = "tool_use"
	case providers.FinishContentFilter:
		r.StopReason = "refusal"
	}
	for _, c := range s.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, mockCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	switch s.Fault {
	case providertest.FaultStatus:
		r.Status = s.Status
		if s.RetryAfter > 0 {
			r.Header = http.Header{"Retry-After": {strconv.Itoa(int(s.RetryAfter.Seconds()))}}
		}
	case providertest.FaultDrop:
		r.Fault = faultDrop
	case providertest.FaultMalformed:
		r.Fault = faultBad
	case providertest.FaultStall:
		r.Fault = faultStall
	}
	return r
}

// neutralRequest translates what the mock received back into a
// providers.Request: a user message's tool_result blocks become tool
// messages, its text a user message after them.
func neutralRequest(t *testing.T, r mockRequest) providers.Request {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("mock could not decode the request: %v\n%s", r.Err, r.Raw)
	}
	b := r.Body
	if !b.Stream {
		t.Errorf("request did not ask for a stream: %s", r.Raw)
	}
	out := providers.Request{Model: b.Model, MaxTokens: b.MaxTokens, Temperature: b.Temperature, System: joinText(b.System)}
	for _, m := range b.Messages {
		switch m.Role {
		case "user":
			var text []wireBlock
			for _, c := range m.Content {
				switch c.Type {
				case "tool_result":
					out.Messages = append(out.Messages, providers.Message{Role: providers.Tool, ToolCallID: c.ToolUseID, Content: joinText(c.Content)})
				case "text":
					text = append(text, c)
				default:
					t.Errorf("user block of type %q", c.Type)
				}
			}
			if len(text) > 0 {
				out.Messages = append(out.Messages, providers.Message{Role: providers.User, Content: joinText(text)})
			}
		case "assistant":
			nm := providers.Message{Role: providers.Assistant}
			for _, c := range m.Content {
				switch c.Type {
				case "text":
					nm.Content += c.Text
				case "tool_use":
					nm.ToolCalls = append(nm.ToolCalls, providers.ToolCall{ID: c.ID, Name: c.Name, Args: c.Input})
				default:
					t.Errorf("assistant block of type %q", c.Type)
				}
			}
			out.Messages = append(out.Messages, nm)
		default:
			t.Errorf("message role %q", m.Role)
		}
	}
	for _, tool := range b.Tools {
		out.Tools = append(out.Tools, providers.ToolDef{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema})
	}
	return out
}
