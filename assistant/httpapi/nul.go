package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// A U+0000 in a request field is refused with 400 naming the field: some
// stores (PostgreSQL text) cannot hold it. The Engine refuses one too and
// names the field in its own terms ("tool result output"); checking here
// first names it in the wire spelling the client sent, such as
// tool_results[1].id or form.values.<key>.

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// rawHasNUL reports whether any string (key or value) inside a JSON value
// holds a U+0000. JSON can only carry one escaped, so values without the
// escape are passed over without decoding.
func rawHasNUL(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // the value decoded once already; nothing more to find
		}
		if s, ok := tok.(string); ok && hasNUL(s) {
			return true
		}
	}
}

// nulField names the first field of req holding a U+0000, or "".
func (req *StreamRequest) nulField() string {
	for _, f := range [...]struct{ name, v string }{
		{"thread_id", req.ThreadID}, {"message", req.Message}, {"page", req.Page}, {"page_context", req.PageContext},
		{"replaces", req.Replaces}, {"model", req.Model},
	} {
		if hasNUL(f.v) {
			return f.name
		}
	}
	if d := req.Decision; d != nil && hasNUL(d.Token) {
		return "decision.token"
	}
	if d := req.Decision; d != nil && hasNUL(d.Reason) {
		return "decision.reason"
	}
	for i, r := range req.ToolResults {
		if hasNUL(r.ID) {
			return "tool_results[" + strconv.Itoa(i) + "].id"
		}
		if rawHasNUL(r.Output) {
			return "tool_results[" + strconv.Itoa(i) + "].output"
		}
	}
	if f := req.Form; f != nil {
		if hasNUL(f.ID) {
			return "form.id"
		}
		for _, k := range slices.Sorted(maps.Keys(f.Values)) {
			if hasNUL(k) {
				return "a key of form.values"
			}
			if rawHasNUL(f.Values[k]) {
				return "form.values." + clip(k, maxEchoBytes)
			}
		}
	}
	return ""
}

// nulField names the first field of req holding a U+0000, or "".
func (req *ExecuteRequest) nulField() string {
	switch {
	case hasNUL(req.ThreadID):
		return "thread_id"
	case hasNUL(req.Page):
		return "page"
	case rawHasNUL(req.Args):
		return "args"
	}
	return ""
}

// pathNames are the path wildcards as an error message names them.
var pathNames = map[string]string{"id": "the thread id in the path", "name": "the tool name in the path", "user_id": "the user id in the path",
	"message_id": "the message id in the path", "prompt_id": "the prompt id in the path"}

// pathValue returns the path wildcard name, or answers 400 and reports
// false if it holds a U+0000 (a %00 in the URL).
func (h *Handler) pathValue(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	v := r.PathValue(name)
	if hasNUL(v) {
		h.invalid(w, r, pathNames[name]+" contains a NUL character")
		return "", false
	}
	return v, true
}
