package openai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
)

// presetCase is one server: the Config its preset builds, what the real
// server requires of a request, a stream in that server's dialect, and what
// the provider must make of it.
type presetCase struct {
	name string
	cfg  openai.Config
	base string // the preset's BaseURL, exactly

	// What the server requires of the request.
	path   string            // the request path
	query  url.Values        // the whole query; nil means none
	auth   string            // the Authorization header; "" means absent
	apiKey string            // the api-key header; "" means absent
	header map[string]string // further headers that must arrive
	model  string            // the body's model field
	legacy bool              // the server reads max_tokens, not max_completion_tokens

	// stream is the response, one SSE event per entry: an entry starting
	// with ":" is sent as a comment line, any other as a data line.
	stream []string

	// What the provider must yield.
	reasoning string
	text      string
	calls     []providers.ToolCall
	usage     *providers.Usage // nil: no UsageEvent
	finish    providers.FinishReason
}

func presetCases() []presetCase {
	openRouter := openai.OpenRouterConfig("anthropic/claude-sonnet-4", "sk-or-v1-test")
	openRouter.Headers = map[string]string{"HTTP-Referer": "https://parley.example", "X-OpenRouter-Title": "Parley"}
	vllm := openai.VLLMConfig("Qwen/Qwen3-8B")
	vllm.APIKey = "vllm-token" // vllm serve --api-key vllm-token

	return []presetCase{{
		// OpenAI: "usage":null on every chunk once include_usage is set, an
		// obfuscation field, and a last chunk with empty choices and usage.
		name: "OpenAI",
		cfg:  openai.OpenAIConfig("gpt-4.1", "sk-test"),
		base: "https://api.openai.com/v1",
		path: "/v1/chat/completions", auth: "Bearer sk-test", model: "gpt-4.1",
		stream: []string{
			`{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1753357673,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Qx3"}`,
			`{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1753357673,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[{"index":0,"delta":{"content":"It is "},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"a9"}`,
			`{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1753357673,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[{"index":0,"delta":{"content":"sunny."},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Zt"}`,
			`{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1753357673,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"p"}`,
			`{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1753357673,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":7,"total_tokens":49,"prompt_tokens_details":{"cached_tokens":32,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"u1"}`,
			`[DONE]`,
		},
		text:   "It is sunny.",
		usage:  &providers.Usage{InputTokens: 42, OutputTokens: 7, CachedInputTokens: 32},
		finish: providers.FinishStop,
	}, {
		// Azure's v1 endpoint: no api-version, the key as a bearer token,
		// the deployment as the model; content filter results on every
		// choice; a tool call streamed in pieces.
		name: "Azure v1",
		cfg:  openai.AzureConfig("contoso", "gpt-4o-prod", "azure-key"),
		base: "https://contoso.openai.azure.com/openai/v1",
		path: "/openai/v1/chat/completions", auth: "Bearer azure-key", model: "gpt-4o-prod",
		stream: []string{
			`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}`,
			`{"choices":[{"content_filter_results":{},"delta":{"content":null,"refusal":null,"role":"assistant","tool_calls":[{"function":{"arguments":"","name":"get_weather"},"id":"call_Az1","index":0,"type":"function"}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{},"delta":{"tool_calls":[{"function":{"arguments":"{\"city\""},"index":0}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{},"delta":{"tool_calls":[{"function":{"arguments":":\"Paris\"}"},"index":0}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"tool_calls","index":0,"logprobs":null}],"created":1730000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[],"created":1730000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":{"completion_tokens":15,"completion_tokens_details":{"accepted_prediction_tokens":0,"audio_tokens":0,"reasoning_tokens":0,"rejected_prediction_tokens":0},"prompt_tokens":61,"prompt_tokens_details":{"audio_tokens":0,"cached_tokens":0},"total_tokens":76}}`,
			`[DONE]`,
		},
		calls:  []providers.ToolCall{{ID: "call_Az1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}},
		usage:  &providers.Usage{InputTokens: 61, OutputTokens: 15},
		finish: providers.FinishToolCalls,
	}, {
		// Azure's deployment-scoped endpoint: the deployment in the path,
		// api-version in the query, the key in api-key and no bearer token.
		// The stream opens with a chunk of empty choices carrying
		// prompt_filter_results, and the asynchronous content filter sends a
		// choice without a delta after the finish.
		name: "Azure deployment",
		cfg:  openai.AzureDeploymentConfig("contoso", "gpt-4o-prod", "2024-10-21", "azure-key"),
		base: "https://contoso.openai.azure.com/openai/deployments/gpt-4o-prod",
		path: "/openai/deployments/gpt-4o-prod/chat/completions", query: url.Values{"api-version": {"2024-10-21"}},
		apiKey: "azure-key", model: "gpt-4o-prod",
		stream: []string{
			`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}`,
			`{"choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":"Sunny in "},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":"Paris."},"finish_reason":null,"index":0,"logprobs":null}],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0,"logprobs":null}],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":15},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":null}`,
			`{"choices":[],"created":1730000001,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":{"completion_tokens":4,"prompt_tokens":55,"prompt_tokens_details":{"cached_tokens":0},"total_tokens":59}}`,
			`[DONE]`,
		},
		text:   "Sunny in Paris.",
		usage:  &providers.Usage{InputTokens: 55, OutputTokens: 4},
		finish: providers.FinishStop,
	}, {
		// vLLM with --reasoning-parser and a --tool-call-parser: reasoning
		// under "reasoning", a tool call whose first delta has a name and no
		// arguments, and the rest of the arguments in the finish chunk.
		name: "vLLM",
		cfg:  vllm,
		base: "http://localhost:8000/v1",
		path: "/v1/chat/completions", auth: "Bearer vllm-token", model: "Qwen/Qwen3-8B",
		stream: []string{
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning":"The user wants "},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning":"the weather."},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-5e0d1a","type":"function","index":0,"function":{"name":"get_weather"}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`,
			`{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1750000000,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":210,"total_tokens":251,"completion_tokens":41,"prompt_tokens_details":null}}`,
			`[DONE]`,
		},
		reasoning: "The user wants the weather.",
		calls:     []providers.ToolCall{{ID: "chatcmpl-tool-5e0d1a", Name: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)}},
		usage:     &providers.Usage{InputTokens: 210, OutputTokens: 41},
		finish:    providers.FinishToolCalls,
	}, {
		// Ollama: no credentials, max_tokens, reasoning under "reasoning"
		// split from the content into its own chunk, the finish reason on an
		// empty delta, usage on a chunk of its own.
		name: "Ollama",
		cfg:  openai.OllamaConfig("qwen3:8b"),
		base: "http://localhost:11434/v1",
		path: "/v1/chat/completions", model: "qwen3:8b", legacy: true,
		stream: []string{
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Paris, "},"finish_reason":null}]}`,
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"content":"","reasoning":"no tool needed."},"finish_reason":null}]}`,
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"content":"Mild "},"finish_reason":null}]}`,
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"content":"and dry."},"finish_reason":null}]}`,
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"chatcmpl-318","object":"chat.completion.chunk","created":1755000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":88,"completion_tokens":23,"total_tokens":111}}`,
			`[DONE]`,
		},
		reasoning: "Paris, no tool needed.",
		text:      "Mild and dry.",
		usage:     &providers.Usage{InputTokens: 88, OutputTokens: 23},
		finish:    providers.FinishStop,
	}, {
		// OpenRouter: SSE comments while the upstream works, reasoning under
		// "reasoning" beside reasoning_details, native_finish_reason, and a
		// last chunk that repeats the finish with the usage and cost.
		name: "OpenRouter",
		cfg:  openRouter,
		base: "https://openrouter.ai/api/v1",
		path: "/api/v1/chat/completions", auth: "Bearer sk-or-v1-test", model: "anthropic/claude-sonnet-4",
		header: map[string]string{"HTTP-Referer": "https://parley.example", "X-OpenRouter-Title": "Parley"},
		stream: []string{
			`: OPENROUTER PROCESSING`,
			`: OPENROUTER PROCESSING`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Check the weather.","reasoning_details":[{"type":"reasoning.text","text":"Check the weather.","format":"anthropic-claude-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`: OPENROUTER PROCESSING`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"toolu_01Xy","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls","native_finish_reason":"tool_use","logprobs":null}]}`,
			`{"id":"gen-17500-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1750000000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls","native_finish_reason":"tool_use","logprobs":null}],"usage":{"prompt_tokens":402,"completion_tokens":58,"total_tokens":460,"cost":0.002076,"is_byok":false,"prompt_tokens_details":{"cached_tokens":256},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":12}}}`,
			`[DONE]`,
		},
		reasoning: "Check the weather.",
		text:      "Let me look.",
		calls:     []providers.ToolCall{{ID: "toolu_01Xy", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}},
		usage:     &providers.Usage{InputTokens: 402, OutputTokens: 58, CachedInputTokens: 256},
		finish:    providers.FinishToolCalls,
	}, {
		// LM Studio: no credentials, max_tokens, reasoning under
		// "reasoning_content", numeric tool call ids, two parallel calls,
		// and no usage chunk (LM Studio has sent none when streaming).
		name: "LM Studio",
		cfg:  openai.LMStudioConfig("qwen/qwen3-8b"),
		base: "http://localhost:1234/v1",
		path: "/v1/chat/completions", model: "qwen/qwen3-8b", legacy: true,
		stream: []string{
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Two cities, "},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"two calls."},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"365174485","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"arguments":"{\"city\":\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":1,"id":"804256217","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":1,"type":"function","function":{"arguments":"{\"city\":\"Lyon\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-um3b2l9t","object":"chat.completion.chunk","created":1747835957,"model":"qwen/qwen3-8b","system_fingerprint":"qwen/qwen3-8b","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		},
		reasoning: "Two cities, two calls.",
		calls: []providers.ToolCall{
			{ID: "365174485", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "804256217", Name: "get_weather", Args: json.RawMessage(`{"city":"Lyon"}`)},
		},
		finish: providers.FinishToolCalls,
	}}
}

