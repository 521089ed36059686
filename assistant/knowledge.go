package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// The knowledge accumulator (B16) keeps what the thread's tool calls
// returned, by call: the result itself when it is small. The facts of a
// result are extracted deterministically (no model call, extractFacts) when
// compaction replaces an old tool result by them. The knowledge gate
// answers a Read call that
// repeats an earlier one exactly (same tool, same arguments) without
// running it again, while the earlier answer is fresh: younger than
// Config.KnowledgeMaxAge and with no Mutate or Destructive call since.
//
// It is bounded (maxFacts entries, maxKnowledgeBytes in all) and evicts the
// least recently used entry first, never one from the current turn.
const (
	maxFacts          = 60
	maxKnowledgeBytes = 64 << 10
	maxFactBytes      = 240     // one result's facts
	maxKeptResult     = 2 << 10 // a result kept whole for the gate
)

// fact is what the thread learned from one tool call.
type fact struct {
	key    string // tool name and canonical arguments
	result string // the tool message the model read, if at most maxKeptResult
	at     time.Time
	turn   bool // learned in the current turn: pinned
}

func (f *fact) size() int { return len(f.key) + len(f.result) }

// knowledge is the accumulator of one turn, rebuilt from the thread's
// history when the turn begins. The worker goroutine owns it; Read calls of
// a round run in parallel but are learned from in call order, after.
type knowledge struct {
	facts []*fact // least recently used first
	bytes int

	change     time.Time // the user's last change, from the audit (lastChange)
	changeRead bool
}

// callKey identifies a tool call for the gate.
func callKey(name string, args json.RawMessage) string {
	return name + "\x00" + canonicalJSON(args)
}

// learn records the result of a call, replacing what an identical call
// taught before. Failed results teach nothing. A withheld or fenced result
// (see untrusted.go) teaches nothing either, and makes what the same call
// taught before stale: it is never answered from the gate.
func (k *knowledge) learn(key, content string, at time.Time, pinned bool) {
	if _, s := screenedForm(content); s != screenPass {
		k.drop(key)
		return
	}
	if !resultOK(content) {
		return
	}
	f := &fact{key: key, at: at, turn: pinned}
	if len(content) <= maxKeptResult {
		f.result = content
	}
	k.drop(key)
	k.facts = append(k.facts, f)
	k.bytes += f.size()
	k.evict()
}

// forget drops everything: a change was made, and any fact may be stale.
func (k *knowledge) forget() { k.facts, k.bytes = nil, 0 }

// forgetBefore drops what was learned before a change made at.
func (k *knowledge) forgetBefore(at time.Time) {
	for i := 0; i < len(k.facts); {
		if f := k.facts[i]; !f.at.After(at) {
			k.bytes -= f.size()
			k.facts = slices.Delete(k.facts, i, i+1)
			continue
		}
		i++
	}
}

func (k *knowledge) drop(key string) {
	if i := slices.IndexFunc(k.facts, func(f *fact) bool { return f.key == key }); i >= 0 {
		k.bytes -= k.facts[i].size()
		k.facts = slices.Delete(k.facts, i, i+1)
	}
}

// evict removes the least recently used entries not pinned by the current
// turn until the bounds hold.
func (k *knowledge) evict() {
	for i := 0; i < len(k.facts) && (len(k.facts) > maxFacts || k.bytes > maxKnowledgeBytes); {
		if k.facts[i].turn {
			i++
			continue
		}
		k.bytes -= k.facts[i].size()
		k.facts = slices.Delete(k.facts, i, i+1)
	}
}

// lookup returns the fresh, whole result of an identical earlier call, and
// marks it recently used.
func (k *knowledge) lookup(key string, notBefore time.Time) (*fact, bool) {
	i := slices.IndexFunc(k.facts, func(f *fact) bool { return f.key == key })
	if i < 0 || k.facts[i].result == "" || k.facts[i].at.Before(notBefore) {
		return nil, false
	}
	f := k.facts[i]
	k.facts = append(slices.Delete(k.facts, i, i+1), f)
	return f, true
}

// rebuildKnowledge learns from the tool calls of the thread's current
// branch, oldest first. A Mutate or Destructive call that ran, or a call to
// a tool this Engine does not know, makes everything before it stale.
func (t *turn) rebuildKnowledge() {
	for _, s := range t.prompt.past {
		calls := map[string]providers.ToolCall{}
		for _, m := range s.msgs {
			switch m.Role {
			case providers.Assistant:
				for _, c := range m.ToolCalls {
					calls[c.ID] = c
				}
			case providers.Tool:
				c, ok := calls[m.ToolCallID]
				if !ok || isMetaTool(c.Name) {
					continue
				}
				if !t.readOnly(c.Name) {
					t.know.forget()
					continue
				}
				t.know.learn(callKey(c.Name, c.Args), m.Content, s.at, false)
			}
		}
	}
}

// readOnly reports whether name is a Read tool of the registry.
func (t *turn) readOnly(name string) bool {
	if t.e.cfg.Tools == nil {
		return false
	}
	tool, ok := t.e.cfg.Tools.Lookup(name)
	return ok && isRead(tool.Spec())
}

