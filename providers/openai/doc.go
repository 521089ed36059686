// Package openai is a providers.Provider for servers speaking OpenAI's
// chat-completions protocol: OpenAI, Azure OpenAI, vLLM, Ollama, OpenRouter,
// LM Studio and the many gateways that copy it. It uses
// github.com/openai/openai-go/v3 for the request, its retries and the SSE
// framing, decodes each chunk into a small type of its own (openai-go's
// decoder when that type cannot hold it: see FuzzWireChunk), and always
// streams.
//
//	p := openai.New(openai.OllamaConfig("qwen3:8b"))
//
// # Servers
//
// Each server has a preset returning the Config it needs, whose fields can
// then be changed (HTTPClient, a remote host in BaseURL, a key):
//
//   - OpenAIConfig(model, key): api.openai.com, bearer key.
//   - AzureConfig(resource, deployment, key): an Azure resource's v1
//     endpoint, .../openai/v1, bearer key, the deployment as the model.
//   - AzureDeploymentConfig(resource, deployment, apiVersion, key): the
//     deployment-scoped endpoint, .../openai/deployments/{deployment}, with
//     ?api-version= (Config.Query) and the key in the api-key header.
//   - VLLMConfig(model): localhost:8000, the served model name; a key only
//     with vllm serve --api-key.
//   - OllamaConfig(model): localhost:11434, a pulled model such as
//     "qwen3:8b", no key, max_tokens.
//   - OpenRouterConfig(model, key): openrouter.ai/api, "vendor/model",
//     bearer key; attribution headers go in Config.Headers.
//   - LMStudioConfig(model): localhost:1234, the model's identifier, no
//     key, max_tokens.
//
// # Requests
//
// Request.System becomes the leading system message; Messages map one to
// one (an assistant message's ToolCalls become its tool_calls, a tool
// message's ToolCallID its tool_call_id); Tools become function tools with
// their JSON Schema as parameters; MaxTokens is sent as
// max_completion_tokens (max_tokens with Config.LegacyMaxTokens);
// Temperature and TopP as temperature and top_p when set, and
// ReasoningEffort as reasoning_effort only when not empty.
// stream_options.include_usage is always set so the stream ends with usage.
//
// # Events
//
// Content deltas become TextDelta events. A reasoning_content or reasoning
// field in a delta, which OpenAI leaves out but DeepSeek, vLLM, Ollama,
// LM Studio and OpenRouter send, becomes ReasoningDelta. SSE comments
// (OpenRouter's ": OPENROUTER PROCESSING") yield nothing, nor does a chunk
// without choices or usage (Azure's opening prompt_filter_results), nor any
// choice after the finish reason. Tool-call deltas are assembled by
// index and each complete call is emitted as one ToolCallEvent, in index
// order, when the finish reason arrives; then one UsageEvent (when the
// server reported usage) and one FinishEvent, always last.
//
// # Errors
//
// Failures are *providers.Error values. An HTTP error status maps through
// providers.CategoryForStatus (401 is CategoryAuth, 404 CategoryNotFound,
// 429 CategoryRateLimit with RetryAfter from the Retry-After header, 5xx
// CategoryUnavailable); a dropped stream, a malformed chunk or a stream that
// ends without a finish reason is CategoryConnection; a canceled context is
// CategoryCanceled and an expired one CategoryTimeout. The server's message
// stays in Error.Err, for logs only.
//
// Retries are off unless Config.MaxRetries is set, and only ever repeat the
// opening request, before any token has been delivered.
// Under an assistant.Engine leave them off: the Engine retries a failed call
// itself (Config.ModelRetries, within ModelRetryWait, telling the user it
// waits), and retries in both layers multiply the calls.
//
// # Concurrency
//
// A Provider is safe for concurrent use. Each sequence from Stream makes
// its own request when iterated, and stopping the iteration early closes
// the response body, releasing the connection.
package openai
