package assistant

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// clampResult fits a tool result, as the model will read it, into budget
// bytes: the largest array anywhere in it is cut to its first half, again
// and again, and a "_truncated" note tells the model what was dropped so it
// can ask for less. A result that still does not fit (nothing left to cut)
// is replaced by its beginning, with a note: the budget is a hard limit.
//
// The work is about linear in the size of the result: every value's
// encoded size is computed once and kept current as arrays are cut, and the
// largest array comes from a heap.
func clampResult(raw []byte, budget int) []byte {
	if len(raw) <= budget {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return cutToBudget(raw, nil, budget)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		root = map[string]any{"result": doc} // so the root can be cut and noted
	}
	t := &sizeTree{}
	top := t.build(root, nil, "", -1, nil)
	// Leave room for the note; it names at most maxNotedCuts arrays.
	reserve := min(noteReserve, budget/4)
	for cuts := 0; top.size+reserve > budget && cuts < maxCuts; cuts++ {
		n := t.largest()
		if n == nil {
			break
		}
		t.cut(n)
	}
	if len(t.cuts) > 0 {
		root["_truncated"] = t.note()
	}
	out, err := encode(root)
	if err != nil || len(out) > budget {
		return cutToBudget(raw, root, budget)
	}
	return out
}

const (
	maxCuts      = 4096 // then give up cutting and keep the beginning
	maxNotedCuts = 5    // arrays named in the note; the rest are counted
	maxNotedPath = 80   // bytes of one path in the note
	noteReserve  = 160 + maxNotedCuts*(maxNotedPath+48) + 48
)

// node is one value of the result with its current encoded size.
type node struct {
	parent *node
	key    string // member name, when in an object
	index  int    // position, when in an array; -1 in an object
	size   int
	items  []any   // arrays only: the current items
	kids   []*node // arrays only: one per item
	set    func([]any)
	orig   int // arrays only: the original length
	gone   bool
	cut    bool // in sizeTree.cuts
}

type sizeTree struct {
	arrays arrayHeap
	cuts   []*node // in the order first cut
}

func (t *sizeTree) build(v any, parent *node, key string, index int, set func([]any)) *node {
	n := &node{parent: parent, key: key, index: index, set: set}
	switch x := v.(type) {
	case []any:
		n.items, n.orig = x, len(x)
		n.size = 2 + max(len(x)-1, 0)
		for i, item := range x {
			kid := t.build(item, n, "", i, func(a []any) { x[i] = a })
			n.kids = append(n.kids, kid)
			n.size += kid.size
		}
		if set != nil && len(x) >= 2 {
			heap.Push(&t.arrays, heapEntry{n, n.size})
		}
	case map[string]any:
		n.size = 2 + max(len(x)-1, 0)
		for k, item := range x {
			n.size += scalarSize(k) + 1 + t.build(item, n, k, -1, func(a []any) { x[k] = a }).size
		}
	default:
		n.size = scalarSize(x)
	}
	return n
}

// largest returns the largest array that can still be cut, or nil.
func (t *sizeTree) largest() *node {
	for t.arrays.Len() > 0 {
		e := heap.Pop(&t.arrays).(heapEntry)
		switch {
		case e.n.gone || len(e.n.items) < 2:
		case e.size != e.n.size: // shrank since it was pushed
			heap.Push(&t.arrays, heapEntry{e.n, e.n.size})
		default:
			return e.n
		}
	}
	return nil
}

// cut keeps the first half of n's items and updates every size above it.
func (t *sizeTree) cut(n *node) {
	k := len(n.items) / 2
	delta := len(n.items) - k // one comma per removed item
	for _, kid := range n.kids[k:] {
		delta += kid.size
		kid.markGone()
	}
	if !n.cut {
		n.cut = true
		t.cuts = append(t.cuts, n)
	}
	n.items, n.kids = n.items[:k], n.kids[:k]
	n.set(n.items)
	for p := n; p != nil; p = p.parent {
		p.size -= delta
	}
	if len(n.items) >= 2 {
		heap.Push(&t.arrays, heapEntry{n, n.size})
	}
}

