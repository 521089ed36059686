package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/tools"
)

// ExecutePolicy says which tools POST /api/chat/tools/{name}/execute may
// run. A direct call runs without a confirm card, since the user asked for
// it by pressing a button in the host's UI; the policy bounds what such a
// button may do. The zero value is ExecuteReadAndMutate.
type ExecutePolicy int

// Execute policies, by the tools.Effect they allow.
const (
	// ExecuteReadAndMutate runs Read and Mutate tools and refuses
	// Destructive ones: the default.
	ExecuteReadAndMutate ExecutePolicy = iota
	// ExecuteReadOnly runs only Read tools.
	ExecuteReadOnly
	// ExecuteAll runs every tool the user may use, Destructive ones
	// included. Choose it only when the host's UI confirms destructive
	// actions itself.
	ExecuteAll
)

func (p ExecutePolicy) valid() bool { return p >= ExecuteReadAndMutate && p <= ExecuteAll }

// Allows reports whether p lets a tool with effect e run directly. An
// empty effect is Read.
func (p ExecutePolicy) Allows(e tools.Effect) bool {
	switch e {
	case "", tools.Read:
		return p.valid()
	case tools.Mutate:
		return p == ExecuteReadAndMutate || p == ExecuteAll
	default:
		return p == ExecuteAll
	}
}

// effectOf is the tool's effect with the empty default spelled out.
func effectOf(s tools.Spec) tools.Effect {
	if s.Effect == "" {
		return tools.Read
	}
	return s.Effect
}

// ExecuteRequest is the body of POST /api/chat/tools/{name}/execute.
type ExecuteRequest struct {
	Args     json.RawMessage `json:"args,omitempty"`
	ThreadID string          `json:"thread_id,omitempty"`
	Page     string          `json:"page,omitempty"`
}

// executeTool runs a tool for a host UI and answers with the result
// envelope ({"ok", "summary", "data", "error"}); a tool failure is a 200
// with ok false, a tool the user may not use is 404, and one whose effect
// Config.Execute does not allow is 403 and never runs.
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
	specs, err := h.eng.Tools(r.Context(), u, req.Page)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// A tool not listed is left to ExecuteTool, the one gate that answers
	// 404 for it.
	if i := slices.IndexFunc(specs, func(s tools.Spec) bool { return s.Name == name }); i >= 0 {
		if eff := effectOf(specs[i]); !h.cfg.Execute.Allows(eff) {
			h.cfg.Logger.Info("httpapi: direct execution refused by Config.Execute", "tool", name, "effect", eff, "user", u.ID)
			h.refuse(w, r, http.StatusForbidden, assistant.CodeForbidden,
				"Direct execution of the tool "+quoteName(name)+" is not allowed.")
			return
		}
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
