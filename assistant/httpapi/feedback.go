package httpapi

import (
	"net/http"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/store"
)

// feedbackJSON is one user's rating of one assistant message.
type feedbackJSON struct {
	MessageID string    `json:"message_id"`
	UserID    string    `json:"user_id"`
	Rating    string    `json:"rating"`
	Category  string    `json:"category,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func toFeedbackJSON(f store.Feedback) feedbackJSON {
	return feedbackJSON{MessageID: f.MessageID, UserID: f.UserID, Rating: string(f.Rating), Category: f.Category,
		Comment: f.Comment, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// messagePath returns the thread and message ids of a feedback route's
// path, or answers 400 and reports false if either holds a U+0000.
func (h *Handler) messagePath(w http.ResponseWriter, r *http.Request) (thread, msg string, ok bool) {
	if thread, ok = h.pathValue(w, r, "id"); !ok {
		return "", "", false
	}
	if msg, ok = h.pathValue(w, r, "message_id"); !ok {
		return "", "", false
	}
	return thread, msg, true
}

// setFeedback takes {"rating": "up"|"down", "category"?, "comment"?} and
// answers {"feedback"}: the rating as stored, replacing an earlier one.
func (h *Handler) setFeedback(w http.ResponseWriter, r *http.Request, u parley.User) {
	thread, msg, ok := h.messagePath(w, r)
	if !ok {
		return
	}
	var body struct {
		Rating   string `json:"rating"`
		Category string `json:"category"`
		Comment  string `json:"comment"`
	}
	if !h.decode(w, r, &body) {
		return
	}
	f, err := h.eng.SetFeedback(r.Context(), u, thread, msg, assistant.FeedbackInput{
		Rating: store.Rating(body.Rating), Category: body.Category, Comment: body.Comment,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"feedback": toFeedbackJSON(f)})
}

func (h *Handler) deleteFeedback(w http.ResponseWriter, r *http.Request, u parley.User) {
	thread, msg, ok := h.messagePath(w, r)
	if !ok {
		return
	}
	if err := h.eng.DeleteFeedback(r.Context(), u, thread, msg); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
