package blocks

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzNDJSON(f *testing.F) {
	for _, b := range sampleBlocks() {
		f.Add(AppendNDJSON(nil, &b))
	}
	for _, s := range []string{``, `{}`, `null`, `{"k":"x","d":{"a" : [1 ,2]}}`, `{"k":"x","d":"\xff"}`,
		`{"k":"x","m":null}`, `{"k":"x","ok":true,"ok":false}`, `{"k":"x","d":null}`, "{\"k\":\"\\ud800\"}",
		`{"k":"tool_call","t":"client"}`, `{"k":"tool_call","t":"x","cs":false}`, `{"k":"confirm","t":"mutate"}`,
		`{"k":"confirm","t":"mutate","ef":"destructive"}`, `{"k":"warning","t":"client","cs":true,"ef":"x","ci":"c"}`, `{"k":"confirm","ci":7}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		b, err := ParseNDJSON(line)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		out := AppendNDJSON(nil, &b)
		checkLine(t, out)
		b2, err := ParseNDJSON(out)
		if err != nil {
			t.Fatalf("re-encoded block does not decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(b, b2) {
			t.Fatalf("round trip changed the block\n got %+v\nwant %+v", b2, b)
		}
		if out2 := AppendNDJSON(nil, &b2); !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s%s", out, out2)
		}
	})
}

// checkLine asserts line is one valid UTF-8 JSON object ending in '\n'.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.IndexByte(line, '\n') != len(line)-1 {
		t.Fatalf("not exactly one line: %q", line)
	}
	if !json.Valid(line) || !utf8.Valid(line) {
		t.Fatalf("invalid JSON or UTF-8: %q", line)
	}
}

func FuzzStoredRoundTrip(f *testing.F) {
	f.Add("markdown", "hello", "", "", "", "", false, []byte(nil), false, "", int64(0), false, "", "")
	f.Add("tool_result", "3 rows", "", "", "call_1", "query", true, []byte(`{"rows": [1, 2]}`), false, "", int64(0), false, "", "")
	f.Add("meta", "", "", "", "", "", false, []byte(nil), true, "thread\u2028", int64(-7), false, "", "")
	f.Add("component", "\xff\x00", "vm_order", "e", "", "", false, []byte("not json"), false, "", int64(0), true, "mutate", "c\xff")
	f.Add("", "no kind", "", "", "", "", false, []byte(nil), false, "", int64(0), false, "", "")
	f.Add("tool_call", "", "client", "", "c1", "browser_time", false, []byte(`{}`), false, "", int64(0), false, "", "")
	f.Add("tool_call", "", "other", "", "c1", "browser_time", false, []byte(nil), false, "", int64(0), true, "", "")
	f.Add("confirm", "Delete?", "destructive", "", "tok", "delete_vm", false, []byte(nil), false, "", int64(0), false, "", "")
	f.Add("confirm", "Delete?", "mutate", "", "tok", "delete_vm", false, []byte(nil), false, "", int64(0), false, "destructive", "c1")
	f.Fuzz(func(t *testing.T, kind, content, tag, code, id, name string, ok bool, data []byte, hasMeta bool, title string, tokens int64,
		clientSide bool, effect, callID string) {
		in := Block{Kind: Kind(kind), Content: content, Tag: tag, ErrorCode: code, ID: id, Name: name, OK: ok, Data: data,
			ClientSide: clientSide, Effect: effect, CallID: callID}
		if hasMeta {
			in.Meta = &MetaInfo{ThreadID: id, Title: title, InputTokens: tokens, Finish: name}
		}
		// Both forms must produce valid JSON whatever the input.
		stored, err := in.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		checkLine(t, append(stored, '\n'))
		checkLine(t, AppendNDJSON(nil, &in))

		var got Block
		err = json.Unmarshal(stored, &got)
		if kind == "" {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("empty kind: err = %v, want ErrInvalid", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Unmarshal(%s): %v", stored, err)
		}
		wire, err := ParseNDJSON(AppendNDJSON(nil, &in))
		if err != nil {
			t.Fatalf("ParseNDJSON: %v", err)
		}
		if !reflect.DeepEqual(got, wire) {
			t.Fatalf("stored and wire forms decode differently\nstored %+v\nwire   %+v", got, wire)
		}

		// What decoding gives back is the input with strings made valid and
		// data canonical (or quoted, when it was not JSON), and, on tool_call
		// and confirm blocks, the tag read as the client marker or the effect.
		want := in
		for _, s := range []*string{(*string)(&want.Kind), &want.Content, &want.Tag, &want.ErrorCode, &want.ID, &want.Name, &want.CallID, &want.Effect} {
			*s = validUTF8(*s)
		}
		switch want.Kind {
		case ToolCall:
			want.ClientSide = want.ClientSide || want.Tag == "client"
			want.Tag = ""
		case Confirm:
			if want.Effect == "" {
				want.Effect = want.Tag
			}
			want.Tag = ""
		}
		if in.Meta != nil {
			m := *in.Meta
			m.ThreadID, m.Title, m.Finish = want.ID, validUTF8(title), want.Name
			want.Meta = &m
		}
		want.Data = nil
		if len(data) > 0 {
			d, valid := appendData(nil, data)
			if !valid {
				d = appendString(nil, data)
			}
			want.Data = d
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
		// A decoded block is a fixed point.
		again, _ := got.MarshalJSON()
		var got3 Block
		if err := got3.UnmarshalJSON(again); err != nil || !reflect.DeepEqual(got3, got) {
			t.Fatalf("decoded block does not round-trip: %s: %+v (%v)", again, got3, err)
		}

		// Through json.Marshal, which HTML-escapes Marshaler output, strings
		// inside Data may come back escaped differently but equal in value.
		viaJSON, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		var got2 Block
		if err := json.Unmarshal(viaJSON, &got2); err != nil {
			t.Fatalf("Unmarshal(%s): %v", viaJSON, err)
		}
		if !jsonEqual(t, got2.Data, got.Data) {
			t.Fatalf("json.Marshal changed Data: %s vs %s", got2.Data, got.Data)
		}
		got2.Data = got.Data
		if !reflect.DeepEqual(got2, got) {
			t.Fatalf("json.Marshal round trip\n got %+v\nwant %+v", got2, got)
		}
	})
}

// jsonEqual reports whether a and b hold the same JSON value (or are both empty).
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	decode := func(d []byte) any {
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decoding %s: %v", d, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func FuzzParser(f *testing.F) {
	seeds := []string{
		"plain prose",
		"Intro\n```go\nfunc main() {}\n```\nafter",
		"```mermaid\ngraph LR\nA-->B\n```",
		"````\n```\n````\n",
		"a\n``\n`\n```x`y\n```\nunclosed é😀",
		"\xff\xfe```\n\xe2\x82",
		strings.Repeat("é", 40) + "\n```" + strings.Repeat("z", 300) + "\n",
		"```\r\nx\r\n```\r\n",
	}
	for i, s := range seeds {
		f.Add(s, []byte{byte(i + 1), 3, 7})
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		// Split text into deltas whose lengths come from cuts.
		var deltas []string
		rest := text
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(n, int(cuts[i%len(cuts)])%16+1)
			}
			deltas = append(deltas, rest[:n])
			rest = rest[n:]
		}
		split := parse(deltas...)
		whole := parse(text)

		if utf8.ValidString(text) {
			for _, b := range split {
				if !utf8.ValidString(b.Content) {
					t.Fatalf("block %+v is not valid UTF-8", b)
				}
			}
		}
		for _, b := range split {
			if b.Kind == Markdown && b.Content == "" {
				t.Fatalf("empty Markdown block")
			}
		}
		if a, b := mergeMarkdown(split), mergeMarkdown(whole); !reflect.DeepEqual(a, b) {
			t.Fatalf("output depends on the split %q\n got %+v\nwant %+v", deltas, a, b)
		}
		if a, b := absorbAll(split), absorbAll(parse(splitEvery(text, 1)...)); !reflect.DeepEqual(a, b) {
			t.Fatalf("absorbed output depends on the split\n got %+v\nwant %+v", a, b)
		}
		checkAccounting(t, text, split)
	})
}

