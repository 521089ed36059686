package store

import (
	"context"
	"time"
)

// ModelPreference is the model a user chose last: the connection it belongs
// to and the model's name on that connection.
type ModelPreference struct {
	UserID     string
	Connection string
	Model      string
	UpdatedAt  time.Time
}

// Preferences is implemented by stores that keep each user's model choice,
// so it follows the user across devices and instances. It is optional: the
// Engine checks for it with a type assertion and, without it, uses the
// connection's default model.
type Preferences interface {
	// ModelPreference returns the user's stored choice, or ErrNotFound.
	ModelPreference(ctx context.Context, userID string) (ModelPreference, error)
	// SetModelPreference stores p for p.UserID, replacing any earlier
	// choice; a zero UpdatedAt is set to now. ErrInvalid for an empty
	// UserID, Connection or Model.
	SetModelPreference(ctx context.Context, p ModelPreference) error
	// ClearModelPreference removes the user's choice; with none stored it
	// succeeds and changes nothing.
	ClearModelPreference(ctx context.Context, userID string) error
}
