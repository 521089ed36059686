package assistant

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// propose turns a Mutate or Destructive call into a proposal: the tool's
// dry run (if it is a tools.Proposer), a stored proposal and a confirm
// block. It reports false, with the Result for the model, when the call
// cannot be proposed.
func (t *turn) propose(ctx context.Context, c providers.ToolCall, o offeredTool, emit func(blocks.Block)) (tools.Result, bool) {
	pctx, cancel := context.WithTimeout(ctx, t.e.cfg.ToolTimeout)
	defer cancel()
	start := time.Now()
	r, err := tools.Propose(pctx, o.tool, tools.Call{ID: c.ID, User: t.u, ThreadID: t.thread.ID, Args: c.Args})
	if err != nil {
		t.e.cfg.Logger.Warn("assistant: dry run failed", "tool", c.Name, "thread", t.thread.ID, "err", err)
	}
	if !r.OK {
		return r, false // answered and audited by runTools
	}
	args := compactJSON(c.Args)
	summary := plainLine(r.Summary, maxSummaryBytes)
	if summary == "" {
		summary = defaultSummary(o.spec, args)
	}
	token := newToken()
	now := t.e.cfg.Now()
	p := store.Proposal{
		Token: token, UserID: t.u.ID, ThreadID: t.thread.ID, MessageID: t.reply.ID, CallID: c.ID,
		Tool: c.Name, Args: args, ArgsHash: argsHash(args), Summary: summary, Status: store.ProposalPending,
		CreatedAt: now, ExpiresAt: now.Add(t.e.cfg.ApprovalTTL),
	}
	if err := t.e.cfg.Store.CreateProposal(context.WithoutCancel(ctx), &p); err != nil {
		t.e.cfg.Logger.Error("assistant: store proposal", "tool", c.Name, "thread", t.thread.ID, "err", err)
		return tools.Fail(tools.CodeInternal, "The approval could not be prepared."), false
	}
	if t.stopped() {
		// The user's stream has ended: they will never see this card, so it
		// must not stay decidable.
		if _, err := t.e.cfg.Store.DecideProposal(context.WithoutCancel(ctx), token, store.ProposalDeclined, t.e.cfg.Now()); err != nil {
			t.e.cfg.Logger.Error("assistant: withdraw unseen proposal", "thread", t.thread.ID, "err", err)
		}
		return tools.Fail(tools.CodeInternal, "The turn was stopped before the approval could be asked for."), false
	}
	data := args
	if r.Data != nil {
		if raw, err := json.Marshal(r.Data); err == nil {
			data = raw
		}
	}
	emit(blocks.Block{Kind: blocks.Confirm, ID: token, Name: c.Name, Content: summary, Tag: string(o.spec.Effect), Data: data})
	if r.UI != nil {
		emit(*r.UI)
	}
	t.auditToolCall(ctx, c, tools.Result{Error: &tools.ToolError{Code: tools.CodeNeedsApproval}}, time.Since(start), "chat", approvalPending)
	return r, true
}

// maxSummaryBytes bounds a proposal's one-line summary.
const maxSummaryBytes = 300

// defaultSummary describes a call of a tool that has no dry run.
func defaultSummary(spec tools.Spec, args json.RawMessage) string {
	s := spec.Name
	if string(args) != "{}" && len(args) > 0 {
		s += " " + string(args)
	}
	return plainLine(s, maxSummaryBytes)
}

// plainLine reduces s to one line of at most n bytes: control characters
// become spaces and runs of white space (line breaks included) one space.
// Unlike oneLine it keeps markup characters, so a card says exactly what
// will be stored ("a < b", "#3"); clients show it as text.
func plainLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return truncate(strings.Join(strings.Fields(s), " "), n)
}

// newToken returns 256 random bits, URL-safe. crypto/rand.Read never
// fails (it crashes the program if the system cannot supply randomness).
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// maxTokenBytes bounds a decision token before any lookup.
const maxTokenBytes = 128

// lookupTool finds a tool u may use, on any page, that the server runs.
func (e *Engine) lookupTool(ctx context.Context, u parley.User, name string) (offeredTool, bool) {
	if e.cfg.Tools == nil {
		return offeredTool{}, false
	}
	tool, ok := e.cfg.Tools.Lookup(name)
	if !ok {
		return offeredTool{}, false
	}
	spec := tool.Spec()
	if spec.ClientSide || e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: &spec}) != nil {
		return offeredTool{}, false
	}
	return offeredTool{spec: spec, tool: tool}, true
}
