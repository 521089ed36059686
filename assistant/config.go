package assistant

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Config configures an Engine. Provider (or Connections), Authorizer and
// Store are required; every other zero value is a documented default.
type Config struct {
	Provider   providers.Provider // required unless Connections: the model
	Authorizer Authorizer         // required: every gate asks it
	Store      store.Store        // required: threads and messages
	Tools      tools.Registry     // nil: no tools

	// Guard scans every user message and every tool call's arguments
	// (injection, credentials, personal data) and fails closed. nil: a
	// guard with guard.New's defaults. DisableGuard turns scanning off, for
	// callers whose input is trusted.
	Guard        *guard.Guard
	DisableGuard bool
	// GuardRejection, when set, is the answer to a blocked message, with no
	// model call; otherwise the model answers a prompt that names only the
	// categories found, never the user's text.
	GuardRejection string
	// GuardMessage words the warning a user is shown about their own
	// message (what the guard found in it and what became of it, see
	// GuardNotice), e.g. in u.Locale; nil, or "" for a notice it leaves to
	// the default: English sentences. Return text safe to show. The
	// warning block carries the notice as Data either way.
	GuardMessage func(u parley.User, n GuardNotice) string

	// TopicScope turns the topic filter on (C10): it says in plain words
	// what the assistant is for, e.g. "operating Acme Cloud: servers,
	// volumes, billing and support tickets". Before the turn of a message
	// the user types (a new one, an edit or a regeneration; not a
	// decision, form answers or client results, nor a message the guard
	// blocked), a cheap model call with no tools and a few output tokens
	// classifies the message, as the guard passed it, against the scope.
	// Only a clear off-topic answer refuses it: the main model is not
	// called, TopicRefusal is the reply, the turn ends with FinishOffTopic
	// and AuditTopicRefused is written. Anything else lets the turn go on:
	// on topic, an ambiguous or unreadable answer, a failed call, one past
	// TopicTimeout, a cancelled one (the filter fails open, and logs why).
	// The call's tokens count as the turn's: in its usage, the user's
	// quota and spend. "": no filter, and no extra call.
	TopicScope string
	// TopicRefusal is the Markdown reply to a message off topic, stored
	// like any reply; "": DefaultTopicRefusal. Say what the assistant
	// helps with, so the user knows what to ask instead.
	TopicRefusal string
	// TopicModel is the model of the topic filter's call on the single
	// connection, such as a smaller one than Model; "": the turn's model.
	// With Connections, leave it unset and set Connection.TopicModel.
	TopicModel string
	// TopicTimeout bounds the topic filter's call (default 5s); a message
	// whose call takes longer passes.
	TopicTimeout time.Duration

	Model           string // passed to the provider; "": the provider's default
	MaxOutputTokens int    // per model call; 0: the provider's default
	// ContextWindow is the model's context in tokens (default 32768). A tool
	// result the model reads is cut to an eighth of it, at about four
	// bytes a token, trimming the largest arrays first.
	ContextWindow int

	// Connections are named model connections users may choose from, each
	// with its own provider, allowed models and completion settings (see
	// Request.Model, Engine.Models). With Connections, Provider, Model and
	// Connection must be left unset, and ContextWindow and MaxOutputTokens
	// are the defaults of a connection that sets none. Without them,
	// Provider, Model, Connection, ContextWindow and MaxOutputTokens are
	// the one connection, which allows only Model and no settings.
	Connections []Connection
	// DefaultConnection names the connection used when a request and the
	// user's preference name none; "": the first.
	DefaultConnection string

	// ModelRetries bounds how often a model call that failed before its
	// first event (a 429, a 5xx, a connection error) is tried again
	// (default 3; negative: never). Waits grow from half a second, doubling
	// with jitter, follow the server's Retry-After, and add up to at most
	// ModelRetryWait (default 30s). The stream shows a meta block with
	// Waiting meanwhile. A call that has streamed anything is never retried.
	ModelRetries   int
	ModelRetryWait time.Duration

	// MaxToolRounds bounds the model calls that may use tools in one turn
	// (default 5). After the last one the model is called once more with no
	// tools and told to answer from what it has, so a turn ends with text.
	MaxToolRounds int
	// The turn's pace (A7). Before each model call the turn checks what it
	// has spent, and past any of these the call has no tools and must
	// answer: MaxTurnToolCalls tool calls (default 18; negative: no limit
	// but MaxToolRounds), AnswerAfterTokens tokens used by its model calls,
	// input and output (default 0: no limit), or AnswerAfter since it began
	// (default half of TurnTimeout; negative: never). Before that, once the
	// model has made WrapUpAfterToolCalls calls (default 12; negative:
	// never), each call tells it to wrap up. And after a Mutate or
	// Destructive call succeeds, the next call has no tools: the model
	// reports the change instead of looping on stale data.
	WrapUpAfterToolCalls int
	MaxTurnToolCalls     int
	AnswerAfterTokens    int64
	AnswerAfter          time.Duration
	// LazyToolThreshold: when more tools than this are offered to a user,
	// the prompt carries a one-line catalog per category instead of every
	// tool, and the model starts with only search_tools and ask_user and
	// loads categories as it needs them (default 16; negative: never lazy).
	LazyToolThreshold int
	// ToolCategories describes categories in the lazy catalog: category ->
	// one line. Optional.
	ToolCategories map[string]string
	// DisableAskUser withholds the ask_user tool, with which the model shows
	// the user a form and waits for the answers.
	DisableAskUser bool
	// DisableClaimCheck turns off the check of what the model says it did
	// (A8). With it on (the default), while a turn has made no change, the
	// model's prose reaches the user a sentence at a time, and a sentence
	// that claims a completed change ("I have deleted note 1.", "Ticket
	// closed.", in eight languages) is withheld and replaced by a note that
	// nothing was changed, and audited (AuditClaimWithheld). The check
	// costs the first words their head start of up to one sentence.
	DisableClaimCheck bool
	// ApprovalTTL is how long a proposal waits for the user's decision
	// (default 24h); a later decision is refused.
	ApprovalTTL time.Duration
	// AutoApprove, when set, is asked before a Mutate or Destructive tool
	// call is turned into a proposal: true runs it at once, as approved.
	// Use it for the tools a user has chosen to always allow. nil: every
	// such call needs approval (or an autonomous turn, see RunAutonomous).
	AutoApprove func(ctx context.Context, u parley.User, tool tools.Spec) bool
	// AutoApproveDestructive lets a user's standing approval, or a
	// request's (Engine.SetAutoApprovals, Request.AutoApprove), name a
	// Destructive tool. By default only Mutate tools may run without a
	// card that way.
	AutoApproveDestructive bool
	// Workflow turns on the workflow policy (B17): resolve, read, write,
	// verify. A Mutate or Destructive call may name only objects the thread
	// has seen: each id at its tool's tools.Spec.IDArgs must have come up in
	// the user's messages or in a successful result of a Read tool in this
	// thread, or the call is refused before any proposal or run, and the
	// model is told to find the id with a read tool first (UNRESOLVED_ID).
	// After a change succeeds, the next model call is offered only the
	// host's server-side Read tools and told to check the change; the call
	// after it reports the change with no tools. Tools that declare no
	// IDArgs are not checked. Off by default: then neither step applies.
	Workflow bool
	// KnowledgeMaxAge bounds how long the result of a Read tool call may
	// answer an identical call later in the thread without running the
	// tool again (default 5m; negative: never). Each tool declares its own
	// reuse (tools.Spec.Reuse), zero by default: only tools that say so are
	// ever reused. A Mutate or Destructive call the user made since, in any
	// thread or through ExecuteTool (as the audit records it), makes
	// earlier results stale.
	KnowledgeMaxAge time.Duration
	// ParallelTools bounds how many Read tools of one round run at once (default 4).
	ParallelTools int
	// ToolTimeout bounds one tool execution (default 30s).
	ToolTimeout time.Duration
	// TurnTimeout bounds a whole turn, which runs detached from the caller's
	// context (default 5m).
	TurnTimeout time.Duration
	// CancelOnDetach cancels the turn when the consumer stops iterating or
	// the caller's context ends. By default the turn completes and persists.
	CancelOnDetach bool
	// CancelPollInterval is how often the Engine's one watcher of its
	// running turns reads their threads, in one batch, to notice a cancel
	// request, a newer message or a deletion from another instance
	// (default 250ms; negative: never, leaving only this process's fast
	// path). When the Store pushes changes (a store.ThreadWatcher, as
	// sqlstore on PostgreSQL), the watcher wakes on each, and the batched
	// read is only a safety net, every 5s or CancelPollInterval if longer.
	CancelPollInterval time.Duration
	// HeartbeatInterval is how often a running turn checkpoints its partial
	// reply (default 5s); Engine.SweepInterrupted treats a reply silent for
	// three intervals as interrupted. When the Ledger is a quota.Renewer,
	// the turn's quota hold is renewed as often, on a lease of three
	// intervals, so a dead turn's hold expires with its heartbeat.
	HeartbeatInterval time.Duration
	// ModelIdleTimeout ends a model call whose stream has been silent this
	// long, before its first event or between two (default 90s; negative:
	// never): a stalled server fails the turn with model_timeout instead of
	// holding the user until TurnTimeout. A reasoning model that thinks
	// silently for longer needs more.
	ModelIdleTimeout time.Duration
	// DrainTimeout bounds how long a stopped turn keeps reading the model's
	// stream, unseen, for its final usage (default 5s).
	DrainTimeout time.Duration

	MaxMessageBytes     int // a user message longer than this is refused (default 32 KiB)
	MaxPageContextBytes int // page context beyond this is cut, before any scan (default 4 KiB)

	// MaxTurnsPerUser bounds the turns one user may have running at once on
	// this Engine (default 4; negative: no cap). Another is refused with
	// CodeTooManyTurns before any other work. The count is per process:
	// with several instances a user may run this many on each.
	MaxTurnsPerUser int
	// MaxTurnOutputTokens and MaxTurnOutputBytes bound what the model may
	// write in one turn, over all its rounds: text, reasoning and tool call
	// arguments (defaults 16384 tokens and 256 KiB; tokens are the reported
	// usage, or the bytes at four a token while a call streams). Past
	// either, the model's stream is closed and the turn ends with
	// FinishLength, keeping the reply written so far.
	MaxTurnOutputTokens int
	MaxTurnOutputBytes  int

	// Prompt. AssistantName (default "Assistant") and Organization fill the
	// {assistant_name} and {organization} placeholders of Persona and
	// CustomInstructions.
	AssistantName      string
	Organization       string            // "": "the host"
	Persona            string            // "": a neutral default persona
	CustomInstructions string            // the operator's standing instructions; an active stored prompt replaces them
	PageInstructions   map[string]string // page key -> instructions; the page string itself never reaches the prompt
	// ResolveEntity loads a host object a request refers to (Request.Entities,
	// Mentions) once the Authorizer allowed ReadEntity for it; nil: none is
	// loaded, and the model is told they are not available.
	ResolveEntity ResolveEntityFunc
	// Mentions finds references in the user's message, e.g. @mentions
	// matched against the host's objects; they are handled as
	// Request.Entities. nil: none.
	Mentions MentionsFunc
	// GenerateTitles names each new thread with a short model call after
	// its first answer, in the background (its tokens count in the quota).
	// Without it, or when the call fails, a thread is named after the start
	// of its first message.
	GenerateTitles bool
	// OperatorAddendum is site-specific text added to every turn's system
	// prompt after the operator's instructions, whatever the page
	// (placeholders filled as in Persona). It is not replaced by an active
	// stored prompt (see store.SystemPrompts), which replaces
	// CustomInstructions.
	OperatorAddendum string
	// ModelFamily declares the model's family: ModelFamilyAnthropic or
	// ModelFamilyOpenAI add a short calibration note for models that follow
	// instructions closely; "" (generic) keeps the firmer wording. It is
	// declared, never inferred from the model name. With Connections, it is
	// the family of a connection that declares none (Connection.ModelFamily).
	ModelFamily string

	// Quota. Each is optional; nil or zero disables it.
	Ledger      quota.Ledger      // per-user token budgets: a turn reserves an estimate first
	SpendLedger quota.SpendLedger // rolling-window spend on this Engine's model connection
	SpendCap    quota.SpendCap    // the cap SpendLedger enforces per user on each connection
	Connection  string            // the single connection's name in spend keys ("": "default"); see Connections
	RateLimiter quota.RateLimiter // counts tool calls per user against ToolRate
	ToolRate    quota.Rate        // e.g. 30 calls per minute per user
	// QuotaMessage words the refusal shown when a token budget is exhausted;
	// nil: an English sentence naming the period and when it resets, in the
	// user's time zone. Return text safe to show.
	QuotaMessage func(u parley.User, e *quota.ExceededError) string

	// Logger takes the Engine's log lines (nil: discard). Inside a turn
	// every line carries the turn's id ("turn", its reply message) and,
	// while a span is recording, "trace_id" and "span_id"; other keys are
	// "thread", "tool", "code" and "err".
	Logger *slog.Logger

	// TracerProvider and MeterProvider take the Engine's spans and metrics,
	// named by the OpenTelemetry GenAI semantic conventions (see the
	// package doc, "Observability"); nil: the otel global providers, which
	// do nothing until the host installs an SDK.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// RecordContent puts message content on the spans: the user's message
	// as the guard redacted it, the answer, and tool arguments and results,
	// each passed through the guard (redacted, or withheld when it
	// blocks). Off by default: spans then hold no content.
	RecordContent bool

	Now func() time.Time // nil: time.Now
}

