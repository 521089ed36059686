package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

// base is the suite's reference instant: microsecond precision (what
// PostgreSQL timestamptz holds) in a zone that is not UTC, so a store must
// keep the instant, not the wall clock.
var base = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("UTC+05:30", 5*3600+1800))

// at returns base plus d minutes.
func at(d int) time.Time { return base.Add(time.Duration(d) * time.Minute) }

func ptr[T any](v T) *T { return &v }

// wantErr fails t unless errors.Is(err, target).
func wantErr(t *testing.T, err, target error, op string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", op, err, target)
	}
}

// must fails t at once on a setup error: the case cannot say anything more.
func must(t *testing.T, err error, op string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
}

// newThread creates a thread for owner with explicit, distinct times and
// returns it as filled in by the store.
func newThread(t *testing.T, s store.Store, owner string, updated time.Time) store.Thread {
	t.Helper()
	th := store.Thread{OwnerID: owner, Title: "thread of " + owner, CreatedAt: base, UpdatedAt: updated}
	must(t, s.CreateThread(t.Context(), &th), "CreateThread")
	return th
}

func getThread(t *testing.T, s store.Store, id string) store.Thread {
	t.Helper()
	th, err := s.GetThread(t.Context(), id)
	must(t, err, "GetThread")
	return th
}

func getMessage(t *testing.T, s store.Store, id string) store.Message {
	t.Helper()
	m, err := s.GetMessage(t.Context(), id)
	must(t, err, "GetMessage")
	return m
}

func listMessages(t *testing.T, s store.Store, threadID string) []store.Message {
	t.Helper()
	ms, err := s.ListMessages(t.Context(), threadID)
	must(t, err, "ListMessages")
	return ms
}

// newTurn returns a user message and its assistant placeholder for threadID,
// with every field a caller may set filled, except IDs and times.
func newTurn(threadID, text string) (user, assistant *store.Message) {
	user = &store.Message{
		ThreadID: threadID,
		Role:     store.RoleUser,
		Status:   store.StatusComplete,
		Content:  text,
	}
	assistant = &store.Message{
		ThreadID: threadID,
		Role:     store.RoleAssistant,
		Status:   store.StatusStreaming,
	}
	return user, assistant
}

// appendTurn appends a turn to threadID and returns the messages as filled in.
func appendTurn(t *testing.T, s store.Store, threadID, text string) (user, assistant store.Message) {
	t.Helper()
	u, a := newTurn(threadID, text)
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn")
	return *u, *a
}

// sampleBlocks returns fresh blocks that use every Block field, with raw JSON
// of every shape. Each call returns new backing arrays.
func sampleBlocks() []blocks.Block {
	return []blocks.Block{
		{Kind: blocks.Markdown, Content: "Hello *world* — ünïcødé 🎉\n\n"},
		{Kind: blocks.Code, Tag: "sql", Content: "SELECT 'a''b' FROM t WHERE x LIKE '%_';\n"},
		{Kind: blocks.ToolCall, ID: "call_0", Name: "browser_time", ClientSide: true},
		{Kind: blocks.ToolCall, ID: "call_1", Name: "list_vms",
			Data: json.RawMessage(`{"region":"eu-west","n":3,"ratio":2.5,"tags":["a","b"],"nested":{"ok":true,"v":null},"s":"q\"uo\\te"}`)},
		{Kind: blocks.ToolResult, ID: "call_1", Name: "list_vms", OK: true, Content: "3 VMs",
			Data: json.RawMessage(`[1,"two",{"three":3},[],{}]`)},
		{Kind: blocks.ToolResult, ID: "call_2", Name: "reboot", OK: false, Content: "denied"},
		{Kind: blocks.Confirm, ID: "tok_9", Name: "reboot", Content: "Reboot vm-1?", CallID: "call_2", Effect: "destructive"},
		{Kind: blocks.Component, Tag: "chart", Data: json.RawMessage(`"a bare string"`)},
		{Kind: blocks.Error, ErrorCode: "provider_unavailable", Content: "Try again later."},
		{Kind: blocks.Meta, Meta: &blocks.MetaInfo{
			ThreadID: "t-1", MessageID: "m-2", UserMessageID: "m-1", Title: "Títle",
			InputTokens: 1234, OutputTokens: 56, Finish: "stop",
		}},
	}
}

