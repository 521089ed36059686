package store

import "context"

// AutoApprovals is implemented by stores that keep each user's standing
// approvals: the Mutate and Destructive tools a user chose to run without
// an approval card. A grant is a tool's name or "category:<name>"; the
// Engine decides which grants it honours (see assistant.Engine.
// SetAutoApprovals). It is optional: the Engine checks for it with a type
// assertion and, without it, keeps no standing approvals.
type AutoApprovals interface {
	// AutoApprovals returns the user's grants, sorted and without
	// repeats; none (a nil slice and a nil error) when the user has none.
	AutoApprovals(ctx context.Context, userID string) ([]string, error)
	// SetAutoApprovals replaces the user's grants with grants, all at once:
	// a reader sees the old list or the new one, never a mix. An empty
	// list clears them. ErrInvalid for an empty userID or an empty grant,
	// and nothing is written.
	SetAutoApprovals(ctx context.Context, userID string, grants []string) error
}
