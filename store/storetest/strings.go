package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

var stringCases = []testCase{
	{"HostileStringsRoundTrip", testHostileStrings},
	{"ModelTextRoundTripsExactly", testModelText},
	{"ModelJSONRoundTrips", testModelJSON},
	{"InvalidUTF8IsKeptOrReplacedNeverAnError", testInvalidUTF8},
}

// hostileStrings are values a SQL store must bind, never splice, and a
// store must keep byte for byte, in keys and names too (owner ids, tokens),
// so none holds NUL: modelStrings cover that, in free text.
func hostileStrings() []string {
	return []string{
		`'; DROP TABLE threads; --`,
		`" OR "1"="1`,
		`\' \" \\ \n`,
		"%_% [a-z]* ? $1 :name @p1 ${x}",
		"tab\there\nnew line\r\nCRLF",
		"ünïcødé — 日本語 — עברית — 🎉 👩‍👩‍👧 e\u0301",
		"\u202eRTL override\u200b zero width\ufeff BOM",
		`{"json":"looking"}`,
		" leading and trailing spaces ",
		strings.Repeat(`é'"%x `, 10<<10/7+1), // > 10 KB
	}
}

func testHostileStrings(t *testing.T, s store.Store) {
	for i, str := range hostileStrings() {
		owner := "owner " + str
		if len(owner) > 256 {
			owner = "owner of the long title" // owner ids are keys; 10 KB ones are not realistic
		}
		th := store.Thread{OwnerID: owner, Title: str, CreatedAt: at(i), UpdatedAt: at(i)}
		must(t, s.CreateThread(t.Context(), &th), "CreateThread with "+short(str))
		if d := diffThread(getThread(t, s, th.ID), th); d != "" {
			t.Errorf("GetThread with %s: %s", short(str), d)
		}
		ts, err := s.ListThreads(t.Context(), owner, store.ListOptions{})
		must(t, err, "ListThreads")
		if len(ts) != 1 || ts[0].ID != th.ID {
			t.Errorf("ListThreads(%s) = %q, want [%s]", short(owner), idsOf(ts), th.ID)
		}

		renamed := str + " (renamed)"
		must(t, s.RenameThread(t.Context(), th.ID, renamed), "RenameThread")
		if got := getThread(t, s, th.ID).Title; got != renamed {
			t.Errorf("Title after rename = %s, want %s", short(got), short(renamed))
		}

		data, err := json.Marshal(map[string]string{"s": str})
		must(t, err, "json.Marshal")
		u, a := newTurn(th.ID, str)
		u.Blocks = []blocks.Block{{Kind: blocks.Markdown, Content: str, Tag: str, ID: str, Name: str,
			ErrorCode: str, Data: data, Meta: &blocks.MetaInfo{Title: str, Finish: str}}}
		must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn")
		a.Status, a.Blocks, a.ModelMessages, a.UpdatedAt = store.StatusComplete, u.Blocks, data, at(i+1)
		must(t, s.UpdateMessage(t.Context(), a), "UpdateMessage")
		for _, want := range []*store.Message{u, a} {
			if d := diffMessage(getMessage(t, s, want.ID), *want); d != "" {
				t.Errorf("GetMessage with %s: %s", short(str), d)
			}
		}
	}
}

// modelStrings are valid UTF-8 strings a model can produce, which a store
// must keep exactly: NUL (the byte PostgreSQL text refuses) alone, inside
// and at the ends; every other C0 control, among them sequences that look
// like a store's own escapes; U+FFFD; the line and paragraph separators;
// noncharacters; astral characters and emoji sequences; a very long line.
func modelStrings() []string {
	var c0 strings.Builder
	for c := range 0x20 {
		c0.WriteByte(byte(c))
	}
	c0.WriteString("\x7f")
	return []string{
		"nul \x00 inside",
		"\x00",
		"\x00\x00leading and trailing\x00",
		c0.String(),
		"\x01 \x010 \x011 \x01x41 \x01xff \\x00 \\u0000 %00 &#0;",
		"replacement \ufffd character",
		"line\u2028separator\u2029paragraph \u0085 next line",
		"\ufeff BOM \u200b\u200c\u200d zero widths \u202e override",
		"nonchar \ufdd0 \ufffe \uffff \U0010ffff",
		"astral 𝄞 😀 👩‍👩‍👧 🇺🇸 𠜎 \U0001F600",
		strings.Repeat("a very long line \x00 é 😀 \u2028 \ufffd ", 1<<12), // 140 KB, no newline
	}
}

