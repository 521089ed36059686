package tools_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/tools"
)

func TestIDsAtReadsNamesPointersAndArrays(t *testing.T) {
	for _, tc := range []struct {
		args, arg string
		want      []string
	}{
		{`{"note_id":"n-42"}`, "note_id", []string{"n-42"}},
		{`{"note_id":"n-42"}`, "/note_id", []string{"n-42"}},
		{`{"vm":12345678901234567890}`, "vm", []string{"12345678901234567890"}}, // as written, not as a float
		{`{"ids":["a",7,{"x":1},null,["b"]]}`, "ids", []string{"a", "7"}},       // only the array's own ids
		{`{"target":{"id":"t-1"}}`, "/target/id", []string{"t-1"}},
		{`{"rows":[{"id":"r-0"},{"id":"r-1"}]}`, "/rows/1/id", []string{"r-1"}},
		{`{"a/b":"slash","m~n":"tilde"}`, "/a~1b", []string{"slash"}},
		{`{"a/b":"slash","m~n":"tilde"}`, "/m~0n", []string{"tilde"}},
		{`{"a/b":"slash"}`, "a/b", []string{"slash"}},                            // a name is taken as written
		{`{"Note_ID":"n-1","note_id":"n-2"}`, "note_id", []string{"n-1", "n-2"}}, // as encoding/json may match it
		{`{}`, "note_id", nil},                                     // left out: nothing named
		{`{"note_id":true}`, "note_id", nil},                       // not an id
		{`{"rows":[{"id":"r-0"}]}`, "/rows/01/id", nil},            // not an index
		{`{"rows":[{"id":"r-0"}]}`, "/rows/1/id", nil},             // past the end
		{`{"note_id":""}`, "note_id", []string{""}},                // empty, as written: the caller decides
		{`{"n":{"id":"deep"}}`, "/n/id/more", nil},                 // past a leaf
		{`{"":"empty key"}`, "/", []string{"empty key"}},           // RFC 6901: "/" is the key ""
		{`{"id":"x","id":"y"}`, "id", []string{"y"}},               // the last of duplicates, as a struct decodes it
		{` {"id":"spaced"} `, "id", []string{"spaced"}},            // surrounding space is fine
		{`{"list":[1.5e3,"-0"]}`, "list", []string{"1.5e3", "-0"}}, // numbers as written
	} {
		got, err := tools.IDsAt(json.RawMessage(tc.args), tc.arg)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("IDsAt(%s, %q) = %q, %v; want %q", tc.args, tc.arg, got, err, tc.want)
		}
	}
}

func TestIDsAtRefusesWhatIsNotAnObjectOrAPointer(t *testing.T) {
	for _, args := range []string{``, `null`, `[]`, `"id"`, `{"id":1} {}`, `{}}`, `{"id":`} {
		if _, err := tools.IDsAt(json.RawMessage(args), "id"); !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("IDsAt(%q): err %v, want ErrInvalidArgs", args, err)
		}
	}
	for _, arg := range []string{"", "/a~", "/a~2", "/~x/b"} {
		if _, err := tools.IDsAt(json.RawMessage(`{}`), arg); !errors.Is(err, tools.ErrInvalidSpec) {
			t.Errorf("IDsAt(%q): err %v, want ErrInvalidSpec", arg, err)
		}
	}
}

// A typo in IDArgs would leave the argument unchecked: a schema that
// allows only the properties it lists refuses it when the tool is built.
func TestSpecIDArgsMustBeInTheSchema(t *testing.T) {
	type noteArgs struct {
		NoteID string `json:"note_id"`
		Target struct {
			ID string `json:"id"`
		} `json:"target"`
	}
	spec := func(args ...string) tools.Spec {
		return tools.Spec{Name: "delete_note", Description: "Deletes a note.", Effect: tools.Destructive, IDArgs: args}
	}
	for _, ok := range [][]string{{"note_id"}, {"/note_id", "/target/id"}} {
		if _, err := tools.New(spec(ok...), noop[noteArgs]); err != nil {
			t.Errorf("IDArgs %q: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"noteid"}, {"/target/uid"}, {""}, {"/note_id~"}} {
		if _, err := tools.New(spec(bad...), noop[noteArgs]); !errors.Is(err, tools.ErrInvalidSpec) {
			t.Errorf("IDArgs %q: err %v, want ErrInvalidSpec", bad, err)
		}
	}
	// A schema that allows other properties, or says nothing of them, is not second-guessed.
	open := spec("anything")
	open.InputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
	if err := open.Validate(); err != nil {
		t.Errorf("open schema: %v", err)
	}
	// NewSet checks a hand-written tool's spec the same way.
	closed := spec("noteid")
	closed.InputSchema = json.RawMessage(`{"type":"object","properties":{"note_id":{"type":"string"}},"additionalProperties":false}`)
	if _, err := tools.NewSet(plainSpec(closed)); !errors.Is(err, tools.ErrInvalidSpec) {
		t.Errorf("NewSet: err %v, want ErrInvalidSpec", err)
	}
}

// plainSpec is a hand-written tool with spec s.
func plainSpec(s tools.Spec) tools.BaseTool { return funcTool{spec: s} }

// FuzzIDsAt: no panic; an error only for what is not a JSON object or not
// a pointer; every id found occurs in the arguments as written (a string,
// JSON-escaped, or a number).
func FuzzIDsAt(f *testing.F) {
	f.Add(`{"note_id":"n-42"}`, "note_id")
	f.Add(`{"target":{"ids":["a",1]}}`, "/target/ids")
	f.Add(`{"a~/b":[{"id":"x"}]}`, "/a~0~1b/0/id")
	f.Add(`{"ID":"\u00e9","id":"e"}`, "id")
	f.Fuzz(func(t *testing.T, args, arg string) {
		ids, err := tools.IDsAt(json.RawMessage(args), arg)
		if err != nil {
			if !errors.Is(err, tools.ErrInvalidArgs) && !errors.Is(err, tools.ErrInvalidSpec) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if !json.Valid([]byte(args)) {
			t.Fatalf("ids %q from invalid JSON %q", ids, args)
		}
		var all []string
		collect(t, json.RawMessage(args), &all)
		for _, id := range ids {
			if !slices.Contains(all, id) {
				t.Fatalf("id %q is no value of %s", id, args)
			}
		}
	})
}

// collect gathers every string and number of a JSON value, as IDsAt
// reports them.
func collect(t *testing.T, raw json.RawMessage, out *[]string) {
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return
		}
		switch v := tok.(type) {
		case string:
			*out = append(*out, v)
		case json.Number:
			*out = append(*out, v.String())
		}
	}
}
