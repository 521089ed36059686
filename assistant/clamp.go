package assistant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// clampResult fits a tool result, as the model will read it, into budget
// bytes: the largest array anywhere in it is cut to its first half, again
// and again, and a "_truncated" note tells the model what was dropped so it
// can ask for less. A result with no array to cut is returned as is.
func clampResult(raw []byte, budget int) []byte {
	if len(raw) <= budget {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return raw
	}
	if _, ok := doc.(map[string]any); !ok {
		doc = map[string]any{"result": doc} // so the root can be cut and noted
	}
	cuts := map[string][2]int{} // path -> kept, original length
	for size := len(raw); size > budget; {
		path, arr := largestArray(doc, "", nil)
		if arr == nil || len(arr.items) < 2 {
			break
		}
		orig := len(arr.items)
		if c, ok := cuts[path]; ok {
			orig = c[1]
		}
		arr.set(arr.items[:len(arr.items)/2])
		cuts[path] = [2]int{len(arr.items) / 2, orig}
		out, err := json.Marshal(doc)
		if err != nil {
			return raw
		}
		size = len(out)
	}
	if len(cuts) == 0 {
		return raw
	}
	notes := make([]string, 0, len(cuts))
	for path, c := range cuts {
		notes = append(notes, fmt.Sprintf("%s: kept the first %d of %d items", path, c[0], c[1]))
	}
	note := "The result was too large and was cut. " + strings.Join(notes, "; ") +
		". Ask for fewer items (filters, a smaller page) if you need the rest."
	doc.(map[string]any)["_truncated"] = note
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

// arrayRef is an array inside the document and how to replace it.
type arrayRef struct {
	items []any
	size  int
	set   func([]any)
}

// largestArray finds the array with the largest encoded size.
func largestArray(v any, path string, best *arrayRef) (string, *arrayRef) {
	bestPath := ""
	var walk func(v any, path string, set func([]any))
	walk = func(v any, path string, set func([]any)) {
		switch x := v.(type) {
		case []any:
			if enc, err := json.Marshal(x); err == nil && set != nil && (best == nil || len(enc) > best.size) {
				best, bestPath = &arrayRef{items: x, size: len(enc), set: set}, path
			}
			for i, item := range x {
				walk(item, fmt.Sprintf("%s[%d]", path, i), func(n []any) { x[i] = n })
			}
		case map[string]any:
			for k, item := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(item, p, func(n []any) { x[k] = n })
			}
		}
	}
	walk(v, path, nil)
	return bestPath, best
}
