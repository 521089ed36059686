package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// defaultOutputEstimate is the output a turn is assumed to need when
// Config.MaxOutputTokens leaves the provider's default in force.
const defaultOutputEstimate = 1024

// reserve checks the spend cap and holds the turn's estimated tokens, before
// anything is persisted or sent to the model: a refused turn costs nothing
// and leaves no trace.
func (t *turn) reserve(ctx context.Context) error {
	cfg := &t.e.cfg
	now := cfg.Now()
	if cfg.SpendLedger != nil && cfg.SpendCap.Enabled() {
		if err := cfg.SpendLedger.Allow(ctx, t.spendKey(), cfg.SpendCap, now); err != nil {
			if errors.Is(err, quota.ErrSpendCapExceeded) {
				return wrap(CodeSpendCapExceeded, "spend cap", err)
			}
			return wrap(CodeInternal, "spend cap", err)
		}
	}
	if cfg.Ledger == nil {
		return nil
	}
	h, err := cfg.Ledger.Reserve(ctx, t.u.ID, t.estimate(), now)
	if err != nil {
		if ee, ok := errors.AsType[*quota.ExceededError](err); ok {
			return &Error{Code: CodeQuotaExceeded, Op: "reserve quota", Err: err, Message: t.e.quotaMessage(t.u, ee)}
		}
		return wrap(CodeInternal, "reserve quota", err)
	}
	t.hold = &h
	return nil
}

// estimate is what one model call of this turn may cost: the prompt at about
// four characters a token, plus the output allowance. Later tool rounds
// re-send the prompt, so a turn may use more than it reserved; Settle
// charges what was used (see quota.Ledger on bounded overshoot).
func (t *turn) estimate() int64 {
	n := len(t.prompt.system) + len(t.req.Message)
	for _, s := range after(t.prompt.past, t.thread.SummaryThrough) { // the history before compaction
		for _, m := range s.msgs {
			n += len(m.Content)
			for _, c := range m.ToolCalls {
				n += len(c.Name) + len(c.Args)
			}
		}
	}
	out := t.conn.maxOutput
	if out == 0 {
		out = defaultOutputEstimate
	}
	return int64(n/4 + out)
}

// release gives the hold back when the turn never reached the model.
func (t *turn) release(ctx context.Context) {
	if t.hold == nil {
		return
	}
	if err := t.e.cfg.Ledger.Release(ctx, *t.hold); err != nil {
		t.e.cfg.Logger.Error("assistant: release quota", "user", t.u.ID, "hold", t.hold.ID, "err", err)
	}
	t.hold = nil
}

func (t *turn) spendKey() quota.SpendKey {
	return quota.SpendKey{Connection: t.conn.name, Principal: t.u.ID}
}

// estimatedUsage stands in for a model call whose server reported no usage,
// so quotas still count it: four characters a token, both ways.
func estimatedUsage(req *providers.Request, text string, calls []providers.ToolCall) providers.Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Args)
		}
	}
	for _, d := range req.Tools {
		in += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	out := len(text)
	for _, c := range calls {
		out += len(c.Name) + len(c.Args)
	}
	return providers.Usage{InputTokens: int64(in / 4), OutputTokens: int64((out + 3) / 4)}
}

// quotaMessage words a quota refusal for u.
func (e *Engine) quotaMessage(u parley.User, ee *quota.ExceededError) string {
	if e.cfg.QuotaMessage != nil {
		return e.cfg.QuotaMessage(u, ee)
	}
	resets := ee.ResetsAt.In(userLocation(u)).Format("Mon 2 Jan 2006 at 15:04 MST")
	switch {
	case ee.Limit == 0:
		return fmt.Sprintf("Your %s assistant allowance is 0 tokens, so the assistant is not available to you.", ee.Period)
	case ee.Used >= ee.Limit:
		return fmt.Sprintf("You have used your %s assistant allowance (%d of %d tokens). It resets on %s.",
			ee.Period, ee.Used, ee.Limit, resets)
	default:
		// The rest is held by this user's answers still in progress.
		return fmt.Sprintf("Your answers in progress are using the rest of your %s assistant allowance (%d of %d tokens used so far). "+
			"Try again when they finish; the allowance resets on %s.", ee.Period, ee.Used, ee.Limit, resets)
	}
}

// Usage returns the token usage of userID, for u: any user may read their
// own; reading another user's needs ManageQuota. Without a Ledger it is
// CodeNotFound.
func (e *Engine) Usage(ctx context.Context, u parley.User, userID string) (quota.Usage, error) {
	if err := e.quotaAccess(ctx, u, userID); err != nil {
		return quota.Usage{}, err
	}
	us, err := e.cfg.Ledger.Usage(ctx, userID, e.cfg.Now())
	if err != nil {
		return quota.Usage{}, wrap(CodeInternal, "read usage", err)
	}
	return us, nil
}

// LimitsUpdate changes some of a user's limit overrides. A nil field leaves
// that period as it is; a field set to nil restores the system default; a
// value sets the override (quota.Unlimited for none).
type LimitsUpdate struct {
	Daily, Weekly, Monthly **int64
}

// SetLimits changes userID's limit overrides; it needs ManageQuota, also for
// one's own limits. The change is audited.
func (e *Engine) SetLimits(ctx context.Context, u parley.User, userID string, up LimitsUpdate) (quota.Usage, error) {
	if err := e.authorize(ctx, u, Action{Kind: ManageQuota}); err != nil {
		return quota.Usage{}, err
	}
	if e.cfg.Ledger == nil {
		return quota.Usage{}, &Error{Code: CodeNotFound, Op: "set limits", Err: errors.New("no quota ledger configured"), Message: "Token quotas are not enabled."}
	}
	if userID == "" {
		return quota.Usage{}, wrap(CodeInvalidRequest, "set limits", errors.New("empty user id"))
	}
	cur, err := e.cfg.Ledger.Limits(ctx, userID)
	if err != nil {
		return quota.Usage{}, wrap(CodeInternal, "read limits", err)
	}
	for _, f := range []struct {
		up  **int64
		cur **int64
	}{{up.Daily, &cur.Daily}, {up.Weekly, &cur.Weekly}, {up.Monthly, &cur.Monthly}} {
		if f.up != nil {
			*f.cur = *f.up
		}
	}
	if err := e.cfg.Ledger.SetLimits(ctx, userID, cur); err != nil {
		if errors.Is(err, quota.ErrInvalid) {
			return quota.Usage{}, wrap(CodeInvalidRequest, "set limits", err)
		}
		return quota.Usage{}, wrap(CodeInternal, "set limits", err)
	}
	data, _ := json.Marshal(map[string]any{"user": userID, "limits": cur})
	if err := e.cfg.Store.AppendAudit(ctx, &store.AuditEvent{Kind: AuditQuotaSet, ActorID: u.ID, Data: data}); err != nil {
		e.cfg.Logger.Error("assistant: audit quota change", "user", userID, "err", err)
	}
	return e.Usage(ctx, u, userID)
}

func (e *Engine) quotaAccess(ctx context.Context, u parley.User, userID string) error {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return err
	}
	if userID != u.ID {
		if err := e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: ManageQuota}); err != nil {
			// Another user's usage is not found rather than forbidden.
			return &Error{Code: CodeNotFound, Op: "read usage", Err: err, Message: "No usage is available for that user."}
		}
	}
	if e.cfg.Ledger == nil {
		return &Error{Code: CodeNotFound, Op: "read usage", Err: errors.New("no quota ledger configured"), Message: "Token quotas are not enabled."}
	}
	return nil
}
