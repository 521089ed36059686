package store

import (
	"context"
	"time"
)

// SystemPrompt is a stored set of operator instructions for the assistant.
// At most one is active; the Engine adds the active one to every turn's
// system prompt.
type SystemPrompt struct {
	ID        string
	Name      string // a label for operators
	Text      string // the instructions; may hold {assistant_name} and {organization}
	Active    bool
	CreatedBy string // the user who created it
	CreatedAt time.Time
	UpdatedAt time.Time // set by CreateSystemPrompt and on every activation change
}

// SystemPrompts keeps operator instructions. It is optional: a Store that
// implements it (memstore and sqlstore do) lets operators change the system
// prompt at run time; the Engine checks with a type assertion.
//
// At most one prompt is active at any time, across processes: activation
// is atomic, and of concurrent activations exactly one prompt ends active.
type SystemPrompts interface {
	// CreateSystemPrompt inserts p, inactive whatever p.Active says (p.Active
	// is set to false). An empty ID is filled with a new UUID, zero times are
	// set to now. ErrInvalid for empty Text; ErrConflict if the ID is taken.
	CreateSystemPrompt(ctx context.Context, p *SystemPrompt) error
	// GetSystemPrompt returns one prompt or ErrNotFound.
	GetSystemPrompt(ctx context.Context, id string) (SystemPrompt, error)
	// ListSystemPrompts returns every prompt, newest first (by CreatedAt,
	// then ID).
	ListSystemPrompts(ctx context.Context) ([]SystemPrompt, error)
	// ActivateSystemPrompt makes id the one active prompt, deactivating any
	// other in the same transaction, and sets UpdatedAt on the prompts it
	// changes. Activating the active prompt succeeds and changes nothing.
	// ErrNotFound if there is no such prompt (and nothing changes).
	ActivateSystemPrompt(ctx context.Context, id string) error
	// DeactivateSystemPrompts leaves no prompt active; with none active it
	// succeeds and changes nothing.
	DeactivateSystemPrompts(ctx context.Context) error
	// ActiveSystemPrompt returns the active prompt, or ErrNotFound when
	// none is.
	ActiveSystemPrompt(ctx context.Context) (SystemPrompt, error)
	// DeleteSystemPrompt removes a prompt, active or not (deleting the
	// active one leaves none active). ErrNotFound if there is none.
	DeleteSystemPrompt(ctx context.Context, id string) error
}
