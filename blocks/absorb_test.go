package blocks

import (
	"encoding/json"
	"reflect"
	"testing"
)

func absorbAll(bs []Block) []Block {
	var list []Block
	for _, b := range bs {
		list = Absorb(list, b)
	}
	return list
}

func TestAbsorbMergesConsecutiveMarkdown(t *testing.T) {
	got := absorbAll([]Block{
		{Kind: Markdown, Content: "Hel"}, {Kind: Markdown, Content: "lo "}, {Kind: Markdown, Content: "world"},
	})
	if want := []Block{{Kind: Markdown, Content: "Hello world"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestAbsorbDropsLoadAndMeta(t *testing.T) {
	got := absorbAll([]Block{
		{Kind: Meta, Meta: &MetaInfo{ThreadID: "t"}},
		{Kind: Markdown, Content: "a"},
		{Kind: Load, Tag: "code"},
		{Kind: Markdown, Content: "b"},
		{Kind: Meta, Meta: &MetaInfo{Finish: "stop"}},
	})
	if want := []Block{{Kind: Markdown, Content: "ab"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestAbsorbKeepsOtherBlocksAndSeparatesMarkdown(t *testing.T) {
	in := []Block{
		{Kind: Markdown, Content: "before"},
		{Kind: Code, Tag: "go", Content: "x"},
		{Kind: Markdown, Content: "after"},
		{Kind: ToolCall, ID: "1", Name: "f", Data: json.RawMessage(`{}`)},
		{Kind: ToolResult, ID: "1", Name: "f", OK: true},
		{Kind: Warning, Content: "w"},
		{Kind: Warning, Content: "w"},
		{Kind: Error, ErrorCode: "internal", Content: "e"},
	}
	if got := absorbAll(in); !reflect.DeepEqual(got, in) {
		t.Errorf("got  %+v\nwant %+v", got, in)
	}
}

func TestAbsorbDoesNotAliasCallerBlocks(t *testing.T) {
	first := Block{Kind: Markdown, Content: "a"}
	list := Absorb(nil, first)
	Absorb(list, Block{Kind: Markdown, Content: "b"})
	if first.Content != "a" {
		t.Errorf("caller's block changed: %+v", first)
	}
}