// modelJSON are JSON values (objects, so that they can be a tool call's
// arguments) as a model's tool calls and a provider's messages carry them:
// the escape \u0000 (which PostgreSQL jsonb refuses) in values and keys,
// lone and reversed surrogate escapes, other escaped and raw controls and
// separators, and a very long line.
func modelJSON() []string {
	return []string{
		`{"nul":"a\u0000b","only":"\u0000","key\u0000":"v","\u0000":0}`,
		`{"high":"\ud800","low":"\udc00","reversed":"\udc00\ud800","then":"\ud800x","pair":"\ud83d\ude00"}`,
		"{\"c0\":\"\\u0001\\u0002\\u001f\\u007f\",\"seps\":\"\\u2028\\u2029\",\"raw\":\"\u2028\u2029\ufffd\ufeff\",\"fffd\":\"\\ufffd\"}",
		"{ \"spaced\" :\t\"\\u0000\" ,\n \"escaped slash\": \"\\/\", \"upper\": \"\\u00E9\\uD83D\\uDE00\", \"n\": 1.50 }",
		`{"long":"` + strings.Repeat(`x\u0000é😀\ud800 `, 1<<13) + `"}`,
	}
}

// invalidUTF8 are strings that are not valid UTF-8: stray and truncated
// bytes, an encoded surrogate, an overlong form, a code point past U+10FFFF.
func invalidUTF8() []string {
	return []string{
		"bad \xff byte",
		"\xfe\xff",
		"truncated \xc3",
		"truncated \xe2\x82",
		"encoded surrogate \xed\xa0\x80",
		"overlong \xc0\xaf",
		"too high \xf4\x90\x80\x80",
		"continuation \x80 alone",
		"mixed \x00 \xff \x01 é \x01xff",
	}
}

// A model's text reaches a title, a thread's summary, a user's message, an
// assistant's blocks and model messages (at AppendTurn, at the streaming
// checkpoint, at the end), a proposal's call id, summary and arguments, and
// audit data. Each
// must come back exactly, through every read.
func testModelText(t *testing.T, s store.Store) {
	for i, str := range modelStrings() {
		q, err := json.Marshal(str)
		must(t, err, "json.Marshal")
		roundTrip(t, s, i, str, json.RawMessage(`{"q":`+string(q)+`}`), false)
	}
}

// JSON values a model produces come back as the same JSON values, and a
// proposal's arguments byte for byte.
func testModelJSON(t *testing.T, s store.Store) {
	for i, raw := range modelJSON() {
		roundTrip(t, s, i, fmt.Sprint("text with JSON value ", i), json.RawMessage(raw), false)
	}
}

// A string that is not valid UTF-8 is never an error: it comes back as it
// was written, or with each byte that is not part of valid UTF-8 replaced
// by U+FFFD. A proposal's arguments still come back byte for byte.
func testInvalidUTF8(t *testing.T, s store.Store) {
	for i, str := range invalidUTF8() {
		roundTrip(t, s, i, str, json.RawMessage(`{"q":`+quoteBytes(str)+`}`), true)
	}
}

