package assistant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// The knowledge accumulator (B16) keeps what the thread's tool calls
// returned, by call: the result itself when it is small. The facts of a
// result are extracted deterministically (no model call, extractFacts) when
// compaction replaces an old tool result by them. The knowledge gate
// answers a Read call that repeats an earlier one exactly (same tool, same
// arguments) without running it again, while the earlier answer is fresh:
// younger than the tool's Spec.Reuse (zero by default: never reused) and
// Config.KnowledgeMaxAge, and with no Mutate or Destructive call since.
// The answer says how old it is; the model gets a fresh one by calling
// again in the same turn.
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

	served map[string]bool // calls the gate answered this turn; asked again, they run
}

// callKey identifies a tool call for the gate and the loop check.
func callKey(name string, args json.RawMessage) string {
	if isCanonical(args) {
		var b strings.Builder
		b.Grow(len(name) + 1 + len(args))
		b.WriteString(name)
		b.WriteByte(0)
		b.Write(args)
		return b.String()
	}
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

// start rebuilds what a turn knows from the replay of the thread's branch
// past: readOnly tells Read tools. A change a turn an edit replaced made
// still stands (changes), and makes what was known before it stale.
func (k *knowledge) start(past []stretch, readOnly func(name string) bool, changes []change) {
	k.rebuild(past, readOnly)
	if n := len(changes); n > 0 {
		k.forgetBefore(changes[n-1].at)
	}
}

// rebuild learns from the tool calls of the thread's current branch past,
// oldest first. A Mutate or Destructive call that ran, or a call to a tool
// that is not a Read tool of the registry (readOnly), makes everything
// before it stale.
func (k *knowledge) rebuild(past []stretch, readOnly func(name string) bool) {
	for _, s := range past {
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
				if !readOnly(c.Name) {
					k.forget()
					continue
				}
				k.learn(callKey(c.Name, c.Args), m.Content, s.at, false)
			}
		}
	}
}

// known answers a Read call of o by u from the knowledge gate: the result
// of an identical call made earlier in the thread, while it is fresh for
// the tool (Spec.Reuse, at most Config.KnowledgeMaxAge). A tool that
// declares no reuse always runs, and so does a call the gate already
// answered in this turn: the model asked again, for a fresh result.
func (k *knowledge) known(ctx context.Context, e *Engine, u parley.User, o offeredTool, c providers.ToolCall) (tools.Result, bool) {
	maxAge := min(o.spec.Reuse, e.cfg.KnowledgeMaxAge)
	key := callKey(c.Name, c.Args)
	if maxAge <= 0 || !isRead(o.spec) || o.spec.ClientSide || k.served[key] {
		return tools.Result{}, false
	}
	now := e.cfg.Now()
	f, ok := k.lookup(key, now.Add(-maxAge))
	if !ok || f.turn {
		// Within one turn a repeat is the loop detector's business.
		return tools.Result{}, false
	}
	if changed := lastChange(ctx, e, u.ID); !f.at.After(changed) {
		return tools.Result{}, false
	}
	var r struct {
		Summary string          `json:"summary"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal([]byte(f.result), &r) != nil {
		return tools.Result{}, false
	}
	if k.served == nil {
		k.served = make(map[string]bool)
	}
	k.served[key] = true
	when := f.at.In(userLocation(u)).Format("15:04")
	return tools.Result{OK: true, Data: r.Data, Summary: strings.TrimSpace(fmt.Sprintf(
		"Reused from the same call %s ago (%s); call it again for a fresh result. %s", age(now.Sub(f.at)), when, r.Summary))}, true
}

// age says how old a result is, for people and the model.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", max(int(d/time.Second), 1))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// changeScan bounds the audit rows lastChange reads.
const changeScan = 200

// lastChange is when the user userID last changed anything, through any
// thread or the host's own buttons: the newest audited call of a Mutate or
// Destructive tool that did not fail before running. It is read at each
// hit of the gate, so a change made while a turn runs counts from then.
// If the rows read hold no change, the oldest of them bounds it (a change
// may be older); if the audit cannot be read, now does: nothing is reused.
func lastChange(ctx context.Context, e *Engine, userID string) time.Time {
	rows, err := e.cfg.Store.ListAudit(ctx, store.AuditFilter{Kind: AuditToolCall, ActorID: userID, Limit: changeScan})
	if err != nil {
		e.cfg.Logger.WarnContext(ctx, "assistant: read the audit for the knowledge gate", "err", err)
		return e.cfg.Now()
	}
	for _, r := range rows {
		var d struct {
			Effect   tools.Effect `json:"effect"`
			Approval string       `json:"approval"`
		}
		if json.Unmarshal(r.Data, &d) == nil && (d.Effect == tools.Mutate || d.Effect == tools.Destructive) &&
			d.Approval != approvalPending && d.Approval != approvalDeclined {
			return r.CreatedAt
		}
	}
	if len(rows) == changeScan {
		return rows[len(rows)-1].CreatedAt
	}
	return time.Time{}
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

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing, so
// equal arguments compare equal however the model wrote them.
func canonicalJSON(raw json.RawMessage) string {
	// Numbers stay as written: as float64, two large ids would compare equal.
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// isCanonical reports whether raw is already written as canonicalJSON
// writes it, the common case of a model's arguments, which then need not
// be decoded: valid JSON with no space between tokens, each object's keys
// in increasing byte order (so no key twice), and strings holding nothing
// json.Marshal writes otherwise (no escape, no "<", ">" or "&", no invalid
// UTF-8, no U+2028 or U+2029). Objects and arrays nest at most
// canonicalDepth deep; deeper ones take the slow path.
func isCanonical(raw []byte) bool {
	return json.Valid(raw) && canonicalValue(raw, 0, canonicalDepth) == len(raw)
}

const canonicalDepth = 32

// canonicalValue checks the value at b[i:] of valid JSON b and returns the
// index after it, or -1 if it is not canonical.
func canonicalValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '{', '[':
		if depth == 0 {
			return -1
		}
		obj, end := b[i] == '{', byte(']')
		if obj {
			end = '}'
		}
		i++
		if i < len(b) && b[i] == end {
			return i + 1
		}
		var prev []byte
		for k := 0; ; k++ {
			if obj {
				j := canonicalString(b, i)
				if j < 0 || j >= len(b) || b[j] != ':' || k > 0 && bytes.Compare(prev, b[i+1:j-1]) >= 0 {
					return -1
				}
				prev, i = b[i+1:j-1], j+1
			}
			if i = canonicalValue(b, i, depth-1); i < 0 || i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i++
			case end:
				return i + 1
			default:
				return -1
			}
		}
	case '"':
		return canonicalString(b, i)
	}
	// A number or a literal, valid: it runs to the next delimiter.
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']':
			return i
		case ' ', '\t', '\n', '\r':
			return -1
		}
	}
	return i
}

// canonicalString checks the string at b[i:] and returns the index after
// it, or -1.
func canonicalString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\' || c == '<' || c == '>' || c == '&' || c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				return -1
			}
			i += n
		}
	}
	return -1
}