// presetRequest is what every case sends: a system prompt, a question, one
// tool and a token limit, so each server's checks see every field.
func presetRequest() *providers.Request {
	return &providers.Request{
		System:    "Be brief.",
		Messages:  []providers.Message{{Role: providers.User, Content: "Weather in Paris?"}},
		Tools:     []providers.ToolDef{{Name: "get_weather", Description: "Current weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		MaxTokens: 256,
	}
}

// check reports how r falls short of what the server requires.
func (c presetCase) check(r *http.Request) error {
	var errs []error
	wrong := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Method != http.MethodPost || r.URL.Path != c.path {
		wrong("%s %s, want POST %s", r.Method, r.URL.Path, c.path)
	}
	if q := r.URL.Query(); (len(q) > 0 || len(c.query) > 0) && !reflect.DeepEqual(q, c.query) {
		wrong("query %q, want %q", r.URL.RawQuery, c.query.Encode())
	}
	for name, want := range map[string]string{"Authorization": c.auth, "Api-Key": c.apiKey} {
		if got := r.Header.Get(name); got != want {
			wrong("%s header %q, want %q", name, got, want)
		}
	}
	for name, want := range c.header {
		if got := r.Header.Get(name); got != want {
			wrong("%s header %q, want %q", name, got, want)
		}
	}
	var body openaimock.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return errors.Join(append(errs, fmt.Errorf("body: %w", err))...)
	}
	if body.Model != c.model {
		wrong("model %q, want %q", body.Model, c.model)
	}
	if !body.Stream || body.StreamOptions == nil || !body.StreamOptions.IncludeUsage {
		wrong("stream %v, stream_options %+v: want a stream with usage", body.Stream, body.StreamOptions)
	}
	limit, other := body.MaxCompletionTokens, body.MaxTokens
	if c.legacy {
		limit, other = other, limit
	}
	if limit == nil || *limit != 256 || other != nil {
		wrong("max_tokens %s, max_completion_tokens %s: want 256 in the field the server reads (legacy=%v) and nothing in the other",
			intField(body.MaxTokens), intField(body.MaxCompletionTokens), c.legacy)
	}
	if len(body.Messages) != 2 || len(body.Tools) != 1 || body.Tools[0].Function.Name != "get_weather" {
		wrong("%d messages and %d tools, want 2 and get_weather", len(body.Messages), len(body.Tools))
	}
	return errors.Join(errs...)
}

func intField(p *int64) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

// serve answers like the server: a 400 to a request it would refuse, else
// the scripted stream, flushed event by event.
func (c presetCase) serve(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := c.check(r); err != nil {
			t.Errorf("the server would refuse the request: %v", err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"refused by the preset mock","type":"invalid_request_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, e := range c.stream {
			if strings.HasPrefix(e, ":") {
				fmt.Fprintf(w, "%s\n\n", e)
			} else {
				fmt.Fprintf(w, "data: %s\n\n", e)
			}
			rc.Flush()
		}
	}
}

// onServer moves base onto the test server, keeping the preset's path.
func onServer(t *testing.T, base, server string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme, u.Host = s.Scheme, s.Host
	return u.String()
}

func TestPresetsMeetEachServersRequirementsAndReadItsDialect(t *testing.T) {
	for _, c := range presetCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.cfg.BaseURL != c.base {
				t.Errorf("BaseURL = %q, want %q", c.cfg.BaseURL, c.base)
			}
			ts := httptest.NewServer(c.serve(t))
			t.Cleanup(ts.Close)
			cfg := c.cfg
			cfg.BaseURL = onServer(t, cfg.BaseURL, ts.URL)
			cfg.HTTPClient = ts.Client()

			o := run(t, openai.New(cfg), presetRequest())
			if o.err != nil {
				t.Fatalf("stream failed: %v", o.err)
			}
			var reasoning, text strings.Builder
			var calls []providers.ToolCall
			var usages []providers.Usage
			for _, e := range o.events {
				switch e.Kind {
				case providers.ReasoningDelta:
					reasoning.WriteString(e.Text)
				case providers.TextDelta:
					text.WriteString(e.Text)
				case providers.ToolCallEvent:
					calls = append(calls, e.ToolCall)
				case providers.UsageEvent:
					usages = append(usages, e.Usage)
				}
			}
			if reasoning.String() != c.reasoning {
				t.Errorf("reasoning = %q, want %q", reasoning.String(), c.reasoning)
			}
			if text.String() != c.text {
				t.Errorf("text = %q, want %q", text.String(), c.text)
			}
			if !reflect.DeepEqual(calls, c.calls) {
				t.Errorf("tool calls = %s, want %s", describeCalls(calls), describeCalls(c.calls))
			}
			switch {
			case c.usage == nil && len(usages) != 0:
				t.Errorf("usage = %+v, want none", usages)
			case c.usage != nil && (len(usages) != 1 || usages[0] != *c.usage):
				t.Errorf("usage = %+v, want one %+v", usages, *c.usage)
			}
			if n := len(o.events); n == 0 || o.events[n-1].Kind != providers.FinishEvent || o.events[n-1].Finish != c.finish {
				t.Errorf("events = %s, want a last FinishEvent %q", describe(o.events), c.finish)
			}
			if f := o.of(providers.FinishEvent); len(f) != 1 {
				t.Errorf("%d FinishEvents, want 1", len(f))
			}
		})
	}
}

func describeCalls(calls []providers.ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = fmt.Sprintf("%s %s(%s)", c.ID, c.Name, c.Args)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func ExampleAzureDeploymentConfig() {
	cfg := openai.AzureDeploymentConfig("contoso", "gpt-4o-prod", "2024-10-21", "azure-key")
	fmt.Println(cfg.BaseURL + "/chat/completions?api-version=" + cfg.Query["api-version"])
	fmt.Println("api-key:", cfg.Headers["api-key"])
	// Output:
	// https://contoso.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21
	// api-key: azure-key
}