// quoteBytes is s as a JSON string, its bytes that are not UTF-8 kept raw
// (which json.Marshal would replace): valid JSON text, but not UTF-8.
func quoteBytes(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// roundTrip writes text into every free-text field, and raw (a JSON object)
// into every JSON field, through every method that writes them, and checks
// every read that returns them. With lenient, a string read back may have
// its invalid UTF-8 replaced (see replaced).
func roundTrip(t *testing.T, s store.Store, i int, text string, raw json.RawMessage, lenient bool) {
	t.Helper()
	ctx := t.Context()
	name := short(text)
	owner := fmt.Sprint("owner-", i)
	allow := func(got string, want *string) {
		if lenient && got != *want && got == replaced(*want) {
			*want = got
		}
	}

	th := store.Thread{OwnerID: owner, Title: text, CreatedAt: at(i), UpdatedAt: at(i)}
	must(t, s.CreateThread(ctx, &th), "CreateThread with "+name)
	checkThread := func(op string, got store.Thread) {
		t.Helper()
		want := th
		allow(got.Title, &want.Title)
		allow(got.Summary, &want.Summary)
		if d := diffThread(got, want); d != "" {
			t.Errorf("%s with %s: %s", op, name, d)
		}
	}
	checkThread("GetThread", getThread(t, s, th.ID))
	ts, err := s.ListThreads(ctx, owner, store.ListOptions{})
	must(t, err, "ListThreads")
	if len(ts) != 1 {
		t.Fatalf("ListThreads with %s = %d threads, want 1", name, len(ts))
	}
	checkThread("ListThreads", ts[0])
	th.Title = "renamed " + text
	must(t, s.RenameThread(ctx, th.ID, th.Title), "RenameThread with "+name)
	got := getThread(t, s, th.ID)
	th.UpdatedAt = got.UpdatedAt // a rename may move it
	checkThread("GetThread after RenameThread", got)

	checkMessages := func(op string, want ...*store.Message) {
		t.Helper()
		listed := listMessages(t, s, th.ID)
		for _, w := range want {
			reads := []store.Message{getMessage(t, s, w.ID)}
			if i := slices.IndexFunc(listed, func(m store.Message) bool { return m.ID == w.ID }); i >= 0 {
				reads = append(reads, listed[i])
			} else {
				t.Errorf("%s with %s: ListMessages lacks the %s message", op, name, w.Role)
			}
			for _, g := range reads {
				w := cloneMessage(*w)
				allow(g.Content, &w.Content)
				for j := range min(len(g.Blocks), len(w.Blocks)) {
					gb, wb := &g.Blocks[j], &w.Blocks[j]
					for _, f := range [][2]*string{{&gb.Content, &wb.Content}, {&gb.Tag, &wb.Tag},
						{&gb.ID, &wb.ID}, {&gb.Name, &wb.Name}, {&gb.ErrorCode, &wb.ErrorCode}} {
						allow(*f[0], f[1])
					}
					if gb.Meta != nil && wb.Meta != nil {
						allow(gb.Meta.Title, &wb.Meta.Title)
					}
				}
				if d := diffMessage(g, w); d != "" {
					t.Errorf("%s with %s: %s %s", op, name, w.Role, d)
				}
			}
		}
	}
	u, a := newTurn(th.ID, text)
	u.Blocks = []blocks.Block{{Kind: blocks.Markdown, Content: text}}
	a.Blocks, a.ModelMessages = textBlocks(text, raw)[:1], raw
	must(t, s.AppendTurn(ctx, u, a), "AppendTurn with "+name)
	checkMessages("AppendTurn", u, a)
	th.UpdatedAt = getThread(t, s, th.ID).UpdatedAt // AppendTurn moved it
	th.Summary, th.SummaryThrough = text, 2
	must(t, s.SetSummary(ctx, th.ID, text, 2, 0), "SetSummary with "+name)
	checkThread("GetThread after SetSummary", getThread(t, s, th.ID))
	if ts, err := s.ListThreads(ctx, owner, store.ListOptions{}); err != nil || len(ts) != 1 {
		t.Errorf("ListThreads after SetSummary with %s = %d threads, %v; want 1", name, len(ts), err)
	} else {
		checkThread("ListThreads after SetSummary", ts[0])
	}
	// The checkpoint of a streaming reply, then its end.
	a.Blocks, a.ModelMessages, a.UpdatedAt = textBlocks(text, raw), textModelMessages(text, raw), at(i+1)
	must(t, s.UpdateMessage(ctx, a), "UpdateMessage (checkpoint) with "+name)
	checkMessages("UpdateMessage (checkpoint)", a)
	a.Status, a.InputTokens, a.OutputTokens, a.UpdatedAt = store.StatusComplete, 10, 20, at(i+2)
	a.Blocks = append(a.Blocks, blocks.Block{Kind: blocks.Markdown, Content: "\n" + text})
	must(t, s.UpdateMessage(ctx, a), "UpdateMessage with "+name)
	checkMessages("UpdateMessage", u, a)

	p := store.Proposal{Token: "tok-" + uuid.NewString(), UserID: owner, ThreadID: th.ID, MessageID: a.ID,
		CallID: text, Tool: "lookup", Args: raw, ArgsHash: hashArgs(raw), Summary: text,
		CreatedAt: at(i), ExpiresAt: at(i + 30)}
	must(t, s.CreateProposal(ctx, &p), "CreateProposal with "+name)
	checkProposal := func(op string, got, want store.Proposal) {
		t.Helper()
		allow(got.CallID, &want.CallID)
		allow(got.Summary, &want.Summary)
		if d := diffProposal(got, want); d != "" {
			t.Errorf("%s with %s: %s", op, name, d)
		}
	}
	checkProposal("GetProposal", getProposal(t, s, p.Token), p)
	if ps := listProposals(t, s, th.ID); len(ps) != 1 {
		t.Errorf("ListProposals with %s = %d proposals, want 1", name, len(ps))
	} else {
		checkProposal("ListProposals", ps[0], p)
	}
	dp, err := s.DecideProposal(ctx, p.Token, store.ProposalApplied, at(i+1))
	must(t, err, "DecideProposal with "+name)
	checkProposal("DecideProposal", dp, decided(p, store.ProposalApplied, at(i+1)))

	e := store.AuditEvent{ID: uuid.NewString(), Kind: "tool.call", ActorID: owner, ThreadID: th.ID, Data: raw, CreatedAt: at(i)}
	must(t, s.AppendAudit(ctx, &e), "AppendAudit with "+name)
	es, err := s.ListAudit(ctx, store.AuditFilter{ActorID: owner})
	must(t, err, "ListAudit")
	if len(es) != 1 || es[0].ID != e.ID || !jsonEqual(es[0].Data, e.Data) {
		t.Errorf("ListAudit with %s = %+v, want the event with Data %s", name, es, short(string(raw)))
	}
}

// textBlocks are the blocks of a tool-using reply that carry text and raw:
// prose, a tool call and its result, a confirm card, a meta block.
func textBlocks(text string, raw json.RawMessage) []blocks.Block {
	return []blocks.Block{
		{Kind: blocks.Markdown, Content: text},
		{Kind: blocks.ToolCall, ID: "call_1", Name: "lookup", Data: raw},
		{Kind: blocks.ToolResult, ID: "call_1", Name: "lookup", OK: true, Content: text, Data: raw},
		{Kind: blocks.Confirm, ID: "tok_1", Name: "lookup", Content: text},
		{Kind: blocks.Meta, Meta: &blocks.MetaInfo{Title: text, Finish: "stop"}},
	}
}

// textModelMessages are provider messages of a tool-using turn that carry
// text and raw: the arguments as a JSON string, as OpenAI sends them, the
// tool's result as a value, and the final text.
func textModelMessages(text string, raw json.RawMessage) json.RawMessage {
	args, _ := json.Marshal(string(raw))
	content, _ := json.Marshal(text)
	return json.RawMessage(`[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",` +
		`"function":{"name":"lookup","arguments":` + string(args) + `}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":` + string(raw) + `},` +
		`{"role":"assistant","content":` + string(content) + `}]`)
}

// replaced is s with each byte that is not part of valid UTF-8 replaced by
// U+FFFD, as encoding/json and a range loop over s replace them.
func replaced(s string) string { return string([]rune(s)) }