func (n *node) markGone() {
	n.gone = true
	for _, kid := range n.kids {
		kid.markGone()
	}
}

// path names n for the model, e.g. data.servers[3].ports.
func (n *node) path() string {
	var parts []string
	for p := n; p.parent != nil; p = p.parent {
		if p.index >= 0 {
			parts = append(parts, fmt.Sprintf("[%d]", p.index))
		} else {
			parts = append(parts, "."+p.key)
		}
	}
	slices.Reverse(parts)
	return strings.TrimPrefix(strings.Join(parts, ""), ".")
}

// note tells the model what the cuts dropped: the largest few arrays by
// name, the rest by count.
func (t *sizeTree) note() string {
	cut := slices.Clone(t.cuts)
	slices.SortStableFunc(cut, func(a, b *node) int { return cmp.Compare(b.orig, a.orig) })
	var notes []string
	for _, n := range cut[:min(len(cut), maxNotedCuts)] {
		notes = append(notes, fmt.Sprintf("%s: kept the first %d of %d items", truncate(n.path(), maxNotedPath), len(n.items), n.orig))
	}
	if more := len(cut) - maxNotedCuts; more > 0 {
		notes = append(notes, fmt.Sprintf("and %d more lists were cut", more))
	}
	return "The result was too large and was cut. " + strings.Join(notes, "; ") +
		". Ask for fewer items (filters, a smaller page) if you need the rest."
}

type heapEntry struct {
	n    *node
	size int // n.size when pushed
}

type arrayHeap []heapEntry

func (h arrayHeap) Len() int           { return len(h) }
func (h arrayHeap) Less(i, j int) bool { return h[i].size > h[j].size }
func (h arrayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *arrayHeap) Push(x any)        { *h = append(*h, x.(heapEntry)) }
func (h *arrayHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// cutToBudget is the last resort: the envelope's small fields (ok, summary,
// error) if they fit, and as much of the beginning of the encoded result as
// fits, as text.
func cutToBudget(raw []byte, doc any, budget int) []byte {
	note := fmt.Sprintf("The result was %d bytes, over the %d-byte limit, and could not be cut to size; "+
		"only its beginning is shown. Ask for less.", len(raw), budget)
	if budget < 400 {
		note = "Too large; cut."
	}
	out := map[string]any{"_truncated": note}
	if m, ok := doc.(map[string]any); ok {
		for _, k := range []string{"ok", "summary", "error"} {
			if v, ok := m[k]; ok && encodedSize(v) <= budget/8 {
				out[k] = v
			}
		}
	}
	room := budget - encodedSize(out) - len(`,"beginning":""`)
	begin := truncate(string(raw), max(room, 0))
	for range 8 { // escaping may make the text longer than its bytes
		over := scalarSize(begin) - 2 - room
		if over <= 0 {
			break
		}
		begin = truncate(begin, max(len(begin)-over, 0))
	}
	out["beginning"] = begin
	enc, err := encode(out)
	if err != nil {
		return []byte(`{"_truncated":"Too large; cut."}`)
	}
	return enc
}

// encode is json.Marshal without HTML escaping, as tools.MarshalForModel
// encodes results: "<" stays one byte for the model.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodedSize is len(encode(v)), computed without building it.
func encodedSize(v any) int {
	switch x := v.(type) {
	case []any:
		n := 2 + max(len(x)-1, 0)
		for _, item := range x {
			n += encodedSize(item)
		}
		return n
	case map[string]any:
		n := 2 + max(len(x)-1, 0)
		for k, item := range x {
			n += scalarSize(k) + 1 + encodedSize(item)
		}
		return n
	}
	return scalarSize(v)
}

func scalarSize(v any) int {
	switch x := v.(type) {
	case nil:
		return len("null")
	case bool:
		if x {
			return len("true")
		}
		return len("false")
	case json.Number: // as decoded: the literal is written back as is
		return len(x)
	case string:
		if plainASCII(x) {
			return len(x) + 2
		}
	}
	enc, err := encode(v)
	if err != nil {
		return 0
	}
	return len(enc)
}

// plainASCII reports whether s encodes as itself between quotes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
