package assistant

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestExtractFacts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"ok":true,"summary":"2 notes","data":{"notes":[{"id":1,"title":"Buy milk"},{"id":2,"title":"Call Bob"}],"total":2}}`,
			"2 notes; notes: 2 items (Buy milk, Call Bob); total=2"},
		{`{"ok":true,"data":{"city":"Paris","sky":"sunny","temp":{"c":21}}}`, "city=Paris; sky=sunny; temp.c=21"},
		{`{"ok":false,"error":{"code":"NOT_FOUND","message":"no such note"}}`, "error: no such note"},
		{`{"ok":true,"data":["a","b"]}`, "2 items (a, b)"},
		{`not json`, ""},
	} {
		if got := extractFacts(tc.in); got != tc.want {
			t.Errorf("extractFacts(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzExtractFacts(f *testing.F) {
	f.Add(`{"ok":true,"summary":"x","data":{"a":[1,2,{"name":"n"}],"b":{"c":{"d":1}}}}`)
	f.Add(`{"ok":true,"data":"` + strings.Repeat("é", 300) + `"}`)
	f.Add(`{"ok":false,"error":{"message":"\u0000\ud800"}}`)
	f.Fuzz(func(t *testing.T, content string) {
		got := extractFacts(content)
		if len(got) > maxFactBytes {
			t.Fatalf("%d bytes, over %d", len(got), maxFactBytes)
		}
		if utf8.ValidString(content) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", got)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Fatalf("facts span lines: %q", got)
		}
		_ = compactResult(content)
	})
}

func TestKnowledgeIsBoundedAndKeepsTheCurrentTurn(t *testing.T) {
	var k knowledge
	at := time.Now()
	for i := range 10 {
		k.learn(fmt.Sprintf("pinned%d", i), `{"ok":true,"data":1}`, at, true)
	}
	for i := range 200 {
		k.learn(fmt.Sprintf("old%d", i), `{"ok":true,"data":"`+strings.Repeat("x", 1500)+`"}`, at, false)
	}
	if len(k.facts) > maxFacts || k.bytes > maxKnowledgeBytes {
		t.Fatalf("%d facts, %d bytes: over the bounds", len(k.facts), k.bytes)
	}
	for i := range 10 {
		if _, ok := k.lookup(fmt.Sprintf("pinned%d", i), at); !ok {
			t.Fatalf("pinned fact %d was evicted", i)
		}
	}
	if _, ok := k.lookup("old0", at); ok {
		t.Fatal("the least recently used fact was kept")
	}
	// Using a fact makes it recent: it survives the next evictions.
	if _, ok := k.lookup("old199", at); !ok {
		t.Fatal("the newest fact is missing")
	}
	for i := range 40 {
		k.learn(fmt.Sprintf("new%d", i), `{"ok":true,"data":"`+strings.Repeat("x", 1500)+`"}`, at, false)
	}
	if _, ok := k.lookup("old199", at); !ok {
		t.Fatal("a recently used fact was evicted before older ones")
	}
	n := 0
	for _, f := range k.facts {
		n += f.size()
	}
	if n != k.bytes {
		t.Fatalf("byte count %d, facts hold %d", k.bytes, n)
	}
}

func FuzzSanitizeTitle(f *testing.F) {
	f.Add("**Paris trip** planning!!\nmore")
	f.Add("\"Title: <script>alert(1)</script>\"")
	f.Add("\u202eevil\u200b title\x00")
	f.Fuzz(func(t *testing.T, s string) {
		got := sanitizeTitle(s)
		if len(got) > maxTitleBytes || len(strings.Fields(got)) > maxTitleWords {
			t.Fatalf("%q is too long", got)
		}
		if strings.ContainsAny(got, "\n\r<>*#`\"\x00") {
			t.Fatalf("markup or a line break left in %q", got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out: %q", got)
		}
	})
}

func TestCanonicalArgumentsAreKeptAsWritten(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"city":"Paris"}`:                  true,
		`{"a":1,"b":[true,null,{"c":"é"}]}`: true,
		`{}`:                                true,
		`[]`:                                true,
		`"x"`:                               true,
		`-1.50e3`:                           true,
		`{"b":1,"a":2}`:                     false, // keys out of order
		`{"a":1,"a":2}`:                     false, // a key twice
		`{"a": 1}`:                          false, // space
		` {"a":1}`:                          false,
		`{"a":1} `:                          false,
		`{"a":"\u00e9"}`:                    false, // an escape
		`{"a":"<b>"}`:                       false, // Marshal escapes HTML
		"{\"a\":\"\u2028\"}":                false,
		"{\"a\":\"\xff\"}":                  false,
		`{"a":1`:                            false,
		strings.Repeat("[", 40) + strings.Repeat("]", 40): false, // deeper than canonicalDepth
	} {
		if got := isCanonical([]byte(raw)); got != want {
			t.Errorf("isCanonical(%q) = %v, want %v", raw, got, want)
		}
		if got := callKey("t", json.RawMessage(raw)); got != "t\x00"+canonicalJSON(json.RawMessage(raw)) {
			t.Errorf("callKey(%q) = %q, want the canonical encoding", raw, got)
		}
	}
}

// What isCanonical passes, canonicalJSON would write unchanged.
func FuzzIsCanonical(f *testing.F) {
	for _, s := range []string{`{"city":"Paris"}`, `{"a":[1,{"b":null}],"c":"x"}`, `{"b":1,"a":2}`, `[1.0,-0,1e5]`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if isCanonical(raw) && canonicalJSON(raw) != string(raw) {
			t.Fatalf("isCanonical(%q), but canonicalJSON writes %q", raw, canonicalJSON(raw))
		}
	})
}
