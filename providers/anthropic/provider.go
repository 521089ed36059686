package anthropic

import (
	"context"
	"iter"
	"net/http"

	ant "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/parleyhq/parley/internal/sentbody"
	"github.com/parleyhq/parley/providers"
)

// DefaultBaseURL is Anthropic's API root.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the answer budget when neither Request.MaxTokens nor
// Config.MaxTokens is set: the Messages API requires max_tokens.
const DefaultMaxTokens = 4096

// minThinkingBudget is the smallest thinking budget the API accepts.
const minThinkingBudget = 1024

// Config configures a Provider. The zero value talks to Anthropic without
// credentials; set at least APIKey and Model.
type Config struct {
	// BaseURL is the API root, without /v1 (requests go to
	// BaseURL/v1/messages); "" means DefaultBaseURL. Set it for a proxy,
	// a gateway or a test server.
	BaseURL string
	// APIKey is sent as the x-api-key header; "" sends no credentials
	// (a proxy that adds its own). KeyFromFile reads one from a file.
	APIKey string
	// Model is used when Request.Model is empty, e.g. "claude-sonnet-4-5".
	Model string
	// MaxTokens is the answer budget when Request.MaxTokens is 0; 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Timeout bounds a whole streamed call, so leave it zero and use the
	// context for deadlines.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed call is retried; 0 means never.
	// Only the opening request is retried (connection errors, 408, 409,
	// 429, 5xx and 529 overloaded, honouring Retry-After), never a stream
	// that has delivered tokens.
	MaxRetries int
	// Headers are added to every request (an anthropic-beta flag, a
	// gateway's routing header).
	Headers map[string]string

	// ThinkingBudget turns on extended thinking with a budget of this many
	// tokens (at least 1024; smaller budgets are raised to it). The budget
	// is added to the request's max_tokens, so the answer keeps its own
	// budget. 0 leaves thinking off unless AdaptiveThinking is set.
	ThinkingBudget int
	// AdaptiveThinking turns on adaptive thinking (the model decides how
	// much to think), which models such as claude-opus-4-6 prefer to a
	// fixed budget (the API deprecates a budget for them; the SDK's
	// MessageService prints a warning to stderr for it, which this
	// package, calling Client.Post, does not). ThinkingBudget, when also
	// set, is only added to max_tokens as room for the thinking.
	AdaptiveThinking bool
}

// Provider streams messages from Anthropic's Messages API. It is safe for
// concurrent use.
type Provider struct {
	opts      []option.RequestOption // the client's: ant.Client{Options: opts}
	model     string
	maxTokens int
	budget    int  // thinking budget; 0 with !adaptive: thinking off
	adaptive  bool // thinking type "adaptive"
}

var (
	_ providers.SettingsProvider = (*Provider)(nil)
	_ providers.NamedProvider    = (*Provider)(nil)
)

// ProviderName is "anthropic" (OpenTelemetry's gen_ai.provider.name).
func (p *Provider) ProviderName() string { return "anthropic" }

// Settings names the completion settings the provider sends on:
// max_tokens, and temperature unless thinking is on (the API refuses a
// temperature with thinking). It never sends top_p or a reasoning effort:
// thinking is set by Config.
func (p *Provider) Settings() []string {
	if p.budget > 0 || p.adaptive {
		return []string{providers.SettingMaxTokens}
	}
	return []string{providers.SettingTemperature, providers.SettingMaxTokens}
}

// New returns a Provider for cfg. It reads no environment variables.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(max(cfg.MaxRetries, 0)),
		// The SDK's own spans are configured by ANTHROPIC_OPEN_TELEMETRY*
		// variables and can record prompts; a library takes neither
		// configuration nor telemetry policy from the environment.
		option.WithoutOpenTelemetry(),
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
	p := &Provider{
		// Stream builds a Client from these options, which, unlike
		// anthropic.NewClient, does not walk the ANTHROPIC_* credential
		// chain.
		opts:      opts,
		model:     cfg.Model,
		maxTokens: cfg.MaxTokens,
		adaptive:  cfg.AdaptiveThinking,
	}
	if p.maxTokens <= 0 {
		p.maxTokens = DefaultMaxTokens
	}
	if cfg.ThinkingBudget > 0 {
		p.budget = cfg.ThinkingBudget
		if !p.adaptive {
			p.budget = max(p.budget, minThinkingBudget)
		}
	}
	return p
}

// Stream sends req and streams the message. The request is made when the
// sequence is iterated; the sequence is single-use.
//
// Events arrive in this order: TextDelta and ReasoningDelta (thinking) as
// the server sends them; one ToolCallEvent per tool_use block, in block
// order, once the server reports a stop reason; one UsageEvent when the
// server reported usage; one FinishEvent, last. A stream that ends without
// a stop reason is an error of CategoryConnection.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		params, err := p.params(req)
		if err != nil {
			yield(providers.Event{}, &providers.Error{Category: providers.CategoryBadRequest, Err: err})
			return
		}
		// The request, its retries and the SSE framing (ping skipped, an
		// error event made an *ant.Error) are anthropic-sdk-go's, as in
		// MessageService.NewStreaming; each event's JSON is decoded as a
		// wireEvent. The raw response also lets an error status be
		// classified when the connection broke while the SDK read the
		// error body.
		var resp *http.Response
		client := ant.Client{Options: p.opts}
		err = client.Post(ctx, "v1/messages", params, &resp, option.WithJSONSet("stream", true))
		stream := ssestream.NewStream[wireEvent](ssestream.NewDecoder(resp), err)
		providers.Assemble(stream, event, func(err error) error { return classify(ctx, err, resp) }, yield)
	}
}
