package blocks

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchDeltas is prose, with an occasional fence, cut into 4–8 byte deltas
// as a model streams it.
func benchDeltas() []string {
	text := strings.Repeat("The assistant lists your virtual machines, ordered by creation date; "+
		"each has a name, a state and a size. Ünïcödé prose too — “quoted”.\n\n", 8) +
		"```go\nfor _, vm := range vms {\n\tfmt.Println(vm.Name)\n}\n```\n" +
		strings.Repeat("More prose follows the code block and closes the answer. ", 8)
	var out []string
	for i := 0; len(text) > 0; i++ {
		n := min(len(text), 4+i%5)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// BenchmarkDelta measures one streamed delta through Parser.Write plus the
// NDJSON encoding of whatever it emits, reusing one buffer: the per-token
// cost on the streaming hot path.
func BenchmarkDelta(b *testing.B) {
	deltas := benchDeltas()
	var p Parser
	dst := make([]byte, 0, 1024)
	emit := func(blk Block) { dst = AppendNDJSON(dst[:0], &blk) }
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		p.Write(deltas[i], emit)
		if i++; i == len(deltas) {
			p.Flush(emit)
			i = 0
		}
	}
}

func BenchmarkAppendNDJSON(b *testing.B) {
	blk := Block{Kind: ToolResult, ID: "call_1", Name: "list_vms", OK: true, Content: "3 VMs \"found\"",
		Data: json.RawMessage(`{"vms":[{"name":"a","cpu":2},{"name":"b","cpu":4}]}`)}
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendNDJSON(dst[:0], &blk)
	}
}

func BenchmarkParseNDJSON(b *testing.B) {
	line := AppendNDJSON(nil, &Block{Kind: ToolResult, ID: "call_1", Name: "list_vms", OK: true, Content: "3 VMs",
		Data: json.RawMessage(`{"vms":[{"name":"a","cpu":2},{"name":"b","cpu":4}]}`)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNDJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}
