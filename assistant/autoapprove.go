package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Standing approvals (B10). A user may choose to run some Mutate tools,
// or the Mutate tools of a category, without an approval card: for good,
// stored with a Store that implements store.AutoApprovals
// (SetAutoApprovals), or for one request (Request.AutoApprove, the
// auto_approve field a client sends). A grant is a tool's name or
// "category:<name>". Each grant is checked when it is set and again when a
// turn uses it: the tool needs approval, the user may use it, and the
// Authorizer allows AutoApproveTool for it; a Destructive tool only when
// Config.AutoApproveDestructive allows it, and never through a category.
// A call run under a standing approval is audited with approval "auto".

// AuditAutoApproveSet is the audit kind of a change to a user's standing
// approvals; Data {"grants"}.
const AuditAutoApproveSet = "auto_approve.set"

// MaxAutoApprovals bounds the grants of a user, or of a request.
const MaxAutoApprovals = 64

// categoryGrant prefixes a grant that names a category.
const categoryGrant = "category:"

// AutoApprovals returns the standing approvals u has stored, sorted;
// CodeUnsupported if the Store keeps none.
func (e *Engine) AutoApprovals(ctx context.Context, u parley.User) ([]string, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	as, ok := e.cfg.Store.(store.AutoApprovals)
	if !ok {
		return nil, wrap(CodeUnsupported, "auto-approvals", fmt.Errorf("the Store keeps no auto-approvals: %w", errors.ErrUnsupported))
	}
	gs, err := as.AutoApprovals(ctx, u.ID)
	if err != nil {
		return nil, wrap(CodeInternal, "auto-approvals", err)
	}
	return gs, nil
}

// SetAutoApprovals replaces u's standing approvals with grants (empty:
// none) and returns them as stored. Every grant must name a tool u may use
// that needs approval, or a category with such a tool, and be allowed by
// the Authorizer (AutoApproveTool); a Destructive tool needs
// Config.AutoApproveDestructive. Else it is CodeInvalidRequest, naming
// the grant, and nothing changes. CodeUnsupported if the Store keeps
// none. The change is audited.
func (e *Engine) SetAutoApprovals(ctx context.Context, u parley.User, grants []string) ([]string, error) {
	const op = "set auto-approvals"
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	as, ok := e.cfg.Store.(store.AutoApprovals)
	if !ok {
		return nil, wrap(CodeUnsupported, op, fmt.Errorf("the Store keeps no auto-approvals: %w", errors.ErrUnsupported))
	}
	if err := validGrants(grants); err != nil {
		return nil, invalidRequest(op, err.Error())
	}
	usable := e.usableTools(ctx, u)
	for _, g := range grants {
		if len(e.grantedTools(ctx, u, usable, []string{g})) == 0 {
			return nil, invalidRequest(op, fmt.Sprintf("%q names no tool you may run without a card", g))
		}
	}
	if err := as.SetAutoApprovals(ctx, u.ID, grants); err != nil {
		return nil, e.storeErr(op, err)
	}
	gs, err := as.AutoApprovals(ctx, u.ID)
	if err != nil {
		return nil, wrap(CodeInternal, op, err)
	}
	data, _ := json.Marshal(map[string]any{"grants": gs})
	if err := e.cfg.Store.AppendAudit(ctx, &store.AuditEvent{Kind: AuditAutoApproveSet, ActorID: u.ID, Data: data}); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: audit auto-approvals", "user", u.ID, "err", err)
	}
	return gs, nil
}

// usableTools are the tools u may use on some page: grants are not per
// page, and a turn offers a tool only on its pages anyway.
func (e *Engine) usableTools(ctx context.Context, u parley.User) []offeredTool {
	if e.cfg.Tools == nil {
		return nil
	}
	var out []offeredTool
	for _, t := range e.cfg.Tools.All() {
		spec := t.Spec()
		if e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: &spec}) == nil {
			out = append(out, offeredTool{spec: spec, tool: t})
		}
	}
	return out
}

// validGrants checks the shape of grants, before anything reads them.
func validGrants(grants []string) error {
	if len(grants) > MaxAutoApprovals {
		return fmt.Errorf("at most %d auto-approvals", MaxAutoApprovals)
	}
	for _, g := range grants {
		if !validID(g) { // not empty, UTF-8 without NUL, at most 128 bytes
			return fmt.Errorf("each auto-approval is a tool's name or %q, at most 128 bytes", categoryGrant+"<name>")
		}
	}
	return nil
}

// grantedTools are the tools of offered that grants let u run without a
// card: a Mutate or Destructive tool named by a grant, or a Mutate tool of
// a category one names, that the Authorizer allows as AutoApproveTool; a
// Destructive one only by name and with Config.AutoApproveDestructive.
func (e *Engine) grantedTools(ctx context.Context, u parley.User, offered []offeredTool, grants []string) map[string]bool {
	out := map[string]bool{}
	for _, o := range offered {
		s := o.spec
		if !s.NeedsApproval() || s.ClientSide {
			continue
		}
		byName := slices.Contains(grants, s.Name)
		byCategory := slices.Contains(grants, categoryGrant+category(s))
		switch {
		case s.Effect == tools.Destructive && (!byName || !e.cfg.AutoApproveDestructive):
		case !byName && !byCategory:
		case e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: AutoApproveTool, Tool: &s}) != nil:
		default:
			out[s.Name] = true
		}
	}
	return out
}

// standingApprovals are the tools of offered a turn of u runs without a
// card: by u's stored grants and the request's. A store that cannot be
// read grants nothing (logged): the cards come back, nothing runs unseen.
func (e *Engine) standingApprovals(ctx context.Context, u parley.User, offered []offeredTool, requested []string) map[string]bool {
	grants := slices.Clone(requested)
	if as, ok := e.cfg.Store.(store.AutoApprovals); ok && slices.ContainsFunc(offered, func(o offeredTool) bool { return o.spec.NeedsApproval() }) {
		stored, err := as.AutoApprovals(ctx, u.ID)
		if err != nil {
			e.cfg.Logger.ErrorContext(ctx, "assistant: read auto-approvals; asking on cards instead", "user", u.ID, "err", err)
			stored = nil
		}
		grants = append(grants, stored...)
	}
	if len(grants) == 0 {
		return nil
	}
	return e.grantedTools(ctx, u, offered, grants)
}
