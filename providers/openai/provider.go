package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/parleyhq/parley/internal/sentbody"
	"github.com/parleyhq/parley/providers"
)

// Config configures a Provider. The zero value talks to OpenAI without
// credentials; set at least APIKey and Model for OpenAI itself.
type Config struct {
	// BaseURL is the API root, ending in /v1 for most servers; "" means
	// OpenAIBaseURL. Requests go to BaseURL + "/chat/completions". See the
	// *Config presets, which set it and whatever else a server needs.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; "" sends no
	// credentials (local Ollama, vLLM, LM Studio). A server that wants its
	// key in another header (Azure's api-key) takes it in Headers instead.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Timeout bounds a whole streamed call, so leave it zero and use the
	// context for deadlines.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed call is retried; 0 means never.
	// Only the opening request is retried (connection errors, 408, 409, 429
	// and 5xx, honouring Retry-After up to two minutes), never a stream that
	// has delivered tokens.
	MaxRetries int
	// Headers are added to every request (OpenRouter's HTTP-Referer and
	// X-OpenRouter-Title, an Azure api-key, a gateway's routing header).
	Headers map[string]string
	// Query parameters are added to the URL of every request (Azure's
	// api-version). A query written into BaseURL is lost when the request
	// path is joined to it, so it goes here.
	Query map[string]string
	// ExtraBody sets top-level JSON fields of every request body, for server
	// extensions (vLLM's chat_template_kwargs, OpenRouter's provider, Ollama's
	// reasoning_effort). A key replaces the field Parley would have sent.
	ExtraBody map[string]any
	// LegacyMaxTokens sends Request.MaxTokens as max_tokens instead of
	// max_completion_tokens, for servers that predate the newer field.
	LegacyMaxTokens bool
}

// Provider streams chat completions from an OpenAI-compatible server. It is
// safe for concurrent use.
type Provider struct {
	opts   []option.RequestOption // the client's: oai.Client{Options: opts}
	model  string
	legacy bool
}

var _ providers.NamedProvider = (*Provider)(nil)

// ProviderName is "openai", for every OpenAI-compatible server: the
// OpenTelemetry GenAI conventions name the client's protocol when the
// server behind it is not known for sure.
func (p *Provider) ProviderName() string { return "openai" }

// New returns a Provider for cfg. It reads no environment variables.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = OpenAIBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(max(cfg.MaxRetries, 0)),
		// The request body is sent from a copy let go of once the response
		// comes: the SDK's own, kept for a retry, and the one the
		// transport keeps until the stream ends would hold the whole
		// request (the system prompt, the tools, the thread) for as long
		// as the model talks.
		option.WithMiddleware(sentbody.Middleware),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	for k, v := range cfg.Query {
		opts = append(opts, option.WithQuery(k, v))
	}
	for k, v := range cfg.ExtraBody {
		opts = append(opts, option.WithJSONSet(sjsonKey(k), v))
	}
	// Stream builds a Client from these options, which, unlike
	// openai.NewClient, does not read OPENAI_* environment variables: a
	// library takes its configuration from the host.
	return &Provider{
		opts:   opts,
		model:  cfg.Model,
		legacy: cfg.LegacyMaxTokens,
	}
}

// Stream sends req and streams the completion. The request is made when the
// sequence is iterated; the sequence is single-use.
//
// Events arrive in this order: TextDelta and ReasoningDelta as the server
// sends them; one ToolCallEvent per complete call, in index order, once the
// server reports a finish reason; one UsageEvent when the server reported
// usage; one FinishEvent, last. A stream that ends without a finish reason
// is an error of CategoryConnection.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		params, err := p.params(req)
		if err != nil {
			yield(providers.Event{}, &providers.Error{Category: providers.CategoryBadRequest, Err: err})
			return
		}
		// The request, its retries and the SSE framing are openai-go's, as
		// in ChatCompletionService.NewStreaming; each event's JSON is
		// decoded once, as a wireChunk (chunks). The raw response also lets an error
		// status be classified when its body is not the error object
		// openai-go expects (some gateways send {"error": "text"}).
		var resp *http.Response
		client := oai.Client{Options: p.opts}
		err = client.Post(ctx, "chat/completions", params, &resp, option.WithJSONSet("stream", true))
		providers.Assemble(newChunks(resp, err), chunk, func(err error) error { return classify(ctx, err, resp) }, yield)
	}
}

// params maps a Request onto the chat-completions body.
func (p *Provider) params(req *providers.Request) (oai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	if model == "" {
		return oai.ChatCompletionNewParams{}, fmt.Errorf("openai: no model: set Request.Model or Config.Model")
	}
	params := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		Messages:      make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, oai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		def, err := functionDef(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, oai.ChatCompletionFunctionTool(param.Override[shared.FunctionDefinitionParam](def)))
	}
	if req.MaxTokens > 0 {
		if p.legacy {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = param.NewOpt(*req.TopP)
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	return params, nil
}

func message(m providers.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case providers.System:
		return oai.SystemMessage(m.Content), nil
	case providers.User:
		return oai.UserMessage(m.Content), nil
	case providers.Tool:
		if m.ToolCallID == "" {
			return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without tool_call_id")
		}
		return oai.ToolMessage(m.Content, m.ToolCallID), nil
	case providers.Assistant:
		var a oai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Args)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// sjsonKey escapes a top-level field name for option.WithJSONSet, which
// takes an sjson path.
func sjsonKey(k string) string {
	r := strings.NewReplacer(`\`, `\\`, ".", `\.`, "*", `\*`, "?", `\?`, ":", `\:`, "|", `\|`, "#", `\#`, "@", `\@`)
	return r.Replace(k)
}

// functionDef is t as an OpenAI function definition, written as JSON
// directly: the schema goes into the request as it is, where decoding it
// into the client's map for the client to encode again cost a few percent
// of a turn's CPU on every model call. One difference remains: a key the
// schema repeats is sent twice, as written, where the map kept the last.
func functionDef(t providers.ToolDef) (json.RawMessage, error) {
	name, err := json.Marshal(t.Name)
	if err != nil {
		return nil, err
	}
	def := append(append(make([]byte, 0, 48+len(t.Name)+len(t.Description)+len(t.Parameters)), `{"name":`...), name...)
	if t.Description != "" {
		desc, err := json.Marshal(t.Description)
		if err != nil {
			return nil, err
		}
		def = append(append(def, `,"description":`...), desc...)
	}
	if ps := bytes.Trim(t.Parameters, " \t\r\n"); len(ps) > 0 {
		if ps[0] != '{' || !json.Valid(ps) {
			return nil, fmt.Errorf("openai: tool %q: parameters are not a JSON object", t.Name)
		}
		if !utf8.Valid(ps) {
			// Encoded again, as the client's map was: invalid bytes become
			// U+FFFD rather than a request the API refuses.
			var v any
			if err := json.Unmarshal(ps, &v); err != nil {
				return nil, fmt.Errorf("openai: tool %q: parameters are not a JSON object", t.Name)
			}
			if ps, err = json.Marshal(v); err != nil {
				return nil, err
			}
		}
		def = append(append(def, `,"parameters":`...), ps...)
	}
	return append(def, '}'), nil
}