// checkAccounting asserts that the blocks account for the whole text: prose
// chunks and fence bodies appear in order, separated only by fence lines.
func checkAccounting(t *testing.T, text string, bs []Block) {
	t.Helper()
	pos := 0
	skipLine := func() { // skip a fence line and its newline
		if !strings.HasPrefix(text[pos:], "```") {
			t.Fatalf("no fence line at %d in %q (blocks %+v)", pos, text, bs)
		}
		if i := strings.IndexByte(text[pos:], '\n'); i >= 0 {
			pos += i + 1
		} else {
			pos = len(text)
		}
	}
	for i := 0; i < len(bs); i++ {
		b := bs[i]
		switch b.Kind {
		case Markdown:
			if !strings.HasPrefix(text[pos:], b.Content) {
				t.Fatalf("prose %q not found at %d in %q", b.Content, pos, text)
			}
			pos += len(b.Content)
		case Load:
			if i+1 >= len(bs) || string(bs[i+1].Kind) != b.Tag {
				t.Fatalf("Load %q not followed by its block: %+v", b.Tag, bs)
			}
			skipLine()
			body := bs[i+1]
			if !strings.HasPrefix(text[pos:], body.Content) {
				t.Fatalf("fence body %q not found at %d in %q", body.Content, pos, text)
			}
			pos += len(body.Content)
			if pos < len(text) {
				skipLine()
			}
			i++
		default:
			t.Fatalf("unexpected block %+v", b)
		}
	}
	if pos != len(text) {
		t.Fatalf("blocks account for %d of %d bytes of %q", pos, len(text), text)
	}
}