// isRead reports whether a tool only reads: Effect Read, or unset, which
// tools.Spec documents as Read.
func isRead(s tools.Spec) bool { return s.Effect == tools.Read || s.Effect == "" }

// known answers a Read call from the knowledge gate: the result of an
// identical call made earlier in the thread, while it is fresh.
func (t *turn) known(ctx context.Context, o offeredTool, c providers.ToolCall) (tools.Result, bool) {
	age := t.e.cfg.KnowledgeMaxAge
	if age < 0 || !isRead(o.spec) || o.spec.ClientSide {
		return tools.Result{}, false
	}
	f, ok := t.know.lookup(callKey(c.Name, c.Args), t.e.cfg.Now().Add(-age))
	if !ok || f.turn {
		// Within one turn a repeat is the loop detector's business.
		return tools.Result{}, false
	}
	if changed := t.lastChange(ctx); !f.at.After(changed) {
		return tools.Result{}, false
	}
	var r struct {
		Summary string          `json:"summary"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal([]byte(f.result), &r) != nil {
		return tools.Result{}, false
	}
	when := f.at.In(t.location()).Format("15:04")
	return tools.Result{OK: true, Data: r.Data,
		Summary: strings.TrimSpace(fmt.Sprintf("Already known from the same call at %s. %s", when, r.Summary))}, true
}

// changeScan bounds the audit rows lastChange reads.
const changeScan = 200

// lastChange is when the user last changed anything, through any thread or
// the host's own buttons: the newest audited call of a Mutate or
// Destructive tool that did not fail before running. It is read once per
// turn, at the gate's first hit. If the rows read hold no change, the
// oldest of them bounds it (a change may be older); if the audit cannot be
// read, now does: nothing is reused.
func (t *turn) lastChange(ctx context.Context) time.Time {
	if t.know.changeRead {
		return t.know.change
	}
	t.know.changeRead = true
	t.know.change = t.e.cfg.Now()
	rows, err := t.e.cfg.Store.ListAudit(ctx, store.AuditFilter{Kind: AuditToolCall, ActorID: t.u.ID, Limit: changeScan})
	if err != nil {
		t.e.cfg.Logger.Warn("assistant: read the audit for the knowledge gate", "err", err)
		return t.know.change
	}
	for _, r := range rows {
		var d struct {
			Effect   tools.Effect `json:"effect"`
			Approval string       `json:"approval"`
		}
		if json.Unmarshal(r.Data, &d) == nil && (d.Effect == tools.Mutate || d.Effect == tools.Destructive) &&
			d.Approval != approvalPending && d.Approval != approvalDeclined {
			t.know.change = r.CreatedAt
			return t.know.change
		}
	}
	switch {
	case len(rows) == changeScan:
		t.know.change = rows[len(rows)-1].CreatedAt
	default:
		t.know.change = time.Time{}
	}
	return t.know.change
}

// resultOK reports whether a tool message says the call succeeded; for a
// fenced result, whether the result inside it does.
func resultOK(content string) bool {
	inner, _ := screenedForm(content)
	var r struct {
		OK bool `json:"ok"`
	}
	return json.Unmarshal([]byte(inner), &r) == nil && r.OK
}

// extractFacts reduces a tool message ({"ok","summary","data"} JSON) to one
// line of at most maxFactBytes: the summary, then the data's scalar fields
// and list sizes, with the names or ids of a list's first items.
func extractFacts(content string) string {
	var r struct {
		Summary string `json:"summary"`
		Data    any    `json:"data"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(content), &r) != nil {
		return ""
	}
	var parts []string
	if s := plainLine(r.Summary, 120); s != "" {
		parts = append(parts, s)
	}
	if r.Error != nil {
		parts = append(parts, "error: "+plainLine(r.Error.Message, 120))
	}
	parts = append(parts, describe("", r.Data, 0)...)
	return truncate(strings.Join(parts, "; "), maxFactBytes)
}

// describe lists the facts of a JSON value, two levels deep.
func describe(name string, v any, depth int) []string {
	label := func(s string) string {
		if name == "" {
			return s
		}
		return name + "=" + s
	}
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []string{label(plainLine(v, 60))}
	case bool, float64:
		return []string{label(fmt.Sprint(v))}
	case []any:
		s := fmt.Sprintf("%d items", len(v))
		var ids []string
		for _, it := range v[:min(len(v), 5)] {
			if id := identify(it); id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			s += " (" + strings.Join(ids, ", ") + ")"
		}
		if name != "" {
			s = name + ": " + s
		}
		return []string{s}
	case map[string]any:
		if depth >= 2 {
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			full := k
			if name != "" {
				full = name + "." + k
			}
			out = append(out, describe(full, v[k], depth+1)...)
		}
		return out
	}
	return nil
}

// identify names a list item by its id, name or title.
func identify(v any) string {
	switch v := v.(type) {
	case string:
		return plainLine(v, 40)
	case float64:
		return fmt.Sprint(v)
	case map[string]any:
		for _, k := range []string{"name", "title", "id"} {
			if s, ok := v[k]; ok {
				return plainLine(fmt.Sprint(s), 40)
			}
		}
	}
	return ""
}
