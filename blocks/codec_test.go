package blocks

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// validUTF8 replaces each invalid byte of s with U+FFFD, as encoding/json
// does (strings.ToValidUTF8 replaces a run of them with one).
func validUTF8(s string) string {
	var sb strings.Builder
	for _, r := range s {
		sb.WriteRune(r)
	}
	return sb.String()
}

// sampleBlocks has one block of every kind, with every field in use.
func sampleBlocks() []Block {
	return []Block{
		{Kind: Markdown, Content: "Hello, *world*.\n"},
		{Kind: Code, Content: "fmt.Println(\"hi\")\n", Tag: "go"},
		{Kind: Mermaid, Content: "graph LR\nA-->B\n"},
		{Kind: Load, Tag: "code"},
		{Kind: ToolCall, ID: "call_1", Name: "list_vms", Data: json.RawMessage(`{"limit":10}`)},
		{Kind: ToolCall, ID: "call_4", Name: "browser_time", ClientSide: true},
		{Kind: ToolResult, ID: "call_1", Name: "list_vms", OK: true, Content: "3 VMs", Data: json.RawMessage(`[1,2,3]`)},
		{Kind: ToolResult, ID: "call_2", Name: "delete_vm"},
		{Kind: Confirm, ID: "tok_abc", Name: "delete_vm", Content: "Delete vm-1?", CallID: "call_2", Effect: "destructive"},
		{Kind: Form, ID: "call_3", Data: json.RawMessage(`{"questions":[{"q":"Which region?"}]}`)},
		{Kind: Component, Tag: "vm_order", Data: json.RawMessage(`{"cpu":2,"ram":"4G","ok":true,"x":null,"f":-1.5e3}`)},
		{Kind: Warning, Content: "Quota almost used"},
		{Kind: Error, ErrorCode: "quota_exceeded", Content: "You have used today's quota."},
		{Kind: Meta, Meta: &MetaInfo{ThreadID: "t1", MessageID: "m2", UserMessageID: "m1", Title: "VMs", InputTokens: 120, OutputTokens: 45, Finish: "stop"}},
		{Kind: Meta, Meta: &MetaInfo{}},
		{Kind: "future_kind", Content: "x"},
		{Kind: Markdown, Content: "quotes \" \\ and \u2028 \u2029 \x00 \x1f \t\r\n\b\f <>& é 😀"},
	}
}

func TestWireFormExact(t *testing.T) {
	tests := []struct {
		b    Block
		want string
	}{
		{Block{Kind: Markdown, Content: "hi"}, `{"k":"markdown","c":"hi"}`},
		{Block{Kind: Code, Content: "x", Tag: "go"}, `{"k":"code","c":"x","t":"go"}`},
		{Block{Kind: Error, ErrorCode: "internal", Content: "sorry"}, `{"k":"error","c":"sorry","e":"internal"}`},
		{Block{Kind: ToolResult, ID: "c1", Name: "f"}, `{"k":"tool_result","id":"c1","n":"f","ok":false}`},
		{Block{Kind: ToolCall, ID: "c1", Name: "f", Data: json.RawMessage(`{"a":1}`)}, `{"k":"tool_call","id":"c1","n":"f","d":{"a":1}}`},
		{Block{Kind: Meta, Meta: &MetaInfo{ThreadID: "t", InputTokens: 3, Finish: "stop"}}, `{"k":"meta","m":{"thread_id":"t","input_tokens":3,"finish":"stop"}}`},
		// The tag key keeps its old meaning on these two kinds, for readers from before cs and ef.
		{Block{Kind: ToolCall, ID: "c1", Name: "f", ClientSide: true}, `{"k":"tool_call","t":"client","id":"c1","n":"f","cs":true}`},
		{Block{Kind: Confirm, ID: "tok", Name: "f", Content: "Do?", CallID: "c1", Effect: "mutate"}, `{"k":"confirm","c":"Do?","t":"mutate","id":"tok","n":"f","ci":"c1","ef":"mutate"}`},
	}
	for _, tt := range tests {
		got := string(AppendNDJSON(nil, &tt.b))
		if got != tt.want+"\n" {
			t.Errorf("AppendNDJSON(%+v)\n got %s\nwant %s", tt.b, got, tt.want)
		}
	}
}

