package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/store"
)

// AuditFeedback is the audit kind of feedback given, changed or withdrawn;
// Data {"message", "rating", "category"} (the comment stays in the store).
const AuditFeedback = "feedback.set"

// Limits on feedback text.
const (
	MaxFeedbackCategoryBytes = 64
	MaxFeedbackCommentBytes  = 4 << 10
)

// FeedbackInput is a user's rating of an assistant message.
type FeedbackInput struct {
	Rating   store.Rating // store.RatingUp or store.RatingDown
	Category string       // optional: one line, at most MaxFeedbackCategoryBytes
	Comment  string       // optional: at most MaxFeedbackCommentBytes
}

// SetFeedback records u's rating of an assistant message of u's thread,
// replacing any earlier one: one per user per message. The category is
// made one line; the comment keeps its lines. It is audited without the
// comment. A message that is not an assistant message of that thread is
// CodeNotFound, as is a store without feedback (store.FeedbackStore).
func (e *Engine) SetFeedback(ctx context.Context, u parley.User, threadID, messageID string, in FeedbackInput) (store.Feedback, error) {
	invalid := func(what string) error { return invalidRequest("set feedback", what) }
	comment := strings.TrimSpace(strings.ToValidUTF8(in.Comment, "\uFFFD"))
	switch {
	case !in.Rating.Valid():
		return store.Feedback{}, invalid(`rating must be "up" or "down"`)
	case strings.IndexByte(in.Category, 0) >= 0 || strings.IndexByte(in.Comment, 0) >= 0:
		return store.Feedback{}, invalid("feedback contains a NUL character")
	case len(comment) > MaxFeedbackCommentBytes:
		return store.Feedback{}, &Error{Code: CodeTooLarge, Op: "set feedback", Err: errors.New("comment too long"),
			Message: fmt.Sprintf("The comment is too long: at most %d bytes.", MaxFeedbackCommentBytes)}
	}
	fs, m, err := e.feedbackTarget(ctx, u, threadID, messageID)
	if err != nil {
		return store.Feedback{}, err
	}
	if m.SupersededAt != nil {
		return store.Feedback{}, conflict("set feedback", "That answer was replaced by an edit or a regeneration.", errors.New("superseded message"))
	}
	// A credential pasted into a comment is not kept (C9).
	comment, _ = guard.Scrub(comment)
	category, _ := guard.Scrub(plainLine(strings.ToValidUTF8(in.Category, "\uFFFD"), MaxFeedbackCategoryBytes))
	f := store.Feedback{MessageID: m.ID, UserID: u.ID, Rating: in.Rating, Category: category, Comment: comment}
	if err := fs.SetFeedback(ctx, &f); err != nil {
		return store.Feedback{}, e.storeErr("set feedback", err)
	}
	e.auditFeedback(ctx, u, f.ThreadID, f.MessageID, string(f.Rating), f.Category)
	return f, nil
}

// DeleteFeedback withdraws u's rating of a message of u's thread;
// CodeNotFound if there is none.
func (e *Engine) DeleteFeedback(ctx context.Context, u parley.User, threadID, messageID string) error {
	fs, m, err := e.feedbackTarget(ctx, u, threadID, messageID)
	if err != nil {
		return err
	}
	if err := fs.DeleteFeedback(ctx, m.ID, u.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, Op: "delete feedback", Err: err, Message: "There is no rating of that answer to withdraw."}
		}
		return e.storeErr("delete feedback", err)
	}
	e.auditFeedback(ctx, u, m.ThreadID, m.ID, "", "")
	return nil
}

// Feedback returns the feedback on the messages of a thread u may read,
// oldest first. Another user's thread is an audited read, like Thread.
func (e *Engine) Feedback(ctx context.Context, u parley.User, threadID string) ([]store.Feedback, error) {
	t, err := e.thread(ctx, u, threadID, ReadThread)
	if err != nil {
		return nil, err
	}
	fs, ok := e.cfg.Store.(store.FeedbackStore)
	if !ok {
		return nil, nil // no feedback is kept
	}
	if err := e.auditRead(ctx, u, t, "feedback"); err != nil {
		return nil, err
	}
	fb, err := fs.ListFeedback(ctx, t.ID)
	if err != nil {
		return nil, wrap(CodeInternal, "list feedback", err)
	}
	return fb, nil
}

// feedbackTarget checks that u may rate messageID: an assistant message of
// u's own thread threadID.
func (e *Engine) feedbackTarget(ctx context.Context, u parley.User, threadID, messageID string) (store.FeedbackStore, store.Message, error) {
	fs, ok := e.cfg.Store.(store.FeedbackStore)
	if !ok {
		return nil, store.Message{}, &Error{Code: CodeNotFound, Op: "feedback", Err: errors.New("the Store does not implement store.FeedbackStore"),
			Message: "Feedback is not enabled."}
	}
	th, err := e.thread(ctx, u, threadID, WriteThread)
	if err != nil {
		return nil, store.Message{}, err
	}
	notFound := &Error{Code: CodeNotFound, Op: "feedback", Err: store.ErrNotFound, Message: "That message does not exist."}
	if !validID(messageID) {
		return nil, store.Message{}, notFound
	}
	m, err := e.cfg.Store.GetMessage(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) || err == nil && (m.ThreadID != th.ID || m.Role != store.RoleAssistant) {
		return nil, store.Message{}, notFound
	}
	if err != nil {
		return nil, store.Message{}, wrap(CodeInternal, "feedback", err)
	}
	return fs, m, nil
}

func (e *Engine) auditFeedback(ctx context.Context, u parley.User, threadID, messageID, rating, category string) {
	data, _ := json.Marshal(map[string]string{"message": messageID, "rating": rating, "category": category})
	ev := store.AuditEvent{Kind: AuditFeedback, ActorID: u.ID, ThreadID: threadID, Data: data}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: audit feedback", "thread", threadID, "err", err)
	}
}
