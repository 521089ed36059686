package httpapi

import (
	"net/http"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/store"
)

// The stored system prompts, for operators (ManagePrompts): every route
// answers 403 to other users, and 404 when the Store does not keep prompts
// (it does not implement store.SystemPrompts). The Engine owns the rules:
// who may, the limits, the audit record.

// promptJSON is a stored system prompt as the API shows it.
type promptJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Text      string    `json:"text"`
	Active    bool      `json:"active"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func toPromptJSON(p store.SystemPrompt) promptJSON {
	return promptJSON{ID: p.ID, Name: p.Name, Text: p.Text, Active: p.Active, CreatedBy: p.CreatedBy,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// listPrompts answers {"prompts": [...]}, newest first.
func (h *Handler) listPrompts(w http.ResponseWriter, r *http.Request, u parley.User) {
	ps, err := h.eng.SystemPrompts(r.Context(), u)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]promptJSON, len(ps))
	for i, p := range ps {
		out[i] = toPromptJSON(p)
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"prompts": out})
}

// createPrompt takes {"name"?, "text"} and answers 201 {"prompt"}: the
// prompt as stored, inactive.
func (h *Handler) createPrompt(w http.ResponseWriter, r *http.Request, u parley.User) {
	var body struct {
		Name string  `json:"name"`
		Text *string `json:"text"`
	}
	if !h.decode(w, r, &body) {
		return
	}
	switch {
	case body.Text == nil:
		h.invalid(w, r, "text is required")
		return
	case hasNUL(body.Name):
		h.invalid(w, r, "name contains a NUL character")
		return
	case hasNUL(*body.Text):
		h.invalid(w, r, "text contains a NUL character")
		return
	}
	p, err := h.eng.CreateSystemPrompt(r.Context(), u, body.Name, *body.Text)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusCreated, map[string]any{"prompt": toPromptJSON(p)})
}

// activatePrompt takes no body (or {}) and answers 204: the prompt is the
// one active from the next turn on. The Engine does not hand back the
// prompt; GET /api/chat/prompts shows it.
func (h *Handler) activatePrompt(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "prompt_id")
	if !ok || !h.decodeOptional(w, r, &struct{}{}) {
		return
	}
	if id == "" {
		// The mux never matches an empty segment, but to the Engine "" means
		// deactivate every prompt: never let a path say that.
		h.writeError(w, r, assistant.CodeNotFound)
		return
	}
	if err := h.eng.ActivateSystemPrompt(r.Context(), u, id); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deactivatePrompts takes no body (or {}) and answers 204: no stored
// prompt is active, so assistant.Config.CustomInstructions applies again.
func (h *Handler) deactivatePrompts(w http.ResponseWriter, r *http.Request, u parley.User) {
	if !h.decodeOptional(w, r, &struct{}{}) {
		return
	}
	if err := h.eng.DeactivateSystemPrompts(r.Context(), u); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deletePrompt answers 204; deleting the active prompt leaves none active.
func (h *Handler) deletePrompt(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "prompt_id")
	if !ok {
		return
	}
	if err := h.eng.DeleteSystemPrompt(r.Context(), u, id); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
