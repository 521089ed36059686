package openai

import (
	"fmt"
	"net/url"
)

// Base URLs of common OpenAI-compatible servers, for Config.BaseURL. The
// local ones are the servers' default ports. The *Config functions below
// build a whole Config for each server and are the safer start: some
// servers need more than a base URL.
const (
	// OpenAIBaseURL is OpenAI's API. Needs Config.APIKey.
	OpenAIBaseURL = "https://api.openai.com/v1"
	// OllamaBaseURL is a local Ollama (ollama serve). No key; Model is a
	// pulled model such as "llama3.2". Reasoning models stream their
	// thinking as ReasoningDelta. Ollama reads max_tokens only: set
	// Config.LegacyMaxTokens, as OllamaConfig does.
	OllamaBaseURL = "http://localhost:11434/v1"
	// VLLMBaseURL is a local vLLM (vllm serve). A key only when started
	// with --api-key; tool calls need --enable-auto-tool-choice and a
	// --tool-call-parser.
	VLLMBaseURL = "http://localhost:8000/v1"
	// OpenRouterBaseURL is OpenRouter. Needs Config.APIKey; Model is
	// "vendor/model". OpenRouter's optional attribution headers go in
	// Config.Headers (HTTP-Referer, X-OpenRouter-Title or the older
	// X-Title).
	OpenRouterBaseURL = "https://openrouter.ai/api/v1"
	// LMStudioBaseURL is LM Studio's local server. No key. LM Studio reads
	// max_tokens only: set Config.LegacyMaxTokens, as LMStudioConfig does.
	LMStudioBaseURL = "http://localhost:1234/v1"
)

// AzureBaseURL returns the OpenAI-compatible (v1) endpoint of an Azure
// OpenAI or Azure AI Foundry resource, for Config.BaseURL. Set Config.APIKey
// to the resource key (sent as a bearer token, which the v1 endpoint
// accepts) and Config.Model to the deployment name. AzureConfig builds the
// whole Config; AzureDeploymentConfig is for the older deployment-scoped
// endpoint with an api-version.
func AzureBaseURL(resource string) string {
	return fmt.Sprintf("https://%s.openai.azure.com/openai/v1", resource)
}

// OpenAIConfig returns a Config for OpenAI's API: POST
// https://api.openai.com/v1/chat/completions with "Authorization: Bearer
// <apiKey>". model is an OpenAI model such as "gpt-4.1". An organization or
// project other than the key's default goes in Headers (OpenAI-Organization,
// OpenAI-Project).
func OpenAIConfig(model, apiKey string) Config {
	return Config{BaseURL: OpenAIBaseURL, APIKey: apiKey, Model: model}
}

// AzureConfig returns a Config for the v1 endpoint of an Azure OpenAI or
// Azure AI Foundry resource: POST
// https://{resource}.openai.azure.com/openai/v1/chat/completions, with no
// api-version. deployment is the name of a model deployment in that resource
// (not the model's name) and is sent as the model; apiKey is one of the
// resource's keys, sent as a bearer token, which this endpoint accepts in
// place of the api-key header.
//
// For a resource under another host (Azure Government's openai.azure.us, a
// cognitiveservices.azure.com endpoint), replace the host of BaseURL.
func AzureConfig(resource, deployment, apiKey string) Config {
	return Config{BaseURL: AzureBaseURL(resource), APIKey: apiKey, Model: deployment}
}

// AzureDeploymentConfig returns a Config for the deployment-scoped endpoint
// of an Azure OpenAI resource: POST
// https://{resource}.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version={apiVersion},
// with apiKey in the api-key header rather than as a bearer token. The
// deployment in the path picks the model; it is sent as the model field too,
// which Azure ignores.
//
// apiVersion must be 2024-10-21 or a later version (or 2024-09-01-preview
// or later): Parley always asks for usage with stream_options, which older
// versions reject with HTTP 400.
//
// For Microsoft Entra ID instead of a key, pass an empty apiKey and give
// Config.HTTPClient a transport that sets "Authorization: Bearer <token>".
// For another host, replace the host of BaseURL; keep the api-version in
// Query, since a query written into BaseURL is dropped when the request
// path is joined to it.
func AzureDeploymentConfig(resource, deployment, apiVersion, apiKey string) Config {
	cfg := Config{
		BaseURL: fmt.Sprintf("https://%s.openai.azure.com/openai/deployments/%s", resource, url.PathEscape(deployment)),
		Model:   deployment,
		Query:   map[string]string{"api-version": apiVersion},
	}
	if apiKey != "" {
		cfg.Headers = map[string]string{"api-key": apiKey}
	}
	return cfg
}

// VLLMConfig returns a Config for a local vLLM (vllm serve) at its default
// port: POST http://localhost:8000/v1/chat/completions with no credentials.
// model is the name the server was started with: the Hugging Face id given
// to vllm serve, such as "Qwen/Qwen3-8B", or its --served-model-name.
//
// Set APIKey when the server was started with --api-key (it is checked as a
// bearer token). Tool calls need --enable-auto-tool-choice and a
// --tool-call-parser; visible reasoning needs a --reasoning-parser.
func VLLMConfig(model string) Config {
	return Config{BaseURL: VLLMBaseURL, Model: model}
}

// OllamaConfig returns a Config for a local Ollama (ollama serve) at its
// default port: POST http://localhost:11434/v1/chat/completions with no
// credentials. model is a pulled model with its tag, such as "qwen3:8b".
//
// LegacyMaxTokens is set because Ollama's OpenAI-compatible endpoint reads
// max_tokens and ignores max_completion_tokens. The context length is the
// server's (OLLAMA_CONTEXT_LENGTH or the model's Modelfile); this endpoint
// has no per-request options.
func OllamaConfig(model string) Config {
	return Config{BaseURL: OllamaBaseURL, Model: model, LegacyMaxTokens: true}
}

// OpenRouterConfig returns a Config for OpenRouter: POST
// https://openrouter.ai/api/v1/chat/completions with "Authorization: Bearer
// <apiKey>". model is "vendor/model", such as "anthropic/claude-sonnet-4".
//
// OpenRouter's app attribution headers are optional: add them to Headers
// (HTTP-Referer with the app's URL, X-OpenRouter-Title or the older X-Title
// with its name). Provider routing goes in ExtraBody["provider"].
func OpenRouterConfig(model, apiKey string) Config {
	return Config{BaseURL: OpenRouterBaseURL, APIKey: apiKey, Model: model}
}

// LMStudioConfig returns a Config for LM Studio's local server at its
// default port: POST http://localhost:1234/v1/chat/completions with no
// credentials. model is the model's identifier as GET /v1/models lists it,
// such as "qwen/qwen3-8b"; LM Studio loads it on first use when just-in-time
// loading is on.
//
// LegacyMaxTokens is set because LM Studio reads max_tokens, not
// max_completion_tokens. Set APIKey when the server requires an API token.
func LMStudioConfig(model string) Config {
	return Config{BaseURL: LMStudioBaseURL, Model: model, LegacyMaxTokens: true}
}
