package blocks

import (
	"encoding/json"
	"fmt"
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

// A List gives the same transcript as Absorb, whatever the chunking, and
// Blocks is a snapshot the List does not change afterwards.
func FuzzListMatchesAbsorb(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 0, 3}, "ab")
	f.Fuzz(func(t *testing.T, kinds []byte, text string) {
		all := []Kind{Markdown, ToolCall, Meta, Load, Warning, Reasoning}
		var l List
		var want []Block
		var snap []Block
		for i, k := range kinds {
			b := Block{Kind: all[int(k)%len(all)], Content: text + string(rune('a'+i%26))}
			if b.Kind == Meta {
				b.Meta = &MetaInfo{}
			}
			want = Absorb(want, b)
			l.Add(b)
			if i == len(kinds)/2 {
				snap = l.Blocks()
			}
		}
		got := l.Blocks()
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("List %+v, Absorb %+v", got, want)
		}
		if snap != nil {
			before := fmt.Sprint(snap)
			l.Add(Block{Kind: Markdown, Content: "more"})
			if fmt.Sprint(snap) != before {
				t.Fatalf("a snapshot changed after a later Add")
			}
		}
	})
}
