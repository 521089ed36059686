package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"testing"
)

// shapes are the frame shapes, by the key of their text.
var shapes = map[bool]struct {
	f    *textFrame
	text string // the key holding the text
	keys []string
}{
	false: {sseText, "delta", []string{"delta", "id", "type"}},
	true:  {ndjsonText, "c", []string{"c", "k"}},
}

// decodeFrame decodes a frame of either shape with encoding/json: its
// keys, and its text.
func decodeFrame(ndjson bool, p []byte) (map[string]string, bool) {
	var ok bool
	if ndjson {
		p, ok = bytes.CutSuffix(p, []byte("\n"))
	} else {
		p, ok = bytes.CutPrefix(p, []byte("data: "))
		if ok {
			p, ok = bytes.CutSuffix(p, []byte("\n\n"))
		}
	}
	var m map[string]string
	if !ok || json.Unmarshal(p, &m) != nil {
		return nil, false
	}
	return m, true
}

// oddEscape matches the escapes no merged frame may hold: NUL, a
// surrogate, upper-case hex, a solidus.
var oddEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\(u0000|u[dD][89abAB]|u[dD][c-fC-F]|u[0-9a-f]{0,3}[A-F]|/)`)

// FuzzMergeFrame: mergeFrame never panics; when it merges two frames, the
// merged frame decodes (encoding/json) to the same keys, the same part,
// and the two texts concatenated, and neither frame held an escape that
// could mean something else once joined.
func FuzzMergeFrame(f *testing.F) {
	sse := func(delta, id string) []byte {
		return []byte(`data: {"delta":"` + delta + `","id":"` + id + `","type":"text-delta"}` + "\n\n")
	}
	nd := func(c string) []byte { return []byte(`{"k":"markdown","c":"` + c + `"}` + "\n") }
	for _, pair := range [][2]string{
		{`Hello `, `world`}, {`say \"hi\"`, ` and \\ back`}, {`line\n`, `\tnext\r\n`},
		{`a\u2028b`, `\u2029`}, {`ends in a backslash \\`, `\\`}, {`\u003cb\u003e`, `\u0026`},
		{`caf\u00e9 é`, `日本`}, {`\b\f`, `\u001f`}, {``, `x`},
	} {
		f.Add(false, sse(pair[0], "text-1"), sse(pair[1], "text-1"))
		f.Add(true, nd(pair[0]), nd(pair[1]))
	}
	f.Add(false, sse("a", "text-1"), sse("b", "text-2"))
	f.Add(false, sse("a", "text-1"), []byte(`data: {"delta":"b","id":"text-1","type":"text-delta","x":1}`+"\n\n"))
	f.Add(true, nd("a"), []byte(`{"k":"markdown","c":"b","t":"x"}`+"\n"))
	f.Add(true, nd(`\ud83d`), nd(`\ude00`))
	f.Add(true, nd("\xe2\x82"), nd("\xac"))
	f.Add(true, nd("a"), nd(`\u0000`))
	f.Add(false, sse(`\`, "text-1"), sse(`"`, "text-1"))
	f.Fuzz(func(t *testing.T, ndjson bool, a, b []byte) {
		sh := shapes[ndjson]
		_, _ = mergeFrame(slices.Clone(a), len(a)/2, sh.f, b) // any input: no panic
		if _, _, ok := sh.f.split(a); !ok {
			return
		}
		dst := append(slices.Clone(a), "tail"...)[:len(a)] // room to merge in place
		merged, ok := mergeFrame(dst, 0, sh.f, b)
		if !ok {
			if !bytes.Equal(merged, a) {
				t.Fatalf("a refused merge changed the copy: %q", merged)
			}
			return
		}
		ma, okA := decodeFrame(ndjson, a)
		mb, okB := decodeFrame(ndjson, b)
		mm, okM := decodeFrame(ndjson, merged)
		if !okA || !okB || !okM {
			t.Fatalf("merged frames that do not all decode: %q + %q = %q", a, b, merged)
		}
		for _, m := range []map[string]string{ma, mb, mm} {
			if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, sh.keys) {
				t.Fatalf("merged a frame with keys %v: %q + %q", keys, a, b)
			}
		}
		for _, k := range sh.keys {
			if k != sh.text && (ma[k] != mb[k] || mm[k] != ma[k]) {
				t.Fatalf("%s differs: %q + %q = %q", k, a, b, merged)
			}
		}
		if mm[sh.text] != ma[sh.text]+mb[sh.text] {
			t.Fatalf("merged text %q, want %q + %q", mm[sh.text], ma[sh.text], mb[sh.text])
		}
		if oddEscape.Match(a) || oddEscape.Match(b) {
			t.Fatalf("merged a frame with an odd escape: %q + %q", a, b)
		}
		if !ndjson && mm["type"] != "text-delta" || ndjson && mm["k"] != "markdown" {
			t.Fatalf("merged frames of another kind: %q", merged)
		}
	})
}

