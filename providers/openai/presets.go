package openai

import "fmt"

// Base URLs of common OpenAI-compatible servers, for Config.BaseURL. The
// local ones are the servers' default ports.
const (
	// OpenAIBaseURL is OpenAI's API. Needs Config.APIKey.
	OpenAIBaseURL = "https://api.openai.com/v1"
	// OllamaBaseURL is a local Ollama (ollama serve). No key; Model is a
	// pulled model such as "llama3.2". Reasoning models stream their
	// thinking as ReasoningDelta.
	OllamaBaseURL = "http://localhost:11434/v1"
	// VLLMBaseURL is a local vLLM (vllm serve). A key only when started
	// with --api-key; tool calls need --enable-auto-tool-choice and a
	// --tool-call-parser.
	VLLMBaseURL = "http://localhost:8000/v1"
	// OpenRouterBaseURL is OpenRouter. Needs Config.APIKey; Model is
	// "vendor/model". OpenRouter's optional attribution headers go in
	// Config.Headers (HTTP-Referer, X-Title).
	OpenRouterBaseURL = "https://openrouter.ai/api/v1"
	// LMStudioBaseURL is LM Studio's local server. No key.
	LMStudioBaseURL = "http://localhost:1234/v1"
)

// AzureBaseURL returns the OpenAI-compatible (v1) endpoint of an Azure
// OpenAI or Azure AI Foundry resource, for Config.BaseURL. Set Config.APIKey
// to the resource key (sent as a bearer token, which the v1 endpoint
// accepts) and Config.Model to the deployment name. The older
// deployment-scoped endpoints with an api-version query are not supported.
func AzureBaseURL(resource string) string {
	return fmt.Sprintf("https://%s.openai.azure.com/openai/v1", resource)
}