func TestStoredFormUsesVerboseKeys(t *testing.T) {
	b := Block{Kind: ToolResult, Content: "c", Tag: "t", ErrorCode: "e", ID: "i", Name: "n", OK: true,
		Data: json.RawMessage(`1`), Meta: &MetaInfo{Title: "x"}}
	got, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"tool_result","content":"c","tag":"t","error_code":"e","id":"i","name":"n","ok":true,"data":1,"meta":{"title":"x"}}`
	if string(got) != want {
		t.Errorf("stored form\n got %s\nwant %s", got, want)
	}
}

func TestAppendNDJSONOmitsEmptyFields(t *testing.T) {
	got := string(AppendNDJSON(nil, &Block{Kind: Warning}))
	if got != `{"k":"warning"}`+"\n" {
		t.Errorf("got %s", got)
	}
}

func TestAppendNDJSONAlwaysWritesOKForToolResult(t *testing.T) {
	for _, b := range []Block{{Kind: ToolResult}, {Kind: ToolResult, OK: true}} {
		if got := string(AppendNDJSON(nil, &b)); !strings.Contains(got, `"ok":`) {
			t.Errorf("%+v: ok missing: %s", b, got)
		}
	}
	if got := string(AppendNDJSON(nil, &Block{Kind: ToolCall})); strings.Contains(got, `"ok"`) {
		t.Errorf("ok written for a tool_call with OK false: %s", got)
	}
}

func TestAppendNDJSONEscapesLikeEncodingJSON(t *testing.T) {
	inputs := []string{
		"", "plain", "quote\"back\\slash", "\x00\x01\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f",
		"<script>&amp;</script>", "line\u2028sep\u2029para", "é😀中", "bad\xffutf8\xc3", "\xed\xa0\x80 surrogate",
		"truncated \xe2\x82", "\xf4\x90\x80\x80 above max",
	}
	for _, s := range inputs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := append(appendString(nil, s), '\n')
		if string(got) != want.String() {
			t.Errorf("appendString(%q)\n got %s\nwant %s", s, got, want.String())
		}
		if gotB := append(appendString(nil, []byte(s)), '\n'); string(gotB) != want.String() {
			t.Errorf("appendString([]byte(%q)) = %s, want %s", s, gotB, want.String())
		}
	}
}

func TestAppendNDJSONCompactsData(t *testing.T) {
	b := Block{Kind: Component, Tag: "x", Data: json.RawMessage(" {\n\t\"a\" : [ 1 , 2 ],\r\n \"s\": \"keep  spaces\\n\" } \n")}
	got := string(AppendNDJSON(nil, &b))
	want := `{"k":"component","t":"x","d":{"a":[1,2],"s":"keep  spaces\n"}}` + "\n"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestAppendNDJSONInvalidDataWrittenAsString(t *testing.T) {
	for _, data := range []string{`{"a":`, `nope`, `1 2`, `[1,]`, `{"a" 1}`, "\"ctl\x01\"", `01`, `-`, `1.`, `1e`, `"\x"`, `"\u12"`, `tru`, `{}}`, `[}`, ` `} {
		b := Block{Kind: ToolCall, Data: json.RawMessage(data)}
		line := AppendNDJSON(nil, &b)
		if !json.Valid(line) {
			t.Errorf("Data %q: output is not valid JSON: %s", data, line)
			continue
		}
		got, err := ParseNDJSON(line)
		if err != nil {
			t.Fatalf("Data %q: %v", data, err)
		}
		var s string
		if err := json.Unmarshal(got.Data, &s); err != nil {
			t.Errorf("Data %q: not written as a string: %s", data, line)
		} else if want := validUTF8(data); s != want {
			t.Errorf("Data %q: string holds %q", data, s)
		}
	}
}

func TestAppendNDJSONDataDepthBounded(t *testing.T) {
	deep := strings.Repeat("[", maxDataDepth+1) + strings.Repeat("]", maxDataDepth+1)
	line := AppendNDJSON(nil, &Block{Kind: ToolCall, Data: json.RawMessage(deep)})
	if !bytes.Contains(line, []byte(`"d":"[[[`)) {
		t.Errorf("over-deep data not written as a string: %.60s", line)
	}
	ok := strings.Repeat("[", maxDataDepth) + strings.Repeat("]", maxDataDepth)
	line = AppendNDJSON(nil, &Block{Kind: ToolCall, Data: json.RawMessage(ok)})
	b, err := ParseNDJSON(line)
	if err != nil || string(b.Data) != ok {
		t.Errorf("data at the depth limit does not round-trip: %v", err)
	}
}

