package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

var stringCases = []testCase{
	{"HostileStringsRoundTrip", testHostileStrings},
}

// hostileStrings are values a SQL store must bind, never splice, and a
// store must keep byte for byte. None holds NUL: PostgreSQL text cannot.
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
