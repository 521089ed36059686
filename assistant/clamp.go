package assistant

import (
	"bytes"
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
	if _, ok := doc.(map[string]any); !ok {
		doc = map[string]any{"result": doc} // so the root can be cut and noted
	}
	cuts := map[string][2]int{} // path -> kept, original length
	size := len(raw)
	for size+noteSize(cuts) > budget {
		path, arr := largestArray(doc)
		if arr == nil || len(arr.items) < 2 {
			break
		}
		orig := len(arr.items)
		if c, ok := cuts[path]; ok {
			orig = c[1]
		}
		arr.set(arr.items[:len(arr.items)/2])
		cuts[path] = [2]int{len(arr.items) / 2, orig}
		size = encodedSize(doc)
	}
	if len(cuts) > 0 {
		doc.(map[string]any)["_truncated"] = cutNote(cuts)
	}
	out, err := json.Marshal(doc)
	if err != nil || len(out) > budget {
		return cutToBudget(raw, doc, budget)
	}
	return out
}

// cutNote tells the model what the cuts dropped.
func cutNote(cuts map[string][2]int) string {
	notes := make([]string, 0, len(cuts))
	for path, c := range cuts {
		notes = append(notes, fmt.Sprintf("%s: kept the first %d of %d items", path, c[0], c[1]))
	}
	slices.Sort(notes)
	return "The result was too large and was cut. " + strings.Join(notes, "; ") +
		". Ask for fewer items (filters, a smaller page) if you need the rest."
}

// noteSize is what the note for cuts adds to the encoded result.
func noteSize(cuts map[string][2]int) int {
	if len(cuts) == 0 {
		return 0
	}
	return scalarSize(cutNote(cuts)) + len(`,"_truncated":`)
}

// cutToBudget is the last resort: the envelope's small fields (ok, summary,
// error) if they fit, and the beginning of the encoded result as text.
func cutToBudget(raw []byte, doc any, budget int) []byte {
	out := map[string]any{"_truncated": fmt.Sprintf("The result was %d bytes, over the %d-byte limit, and could not be cut to size; "+
		"only its beginning is shown. Ask for less.", len(raw), budget)}
	if m, ok := doc.(map[string]any); ok {
		for _, k := range []string{"ok", "summary", "error"} {
			if v, ok := m[k]; ok && encodedSize(v) <= budget/8 {
				out[k] = v
			}
		}
	}
	head, _ := json.Marshal(out)
	room := budget - len(head) - len(`,"beginning":""`)
	// Escaping can grow the text up to six times (\u00XX); leave room for it.
	out["beginning"] = truncate(string(raw), max(room/6, 0))
	enc, err := json.Marshal(out)
	if err != nil {
		return []byte(`{"ok":false,"_truncated":"The result was too large to show."}`)
	}
	return enc
}

// arrayRef is an array inside the document and how to replace it.
type arrayRef struct {
	items []any
	size  int
	set   func([]any)
}

// largestArray finds the array with the largest encoded size, computing
// every value's size once, bottom up.
func largestArray(doc any) (string, *arrayRef) {
	var best *arrayRef
	bestPath := ""
	var walk func(v any, path string, set func([]any)) int
	walk = func(v any, path string, set func([]any)) int {
		switch x := v.(type) {
		case []any:
			n := 2 + max(len(x)-1, 0)
			for i, item := range x {
				n += walk(item, fmt.Sprintf("%s[%d]", path, i), func(a []any) { x[i] = a })
			}
			if set != nil && (best == nil || n > best.size) {
				best, bestPath = &arrayRef{items: x, size: n, set: set}, path
			}
			return n
		case map[string]any:
			n := 2 + max(len(x)-1, 0)
			for k, item := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				n += scalarSize(k) + 1 + walk(item, p, func(a []any) { x[k] = a })
			}
			return n
		default:
			return scalarSize(x)
		}
	}
	walk(doc, "", nil)
	return bestPath, best
}

// encodedSize is len(json.Marshal(v)), computed without building it.
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
	enc, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(enc)
}