// Model families for Config.ModelFamily and Connection.ModelFamily.
const (
	ModelFamilyGeneric   = ""
	ModelFamilyAnthropic = "anthropic"
	ModelFamilyOpenAI    = "openai"
)

func knownFamily(f string) bool {
	return f == ModelFamilyGeneric || f == ModelFamilyAnthropic || f == ModelFamilyOpenAI
}

// Defaults.
const (
	DefaultMaxToolRounds        = 5
	DefaultWrapUpAfterToolCalls = 12
	DefaultMaxTurnToolCalls     = 18
	DefaultParallelTools        = 4
	DefaultToolTimeout          = 30 * time.Second
	DefaultTurnTimeout          = 5 * time.Minute
	DefaultCancelPollInterval   = 250 * time.Millisecond
	DefaultDrainTimeout         = 5 * time.Second
	DefaultModelIdleTimeout     = 90 * time.Second
	DefaultHeartbeatInterval    = 5 * time.Second
	DefaultMaxMessageBytes      = 32 << 10
	DefaultMaxPageContextBytes  = 4 << 10
	DefaultMaxTurnsPerUser      = 4
	DefaultMaxTurnOutputTokens  = 16384
	DefaultMaxTurnOutputBytes   = 256 << 10
	DefaultAssistantName        = "Assistant"
	DefaultContextWindow        = 32768
	DefaultLazyToolThreshold    = 16
	DefaultApprovalTTL          = 24 * time.Hour
	DefaultKnowledgeMaxAge      = 5 * time.Minute
	DefaultModelRetries         = 3
	DefaultModelRetryWait       = 30 * time.Second
	DefaultTopicTimeout         = 5 * time.Second
)