// mergeFrame refuses every frame that is not a whole frame continuing the
// last one's text, and leaves the copy as it was.
func TestMergeFrameRefusesWhatDoesNotContinueTheText(t *testing.T) {
	last := []byte(`data: {"delta":"Hello ","id":"text-1","type":"text-delta"}` + "\n\n")
	for name, p := range map[string]string{
		"another id":      `data: {"delta":"x","id":"text-2","type":"text-delta"}` + "\n\n",
		"an extra key":    `data: {"delta":"x","id":"text-1","type":"text-delta","x":1}` + "\n\n",
		"another type":    `data: {"delta":"x","id":"text-1","type":"reasoning-delta"}` + "\n\n",
		"keys reordered":  `data: {"id":"text-1","delta":"x","type":"text-delta"}` + "\n\n",
		"two frames":      `data: {"delta":"x","id":"text-1","type":"text-delta"}` + "\n\n" + `data: {"delta":"x","id":"text-1","type":"text-delta"}` + "\n\n",
		"half a frame":    `data: {"delta":"x","id":"text-1"`,
		"no blank line":   `data: {"delta":"x","id":"text-1","type":"text-delta"}` + "\n",
		"a NUL":           `data: {"delta":"\u0000","id":"text-1","type":"text-delta"}` + "\n\n",
		"a raw control":   "data: {\"delta\":\"\x01\",\"id\":\"text-1\",\"type\":\"text-delta\"}\n\n",
		"a surrogate":     `data: {"delta":"\ud83d","id":"text-1","type":"text-delta"}` + "\n\n",
		"a solidus":       `data: {"delta":"\/","id":"text-1","type":"text-delta"}` + "\n\n",
		"upper-case hex":  `data: {"delta":"\u00E9","id":"text-1","type":"text-delta"}` + "\n\n",
		"a bad escape":    `data: {"delta":"\x","id":"text-1","type":"text-delta"}` + "\n\n",
		"a short escape":  `data: {"delta":"\u12","id":"text-1","type":"text-delta"}` + "\n\n",
		"invalid UTF-8":   "data: {\"delta\":\"\xe2\x82\",\"id\":\"text-1\",\"type\":\"text-delta\"}\n\n",
		"an id escaped":   `data: {"delta":"x","id":"text\u002d1","type":"text-delta"}` + "\n\n",
		"an open string":  `data: {"delta":"x\"}` + "\n\n",
		"the done marker": "data: [DONE]\n\n",
	} {
		got, ok := mergeFrame(slices.Clone(last), 0, sseText, []byte(p))
		if ok || !bytes.Equal(got, last) {
			t.Errorf("%s: merged %q", name, got)
		}
	}
	nd := []byte(`{"k":"markdown","c":"Hello "}` + "\n")
	for name, p := range map[string]string{
		"another kind": `{"k":"reasoning","c":"x"}` + "\n",
		"an extra key": `{"k":"markdown","c":"x","t":"go"}` + "\n",
		"no content":   `{"k":"markdown"}` + "\n",
		"no newline":   `{"k":"markdown","c":"x"}`,
	} {
		if got, ok := mergeFrame(slices.Clone(nd), 0, ndjsonText, []byte(p)); ok || !bytes.Equal(got, nd) {
			t.Errorf("NDJSON, %s: merged %q", name, got)
		}
	}
	if got, ok := mergeFrame(slices.Clone(nd), 0, ndjsonText, []byte(`{"k":"markdown","c":"wor\\"}`+"\n")); !ok ||
		string(got) != `{"k":"markdown","c":"Hello wor\\"}`+"\n" {
		t.Errorf("NDJSON: a continuation ending in an escaped backslash: %q, %v", got, ok)
	}
}
