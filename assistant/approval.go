package assistant

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

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

// pendingProposals are the cards of a thread whose messages are prior that
// still wait for a decision. A thread that never showed a card costs no
// query. A failure only costs the prompt its reminder, so it is logged.
func (e *Engine) pendingProposals(ctx context.Context, threadID string, prior []store.Message) []store.Proposal {
	if !slices.ContainsFunc(prior, func(m store.Message) bool {
		return slices.ContainsFunc(m.Blocks, func(b blocks.Block) bool { return b.Kind == blocks.Confirm })
	}) {
		return nil
	}
	ps, err := e.cfg.Store.ListProposals(ctx, threadID)
	if err != nil {
		e.cfg.Logger.WarnContext(ctx, "assistant: list proposals", "thread", threadID, "err", err)
		return nil
	}
	now := e.cfg.Now()
	e.withdrawSuperseded(ctx, ps, prior)
	return slices.DeleteFunc(ps, func(p store.Proposal) bool {
		return p.Status != store.ProposalPending || !now.Before(p.ExpiresAt)
	})
}