func TestAppendNDJSONReplacesInvalidUTF8InData(t *testing.T) {
	b := Block{Kind: ToolCall, Data: json.RawMessage("{\"a\":\"x\xffy\u2028\"}")}
	got := string(AppendNDJSON(nil, &b))
	want := "{\"k\":\"tool_call\",\"d\":{\"a\":\"x\\ufffdy\u2028\"}}\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestAppendNDJSONKeepsValidCompactDataBytes(t *testing.T) {
	for _, d := range []string{`{"b":1,"a":2}`, `1.50`, `"\u00e9\/"`, `null`, `[true,false,{}]`, `-0.0E+5`} {
		b := Block{Kind: ToolCall, Data: json.RawMessage(d)}
		got, err := ParseNDJSON(AppendNDJSON(nil, &b))
		if err != nil || string(got.Data) != d {
			t.Errorf("Data %s came back as %s (%v)", d, got.Data, err)
		}
	}
}

func TestAppendNDJSONZeroAllocs(t *testing.T) {
	dst := make([]byte, 0, 4096)
	for _, b := range sampleBlocks() {
		allocs := testing.AllocsPerRun(100, func() { dst = AppendNDJSON(dst[:0], &b) })
		if allocs != 0 {
			t.Errorf("AppendNDJSON(%s) allocates %v times", b.Kind, allocs)
		}
	}
	bad := Block{Kind: ToolCall, Data: json.RawMessage("not json \xff")}
	if allocs := testing.AllocsPerRun(100, func() { dst = AppendNDJSON(dst[:0], &bad) }); allocs != 0 {
		t.Errorf("AppendNDJSON with invalid data allocates %v times", allocs)
	}
}

func TestNDJSONRoundTrip(t *testing.T) {
	for _, b := range sampleBlocks() {
		line := AppendNDJSON(nil, &b)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Errorf("%s: not exactly one line: %q", b.Kind, line)
		}
		if !json.Valid(line) {
			t.Errorf("%s: invalid JSON: %s", b.Kind, line)
		}
		got, err := ParseNDJSON(line)
		if err != nil {
			t.Errorf("%s: ParseNDJSON: %v", b.Kind, err)
			continue
		}
		want := b
		want.Content = validUTF8(want.Content)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip changed the block\n got %+v\nwant %+v", got, want)
		}
	}
}

func TestStoredRoundTrip(t *testing.T) {
	in := sampleBlocks()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []Block
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("stored round trip changed blocks\n got %+v\nwant %+v", got, in)
	}
}

func TestParseNDJSONMissingKindIsErrInvalid(t *testing.T) {
	for _, line := range []string{`{}`, `{"c":"x"}`, `{"k":""}`, `{"k":null}`, `{"kind":"markdown"}`, `null`} {
		_, err := ParseNDJSON([]byte(line))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseNDJSON(%s) = %v, want ErrInvalid", line, err)
		}
	}
}

func TestParseNDJSONRejectsMalformedWithErrInvalid(t *testing.T) {
	for _, line := range []string{``, `[]`, `"k"`, `{"k":"markdown"`, `{"k":1}`, `{"k":"markdown","c":5}`,
		`{"k":"tool_result","ok":"yes"}`, `{"k":"meta","m":[]}`, `{"k":"meta","m":{"input_tokens":1.5}}`} {
		b, err := ParseNDJSON([]byte(line))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseNDJSON(%s) = %v, want ErrInvalid", line, err)
		}
		if !reflect.DeepEqual(b, Block{}) {
			t.Errorf("ParseNDJSON(%s) returned a partial block %+v with its error", line, b)
		}
	}
}

