package store

import (
	"context"
	"time"
)

// Rating is a user's verdict on an assistant message.
type Rating string

// Ratings.
const (
	RatingUp   Rating = "up"
	RatingDown Rating = "down"
)

// Valid reports whether r is RatingUp or RatingDown.
func (r Rating) Valid() bool { return r == RatingUp || r == RatingDown }

// Feedback is one user's rating of one assistant message, with an optional
// category and comment. There is at most one per (message, user); setting
// it again changes it.
type Feedback struct {
	MessageID string // the assistant message rated
	ThreadID  string // the message's thread, filled by the store from the message
	UserID    string // who rated it
	Rating    Rating
	Category  string // optional, e.g. "inaccurate", "unhelpful", "harmful"
	Comment   string // optional free text
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FeedbackStore keeps feedback on assistant messages. It is optional: a
// Store that implements it (memstore and sqlstore do) lets the Engine take
// feedback; the Engine checks with a type assertion.
//
// Implementations must be safe for concurrent use; two SetFeedback calls
// for the same (message, user) leave exactly one row, the later write.
type FeedbackStore interface {
	// SetFeedback inserts or replaces the feedback of f.UserID on
	// f.MessageID, filling f.ThreadID from the message and the times: a new
	// row gets CreatedAt = UpdatedAt = now; a replaced row keeps its
	// CreatedAt. It returns ErrNotFound if there is no such message, and
	// ErrInvalid for an empty MessageID or UserID, a message that is not
	// the assistant's, or a Rating other than RatingUp or RatingDown.
	SetFeedback(ctx context.Context, f *Feedback) error
	// DeleteFeedback removes userID's feedback on messageID; ErrNotFound if
	// there is none.
	DeleteFeedback(ctx context.Context, messageID, userID string) error
	// ListFeedback returns the feedback on the messages of a thread, oldest
	// first (by CreatedAt, then MessageID, then UserID). Feedback goes with
	// its thread when the thread is deleted.
	ListFeedback(ctx context.Context, threadID string) ([]Feedback, error)
}
