package assistant

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// Audit event kinds of the guard. Data never holds the scanned text.
const (
	AuditGuardInput    = "guard.input"     // a user message with a High or Critical finding
	AuditGuardToolArgs = "guard.tool_args" // tool arguments (or a client's output) with a High or Critical finding
	// AuditGuardToolResult is a tool result (or a client-side tool's
	// output) withheld from the model with a High or Critical finding;
	// Data {"tool", "call_id", "severity", "action", "categories",
	// "source"?: "client"}. See untrusted.go.
	AuditGuardToolResult = "guard.tool_result"
	// AuditGuardContext is page context or a grounded entity's text
	// withheld from the model with a High or Critical finding; Data
	// {"source": "page_context"|"entity", "type"?, "id"?, "severity",
	// "action", "categories"}.
	AuditGuardContext = "guard.context"
)

// checkInput runs the input guard on a user message. Nothing here reaches
// the user or the log but categories, severity and action.
func (e *Engine) checkInput(ctx context.Context, text string) guard.Result {
	if e.guard == nil {
		return guard.Result{Redacted: text}
	}
	r := e.guard.Check(ctx, text)
	if r.Cause != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: input guard failed closed", "err", r.Cause)
	}
	return r
}

// verdict is what the store keeps of a guard result.
func verdict(r guard.Result, checked bool) store.GuardVerdict {
	if !checked {
		return store.GuardVerdict{}
	}
	return store.GuardVerdict{
		Action:             r.Action.String(),
		Severity:           r.Severity.String(),
		Categories:         r.Categories(),
		ExcludeFromHistory: r.Injection() >= guard.High,
		FenceInHistory:     r.Injection() == guard.Medium,
	}
}

// humanCategories names a result's categories for people.
func humanCategories(r guard.Result) []string {
	names := r.Categories()
	for i, c := range names {
		names[i] = strings.ReplaceAll(c, "_", " ")
	}
	return names
}

// checkContext screens page context, or a grounded entity's text, on its
// way to the model. Instructions planted in it are judged by the document
// scan (see untrusted.go): it returns that scan's result and what it calls
// for, and "" when the text is withheld. Personal data is handled as in a
// message: the text the model may see is the message scan's Redacted, so
// a credential or a card number on the page does not reach the model; that
// scan's own injection verdict is not used, except that its failure
// withholds the text too.
func (e *Engine) checkContext(ctx context.Context, text string) (string, guard.Result, screening) {
	if e.guard == nil || text == "" {
		return text, guard.Result{Redacted: text}, screenPass
	}
	r, s := e.scanDocument(ctx, text)
	if s == screenWithhold {
		e.cfg.Logger.InfoContext(ctx, "assistant: context withheld by the guard", "categories", r.Categories())
		return "", r, s
	}
	p := e.checkInput(ctx, text)
	if scanFailed(p) {
		return "", p, screenWithhold
	}
	return p.Redacted, r, s
}

// judgeSpend counts the tokens a model-backed guard.Judge used for one
// turn, reported through ChargeGuardUsage; the turn charges them with its
// own.
type judgeSpend struct{ tokens atomic.Int64 }

type judgeSpendKey struct{}

func withJudgeSpend(ctx context.Context, s *judgeSpend) context.Context {
	return context.WithValue(ctx, judgeSpendKey{}, s)
}

// chargeJudged charges u the tokens s counted outside a turn (a direct
// tool execution), to u's quota and to u's spend on the default
// connection: there is no turn to charge them with.
func (e *Engine) chargeJudged(ctx context.Context, u parley.User, s *judgeSpend) {
	if n := s.tokens.Load(); n > 0 {
		e.charge(ctx, u, nil, e.defaultSpendKey(u), n)
	}
}

// defaultSpendKey is where u's use of the default connection is recorded:
// the guard's judge, outside a turn, spends there.
func (e *Engine) defaultSpendKey(u parley.User) quota.SpendKey {
	return quota.SpendKey{Connection: e.conns.conns[e.conns.def].Name, Principal: u.ID}
}

// ChargeGuardUsage counts u against the quota of the user whose turn the
// guard is scanning when ctx is the ctx of the Engine's guard call: the
// turn charges it with its own tokens, to its user's quota and spend. It
// is the OnUsage hook of a model-backed judge:
//
//	modeljudge.Config{Provider: cheap, OnUsage: assistant.ChargeGuardUsage}
//
// Engine.ExecuteTool charges what it counts the same way, without a turn.
// It counts nothing for a ctx outside the Engine (the guard used on its
// own), nor usage reported after the turn was charged (a judge that
// outlived the guard's JudgeTimeout). It is safe for concurrent use.
func ChargeGuardUsage(ctx context.Context, u providers.Usage) {
	if s, _ := ctx.Value(judgeSpendKey{}).(*judgeSpend); s != nil {
		s.tokens.Add(u.Total())
	}
}
