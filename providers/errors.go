package providers

import (
	"errors"
	"fmt"
	"time"
)

// Category classifies a provider failure. Only the category, never the
// provider's own text, may reach an end user.
type Category string

// Failure categories.
const (
	CategoryAuth        Category = "auth"        // bad or missing credentials (401, 403)
	CategoryRateLimit   Category = "rate_limit"  // 429
	CategoryNotFound    Category = "not_found"   // unknown model or route (404)
	CategoryBadRequest  Category = "bad_request" // the request was rejected (400, 413, 422)
	CategoryTimeout     Category = "timeout"     // deadline exceeded
	CategoryConnection  Category = "connection"  // network failure, dropped or malformed stream
	CategoryUnavailable Category = "unavailable" // 5xx, overloaded
	CategoryCanceled    Category = "canceled"    // the caller's context was canceled
)

// Sentinels, one per category; errors.Is(err, ErrRateLimit) holds for an
// *Error of that category.
var (
	ErrAuth        = errors.New("providers: authentication failed")
	ErrRateLimit   = errors.New("providers: rate limited")
	ErrNotFound    = errors.New("providers: model or endpoint not found")
	ErrBadRequest  = errors.New("providers: request rejected")
	ErrTimeout     = errors.New("providers: timed out")
	ErrConnection  = errors.New("providers: connection failed")
	ErrUnavailable = errors.New("providers: service unavailable")
	ErrCanceled    = errors.New("providers: canceled")
)

var sentinels = map[Category]error{
	CategoryAuth: ErrAuth, CategoryRateLimit: ErrRateLimit, CategoryNotFound: ErrNotFound,
	CategoryBadRequest: ErrBadRequest, CategoryTimeout: ErrTimeout, CategoryConnection: ErrConnection,
	CategoryUnavailable: ErrUnavailable, CategoryCanceled: ErrCanceled,
}

// Error is a classified provider failure. Err holds the underlying cause,
// which may contain provider text: log it, never show it to a user.
type Error struct {
	Category   Category
	StatusCode int           // HTTP status when there was one
	RetryAfter time.Duration // from a Retry-After header, when present
	Err        error
}

// Error describes the failure for logs; it may hold the cause's text.
func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("provider %s (HTTP %d): %v", e.Category, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("provider %s: %v", e.Category, e.Err)
}

// Unwrap returns the category sentinel and the cause.
func (e *Error) Unwrap() []error {
	if s, ok := sentinels[e.Category]; ok {
		return []error{s, e.Err}
	}
	return []error{e.Err}
}

// CategoryOf returns the category of err: the Category of an *Error in its
// chain, CategoryCanceled or CategoryTimeout for context errors, otherwise
// CategoryConnection.
func CategoryOf(err error) Category {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Category
	}
	for c, s := range sentinels {
		if errors.Is(err, s) {
			return c
		}
	}
	return categoryOfContext(err)
}

// CategoryForStatus maps an HTTP status code to a category.
func CategoryForStatus(status int) Category {
	switch {
	case status == 401 || status == 403:
		return CategoryAuth
	case status == 404:
		return CategoryNotFound
	case status == 408:
		return CategoryTimeout
	case status == 429:
		return CategoryRateLimit
	case status >= 500:
		return CategoryUnavailable
	default:
		return CategoryBadRequest
	}
}
