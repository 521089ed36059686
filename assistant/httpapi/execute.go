package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/tools"
)

// ExecuteRequest is the body of POST /api/chat/tools/{name}/execute.
type ExecuteRequest struct {
	Args     json.RawMessage `json:"args,omitempty"`
	ThreadID string          `json:"thread_id,omitempty"`
	Page     string          `json:"page,omitempty"`
}

// executeTool runs a tool for a host UI and answers with the result
// envelope ({"ok", "summary", "data", "error"}); a tool failure is a 200
// with ok false, a tool the user may not use is 404.
func (h *Handler) executeTool(w http.ResponseWriter, r *http.Request, u parley.User) {
	name, ok := h.pathValue(w, r, "name")
	if !ok {
		return
	}
	var req ExecuteRequest
	if !h.decode(w, r, &req) {
		return
	}
	if field := req.nulField(); field != "" {
		h.invalid(w, r, field+" contains a NUL character")
		return
	}
	res, err := h.eng.ExecuteTool(r.Context(), u, assistant.ExecuteRequest{
		Tool: name, Args: req.Args, ThreadID: req.ThreadID, Page: req.Page,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(tools.MarshalForModel(res), '\n'))
}