// sampleModelMessages returns fresh provider messages of a tool-using turn.
func sampleModelMessages() json.RawMessage {
	return json.RawMessage(`[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_vms","arguments":"{\"region\":\"eu-west\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"3 VMs"},{"role":"assistant","content":"You have 3 VMs."}]`)
}

// diffThread describes how got differs from want, or returns "".
func diffThread(got, want store.Thread) string {
	var d []string
	field := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("OwnerID", got.OwnerID, want.OwnerID)
	if got.Title != want.Title {
		d = append(d, fmt.Sprintf("Title = %s, want %s", short(got.Title), short(want.Title)))
	}
	if got.Summary != want.Summary {
		d = append(d, fmt.Sprintf("Summary = %s, want %s", short(got.Summary), short(want.Summary)))
	}
	if got.SummaryThrough != want.SummaryThrough {
		d = append(d, fmt.Sprintf("SummaryThrough = %d, want %d", got.SummaryThrough, want.SummaryThrough))
	}
	d = appendTimeDiff(d, "CreatedAt", got.CreatedAt, want.CreatedAt)
	d = appendTimeDiff(d, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	d = appendTimePtrDiff(d, "ArchivedAt", got.ArchivedAt, want.ArchivedAt)
	d = appendTimePtrDiff(d, "CancelRequestedAt", got.CancelRequestedAt, want.CancelRequestedAt)
	return strings.Join(d, "; ")
}

// diffMessage describes how got differs from want, or returns "". Raw JSON
// is compared as JSON values: a store may re-encode it (PostgreSQL jsonb
// does), but must not change what it means.
func diffMessage(got, want store.Message) string {
	var d []string
	field := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("ThreadID", got.ThreadID, want.ThreadID)
	field("Seq", got.Seq, want.Seq)
	field("Role", got.Role, want.Role)
	field("Status", got.Status, want.Status)
	if got.Content != want.Content {
		d = append(d, fmt.Sprintf("Content = %s, want %s", short(got.Content), short(want.Content)))
	}
	if bd := diffBlocks(got.Blocks, want.Blocks); bd != "" {
		d = append(d, "Blocks: "+bd)
	}
	if !jsonEqual(got.ModelMessages, want.ModelMessages) {
		d = append(d, fmt.Sprintf("ModelMessages = %s, want %s", got.ModelMessages, want.ModelMessages))
	}
	field("InputTokens", got.InputTokens, want.InputTokens)
	field("OutputTokens", got.OutputTokens, want.OutputTokens)
	field("Guard.Action", got.Guard.Action, want.Guard.Action)
	field("Guard.Severity", got.Guard.Severity, want.Guard.Severity)
	field("Guard.ExcludeFromHistory", got.Guard.ExcludeFromHistory, want.Guard.ExcludeFromHistory)
	field("Guard.FenceInHistory", got.Guard.FenceInHistory, want.Guard.FenceInHistory)
	if strings.Join(got.Guard.Categories, ",") != strings.Join(want.Guard.Categories, ",") {
		d = append(d, fmt.Sprintf("Guard.Categories = %q, want %q", got.Guard.Categories, want.Guard.Categories))
	}
	field("Source", got.Source, want.Source)
	field("Replaces", got.Replaces, want.Replaces)
	d = appendTimePtrDiff(d, "SupersededAt", got.SupersededAt, want.SupersededAt)
	d = appendTimeDiff(d, "CreatedAt", got.CreatedAt, want.CreatedAt)
	d = appendTimeDiff(d, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	return strings.Join(d, "; ")
}

// diffBlocks compares every Block field. A nil and an empty slice are the
// same (a SQL store cannot tell them apart).
func diffBlocks(got, want []blocks.Block) string {
	if len(got) != len(want) {
		return fmt.Sprintf("len = %d, want %d", len(got), len(want))
	}
	var d []string
	for i := range want {
		g, w := got[i], want[i]
		// The comparable fields, as one value.
		type scalars struct {
			Kind                                              blocks.Kind
			Content, Tag, ErrorCode, ID, Name, CallID, Effect string
			ClientSide, OK                                    bool
		}
		gs := scalars{g.Kind, g.Content, g.Tag, g.ErrorCode, g.ID, g.Name, g.CallID, g.Effect, g.ClientSide, g.OK}
		ws := scalars{w.Kind, w.Content, w.Tag, w.ErrorCode, w.ID, w.Name, w.CallID, w.Effect, w.ClientSide, w.OK}
		if gs != ws {
			d = append(d, fmt.Sprintf("[%d] = %+v, want %+v", i, gs, ws))
		}
		if !jsonEqual(g.Data, w.Data) {
			d = append(d, fmt.Sprintf("[%d].Data = %s, want %s", i, g.Data, w.Data))
		}
		if (g.Meta == nil) != (w.Meta == nil) || (g.Meta != nil && *g.Meta != *w.Meta) {
			d = append(d, fmt.Sprintf("[%d].Meta = %+v, want %+v", i, g.Meta, w.Meta))
		}
	}
	return strings.Join(d, "; ")
}

// jsonEqual reports whether a and b hold the same JSON value. Absent (empty)
// and null are the same.
func jsonEqual(a, b []byte) bool {
	if isNull(a) || isNull(b) {
		return isNull(a) && isNull(b)
	}
	va, erra := decodeJSON(a)
	vb, errb := decodeJSON(b)
	if erra != nil || errb != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func isNull(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func appendTimeDiff(d []string, name string, got, want time.Time) []string {
	if !got.Equal(want) {
		d = append(d, fmt.Sprintf("%s = %v, want %v", name, got, want))
	}
	return d
}

func appendTimePtrDiff(d []string, name string, got, want *time.Time) []string {
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		d = append(d, fmt.Sprintf("%s = %v, want %v", name, fmtTimePtr(got), fmtTimePtr(want)))
	default:
		d = appendTimeDiff(d, name, *got, *want)
	}
	return d
}

func fmtTimePtr(p *time.Time) string {
	if p == nil {
		return "nil"
	}
	return p.String()
}

// short keeps failure messages readable when a 10 KB title is involved.
func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// isUUID reports whether id is a UUID in its canonical text form.
func isUUID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == strings.ToLower(id)
}

// wantNow fails t unless got is a store-assigned "now": within a minute of
// the test's clock (the store's clock may be a database server's).
func wantNow(t *testing.T, name string, got time.Time) {
	t.Helper()
	if d := time.Since(got); got.IsZero() || d > time.Minute || d < -time.Minute {
		t.Errorf("%s = %v, want about now (%v)", name, got, time.Now())
	}
}

// cloneMessage is a deep copy, so the suite can remember a value while it
// mutates the original.
func cloneMessage(m store.Message) store.Message {
	if m.Blocks != nil {
		bs := make([]blocks.Block, len(m.Blocks))
		for i, b := range m.Blocks {
			b.Data = bytes.Clone(b.Data)
			if b.Meta != nil {
				b.Meta = ptr(*b.Meta)
			}
			bs[i] = b
		}
		m.Blocks = bs
	}
	m.ModelMessages = bytes.Clone(m.ModelMessages)
	m.Guard.Categories = slices.Clone(m.Guard.Categories)
	if m.SupersededAt != nil {
		m.SupersededAt = ptr(*m.SupersededAt)
	}
	return m
}