func TestParseNDJSONIgnoresUnknownKeys(t *testing.T) {
	b, err := ParseNDJSON([]byte(`{"k":"markdown","c":"x","zz":{"deep":[1]},"content":"stored key ignored","K":"code"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Block{Kind: Markdown, Content: "x"}); !reflect.DeepEqual(b, want) {
		t.Errorf("got %+v, want %+v", b, want)
	}
}

func TestUnmarshalJSONRequiresKind(t *testing.T) {
	var b Block
	err := json.Unmarshal([]byte(`{"content":"x"}`), &b)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
	err = json.Unmarshal([]byte(`[{"kind":"markdown"},{"k":"markdown"}]`), new([]Block))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("wire keys accepted in the stored form: err = %v", err)
	}
}

func TestUnmarshalJSONNullIsNoop(t *testing.T) {
	b := Block{Kind: Warning, Content: "keep"}
	if err := b.UnmarshalJSON([]byte("null")); err != nil {
		t.Fatal(err)
	}
	if b.Content != "keep" {
		t.Errorf("null changed the block: %+v", b)
	}
}

func TestDecodeCanonicalizesData(t *testing.T) {
	b, err := ParseNDJSON([]byte("{\"k\":\"tool_call\",\"d\": { \"a\" : [1, 2] } }"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Data) != `{"a":[1,2]}` {
		t.Errorf("Data = %s", b.Data)
	}
}

func TestEncoderWritesOneLinePerBlock(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, b := range sampleBlocks() {
		if err := enc.Encode(&b); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(sampleBlocks()) {
		t.Fatalf("%d lines for %d blocks", len(lines), len(sampleBlocks()))
	}
	for i, l := range lines {
		b, err := ParseNDJSON([]byte(l))
		if err != nil || b.Kind != sampleBlocks()[i].Kind {
			t.Errorf("line %d: %v %+v", i, err, b)
		}
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestEncoderReturnsWriterError(t *testing.T) {
	werr := errors.New("closed")
	if err := NewEncoder(failWriter{werr}).Encode(&Block{Kind: Markdown}); !errors.Is(err, werr) {
		t.Errorf("err = %v, want %v", err, werr)
	}
}

func TestFieldTableCoversBlock(t *testing.T) {
	// Setting each Block field to a non-zero value must add exactly one key,
	// and the keys must be the documented ones, in both forms.
	typ := reflect.TypeFor[Block]()
	seen := map[string]bool{}
	for i := range typ.NumField() {
		var b Block
		b.Kind = Warning
		v := reflect.ValueOf(&b).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			v.SetBytes([]byte("1"))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Fatalf("field %s has an unhandled type", typ.Field(i).Name)
		}
		for f, base := range [2]string{`{"k":"warning"}`, `{"kind":"warning"}`} {
			out := string(appendBlock(nil, &b, form(f)))
			if typ.Field(i).Name == "Kind" {
				continue
			}
			if len(out) <= len(base) {
				t.Errorf("field %s is not encoded in form %d", typ.Field(i).Name, f)
			}
			key := out[len(base)-1:]
			seen[typ.Field(i).Name+"/"+key[:strings.IndexByte(key, ':')]] = true
		}
	}
	want := []string{
		`Content/,"c"`, `Content/,"content"`, `Tag/,"t"`, `Tag/,"tag"`, `ErrorCode/,"e"`, `ErrorCode/,"error_code"`,
		`ID/,"id"`, `Name/,"n"`, `Name/,"name"`, `CallID/,"ci"`, `CallID/,"call_id"`, `ClientSide/,"cs"`, `ClientSide/,"client_side"`, `Effect/,"ef"`, `Effect/,"effect"`,
		`OK/,"ok"`, `Data/,"d"`, `Data/,"data"`, `Meta/,"m"`, `Meta/,"meta"`,
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("missing field/key %s (have %v)", w, seen)
		}
	}
}

func TestMetaTableMatchesStructTags(t *testing.T) {
	typ := reflect.TypeFor[MetaInfo]()
	if typ.NumField() != len(metaFields) {
		t.Fatalf("MetaInfo has %d fields, the encoder table %d", typ.NumField(), len(metaFields))
	}
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if tag != metaFields[i].key {
			t.Errorf("field %s: tag %q, table key %q", typ.Field(i).Name, tag, metaFields[i].key)
		}
	}
	// And the hand-rolled encoding decodes through the tags to the same value.
	m := MetaInfo{ThreadID: "a", MessageID: "b", UserMessageID: "c", Title: "d", InputTokens: -1, OutputTokens: 1 << 40, Finish: "e"}
	var got MetaInfo
	if err := json.Unmarshal(appendMeta(nil, &m), &got); err != nil || got != m {
		t.Errorf("meta round trip: %+v, %v", got, err)
	}
}

func TestJSONMarshalHTMLEscapingKeepsDataValue(t *testing.T) {
	// json.Marshal HTML-escapes MarshalJSON's output; Content comes back
	// exactly, Data with the same value (escapes inside its strings differ).
	in := Block{Kind: Component, Content: "<b>&</b>", Data: json.RawMessage(`{"html":"<i>&</i>"}`)}
	stored, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got Block
	if err := json.Unmarshal(stored, &got); err != nil {
		t.Fatal(err)
	}
	if got.Content != in.Content {
		t.Errorf("Content = %q", got.Content)
	}
	var v struct{ HTML string }
	if err := json.Unmarshal(got.Data, &v); err != nil || v.HTML != "<i>&</i>" {
		t.Errorf("Data = %s (%v)", got.Data, err)
	}
	direct, _ := in.MarshalJSON()
	if err := got.UnmarshalJSON(direct); err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("MarshalJSON round trip: %+v (%v)", got, err)
	}
}

func TestBlocksStoredWithTheOldTagReadIntoClientSideAndEffect(t *testing.T) {
	// Before ClientSide and Effect, the tag carried both. Threads stored
	// then must read as if written now, in both forms.
	tests := []struct {
		stored, wire string
		want         Block
	}{
		{`{"kind":"tool_call","tag":"client","id":"c1","name":"browser_time"}`, `{"k":"tool_call","t":"client","id":"c1","n":"browser_time"}`,
			Block{Kind: ToolCall, ID: "c1", Name: "browser_time", ClientSide: true}},
		{`{"kind":"confirm","content":"Delete?","tag":"destructive","id":"tok","name":"delete_vm"}`, `{"k":"confirm","c":"Delete?","t":"destructive","id":"tok","n":"delete_vm"}`,
			Block{Kind: Confirm, ID: "tok", Name: "delete_vm", Content: "Delete?", Effect: "destructive"}},
		// Any other tag on a tool_call meant nothing, and is dropped.
		{`{"kind":"tool_call","tag":"x","id":"c2"}`, `{"k":"tool_call","t":"x","id":"c2"}`, Block{Kind: ToolCall, ID: "c2"}},
		// Written now: the new key wins over the tag.
		{`{"kind":"confirm","tag":"mutate","effect":"destructive"}`, `{"k":"confirm","t":"mutate","ef":"destructive"}`, Block{Kind: Confirm, Effect: "destructive"}},
		// Other kinds keep their tag.
		{`{"kind":"component","tag":"client"}`, `{"k":"component","t":"client"}`, Block{Kind: Component, Tag: "client"}},
	}
	for _, tt := range tests {
		var got Block
		if err := json.Unmarshal([]byte(tt.stored), &got); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("stored %s = %+v (%v), want %+v", tt.stored, got, err, tt.want)
		}
		if got, err := ParseNDJSON([]byte(tt.wire)); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("wire %s = %+v (%v), want %+v", tt.wire, got, err, tt.want)
		}
	}
}

func TestStoredFormKeepsTheOldTagForOlderReaders(t *testing.T) {
	// An instance from before ClientSide and Effect may read what this
	// one stores: it finds the client marker and the effect in the tag.
	for _, tt := range []struct {
		b    Block
		want string
	}{
		{Block{Kind: ToolCall, ID: "c1", ClientSide: true}, `{"kind":"tool_call","tag":"client","id":"c1","client_side":true}`},
		{Block{Kind: Confirm, ID: "tok", Effect: "mutate"}, `{"kind":"confirm","tag":"mutate","id":"tok","effect":"mutate"}`},
	} {
		if got, _ := tt.b.MarshalJSON(); string(got) != tt.want {
			t.Errorf("stored form\n got %s\nwant %s", got, tt.want)
		}
	}
}
