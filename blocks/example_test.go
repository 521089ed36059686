package blocks_test

import (
	"fmt"
	"os"

	"github.com/parleyhq/parley/blocks"
)

func ExampleParser() {
	var p blocks.Parser
	enc := blocks.NewEncoder(os.Stdout)
	emit := func(b blocks.Block) { enc.Encode(&b) }

	// Model text arrives in arbitrary pieces.
	for _, delta := range []string{"Here is", " the query:\n``", "`sql\nSELECT 1;\n", "```\nDone."} {
		p.Write(delta, emit)
	}
	p.Flush(emit)
	// Output:
	// {"k":"markdown","c":"Here is the query:\n"}
	// {"k":"load","t":"code"}
	// {"k":"code","c":"SELECT 1;\n","t":"sql"}
	// {"k":"markdown","c":"Done."}
}

func ExampleAppendNDJSON() {
	buf := make([]byte, 0, 256) // reused across blocks: no allocations
	for _, b := range []blocks.Block{
		{Kind: blocks.ToolCall, ID: "call_1", Name: "list_vms", Data: []byte(`{ "limit": 10 }`)},
		{Kind: blocks.ToolResult, ID: "call_1", Name: "list_vms"},
		{Kind: blocks.Error, ErrorCode: "quota_exceeded", Content: "Daily quota used up."},
	} {
		buf = blocks.AppendNDJSON(buf[:0], &b)
		os.Stdout.Write(buf)
	}
	// Output:
	// {"k":"tool_call","id":"call_1","n":"list_vms","d":{"limit":10}}
	// {"k":"tool_result","id":"call_1","n":"list_vms","ok":false}
	// {"k":"error","c":"Daily quota used up.","e":"quota_exceeded"}
}

func ExampleAbsorb() {
	var p blocks.Parser
	var stored []blocks.Block
	emit := func(b blocks.Block) { stored = blocks.Absorb(stored, b) }
	// Prose streams as several Markdown chunks; the stored list holds one.
	p.Write("A paragraph long enough that the parser emits it ", emit)
	p.Write("in more than one chunk.\n", emit)
	p.Write("```mermaid\ngraph LR\nA-->B\n```\n", emit)
	p.Flush(emit)
	for _, b := range stored {
		fmt.Printf("%s %q\n", b.Kind, b.Content)
	}
	// Output:
	// markdown "A paragraph long enough that the parser emits it in more than one chunk.\n"
	// mermaid "graph LR\nA-->B\n"
}