func (c *Config) validate() error {
	errs := c.validateConnections()
	if c.Authorizer == nil {
		errs = append(errs, errors.New("Authorizer is required"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("Store is required"))
	}
	if c.ToolRate.Enabled() && c.RateLimiter == nil {
		errs = append(errs, errors.New("ToolRate needs a RateLimiter"))
	}
	if c.SpendCap.Enabled() && c.SpendLedger == nil {
		errs = append(errs, errors.New("SpendCap needs a SpendLedger"))
	}
	if p, ok := c.Ledger.(interface{ Policy() quota.Policy }); ok {
		// A hold must outlive the longest turn, or Sweep voids it mid-turn.
		turn := cmp.Or(c.TurnTimeout, DefaultTurnTimeout) + cmp.Or(c.DrainTimeout, DefaultDrainTimeout) + persistTimeout
		if ttl := p.Policy().TTL(); ttl <= turn {
			errs = append(errs, fmt.Errorf("the Ledger's hold TTL (%v) must exceed TurnTimeout + DrainTimeout + %v (%v)", ttl, persistTimeout, turn))
		}
	}
	if set, ok := c.Tools.(*tools.Set); ok && set == nil {
		errs = append(errs, errors.New("Tools is a nil *tools.Set (was an error from tools.NewSet dropped?)"))
	} else {
		if c.Tools != nil {
			for _, name := range []string{SearchToolsName, AskUserName} {
				if _, ok := c.Tools.Lookup(name); ok {
					errs = append(errs, fmt.Errorf("the tool name %q is reserved for the Engine", name))
				}
			}
		}
		errs = append(errs, checkGrants(c.Authorizer, c.Tools)...)
	}
	if !knownFamily(c.ModelFamily) {
		errs = append(errs, fmt.Errorf("unknown ModelFamily %q", c.ModelFamily))
	}
	if c.AnswerAfterTokens < 0 {
		errs = append(errs, errors.New("AnswerAfterTokens must not be negative"))
	}
	if c.MaxToolRounds < 0 || c.ParallelTools < 0 || c.MaxMessageBytes < 0 || c.MaxPageContextBytes < 0 ||
		c.ToolTimeout < 0 || c.TurnTimeout < 0 || c.MaxOutputTokens < 0 || c.TopicTimeout < 0 {
		errs = append(errs, errors.New("limits must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// ErrInvalidConfig is wrapped by the errors New returns for a Config it
// refuses.
var ErrInvalidConfig = errors.New("assistant: invalid config")

func (c *Config) setDefaults() {
	// Zero means the default.
	c.MaxToolRounds = cmp.Or(c.MaxToolRounds, DefaultMaxToolRounds)
	c.WrapUpAfterToolCalls = cmp.Or(c.WrapUpAfterToolCalls, DefaultWrapUpAfterToolCalls) // negative: never
	c.MaxTurnToolCalls = cmp.Or(c.MaxTurnToolCalls, DefaultMaxTurnToolCalls)             // negative: no limit
	c.ParallelTools = cmp.Or(c.ParallelTools, DefaultParallelTools)
	c.ToolTimeout = cmp.Or(c.ToolTimeout, DefaultToolTimeout)
	c.TurnTimeout = cmp.Or(c.TurnTimeout, DefaultTurnTimeout)
	c.AnswerAfter = cmp.Or(c.AnswerAfter, c.TurnTimeout/2)                         // negative: never
	c.CancelPollInterval = cmp.Or(c.CancelPollInterval, DefaultCancelPollInterval) // negative: never poll
	c.MaxMessageBytes = cmp.Or(c.MaxMessageBytes, DefaultMaxMessageBytes)
	c.MaxPageContextBytes = cmp.Or(c.MaxPageContextBytes, DefaultMaxPageContextBytes)
	c.MaxTurnsPerUser = cmp.Or(c.MaxTurnsPerUser, DefaultMaxTurnsPerUser)       // negative: no cap
	c.LazyToolThreshold = cmp.Or(c.LazyToolThreshold, DefaultLazyToolThreshold) // negative: never lazy
	c.AssistantName = cmp.Or(c.AssistantName, DefaultAssistantName)
	if len(c.Connections) == 0 {
		c.Connection = cmp.Or(c.Connection, "default")
	}
	// Zero or negative means the default.
	c.HeartbeatInterval = positiveOr(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.DrainTimeout = positiveOr(c.DrainTimeout, DefaultDrainTimeout)
	if c.ModelIdleTimeout == 0 {
		c.ModelIdleTimeout = DefaultModelIdleTimeout
	}
	c.ApprovalTTL = positiveOr(c.ApprovalTTL, DefaultApprovalTTL)
	c.KnowledgeMaxAge = cmp.Or(c.KnowledgeMaxAge, DefaultKnowledgeMaxAge) // negative: never
	c.ModelRetries = cmp.Or(c.ModelRetries, DefaultModelRetries)          // negative: never
	c.ModelRetryWait = positiveOr(c.ModelRetryWait, DefaultModelRetryWait)
	c.ContextWindow = positiveOr(c.ContextWindow, DefaultContextWindow)
	c.TopicTimeout = positiveOr(c.TopicTimeout, DefaultTopicTimeout)
	c.TopicRefusal = cmp.Or(c.TopicRefusal, DefaultTopicRefusal)
	c.MaxTurnOutputTokens = positiveOr(c.MaxTurnOutputTokens, DefaultMaxTurnOutputTokens)
	c.MaxTurnOutputBytes = positiveOr(c.MaxTurnOutputBytes, DefaultMaxTurnOutputBytes)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler) // nothing to add ids to
	} else if _, ok := c.Logger.Handler().(logHandler); !ok {
		c.Logger = slog.New(logHandler{c.Logger.Handler()})
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
