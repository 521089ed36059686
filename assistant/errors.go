package assistant

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrorCode is the stable, user-safe classification of a failure. It is what
// an error block carries in ErrorCode and what httpapi maps to an HTTP status.
type ErrorCode string

// Error codes.
const (
	CodeInvalidRequest   ErrorCode = "invalid_request"    // malformed or empty request
	CodeTooLarge         ErrorCode = "message_too_large"  // message over Config.MaxMessageBytes
	CodeUnauthenticated  ErrorCode = "unauthenticated"    // no user (set by hosts and httpapi)
	CodeForbidden        ErrorCode = "forbidden"          // the Authorizer refused
	CodeNotFound         ErrorCode = "not_found"          // no such thread (or approval) visible to this user
	CodeConflict         ErrorCode = "conflict"           // an approval or pending call already decided, expired, or not of this thread
	CodeQuotaExceeded    ErrorCode = "quota_exceeded"     // the user's token budget for a period is used up
	CodeSpendCapExceeded ErrorCode = "spend_cap_exceeded" // the rolling spend cap on the model connection is reached
	CodeTooManyTurns     ErrorCode = "too_many_turns"     // the user already has Config.MaxTurnsPerUser turns running
	CodeModelBusy        ErrorCode = "model_busy"         // the model provider is rate limiting
	CodeModelTimeout     ErrorCode = "model_timeout"      // the model did not answer in time
	CodeModelUnavailable ErrorCode = "model_unavailable"  // the model provider failed
	CodeCancelled        ErrorCode = "cancelled"          // the turn was cancelled
	CodeUnsupported      ErrorCode = "unsupported"        // the Engine's Store (or another part) cannot do this
	CodeInternal         ErrorCode = "internal"           // anything else; details are logged only
)

// Code sentinels: errors.Is(err, ErrNotFound) holds for an *Error with
// CodeNotFound.
var (
	ErrInvalidRequest   = errors.New("invalid request")
	ErrTooLarge         = errors.New("message too large")
	ErrUnauthenticated  = errors.New("unauthenticated")
	ErrForbidden        = errors.New("forbidden")
	ErrNotFound         = errors.New("not found")
	ErrConflict         = errors.New("conflict")
	ErrQuotaExceeded    = errors.New("quota exceeded")
	ErrSpendCapExceeded = errors.New("spend cap exceeded")
	ErrTooManyTurns     = errors.New("too many turns")
	ErrModelBusy        = errors.New("model busy")
	ErrModelTimeout     = errors.New("model timeout")
	ErrModelUnavailable = errors.New("model unavailable")
	ErrCancelled        = errors.New("cancelled")
	ErrUnsupported      = errors.ErrUnsupported
	ErrInternal         = errors.New("internal error")
)

var codeSentinels = map[ErrorCode]error{
	CodeInvalidRequest: ErrInvalidRequest, CodeTooLarge: ErrTooLarge,
	CodeUnauthenticated: ErrUnauthenticated, CodeForbidden: ErrForbidden,
	CodeNotFound: ErrNotFound, CodeConflict: ErrConflict, CodeQuotaExceeded: ErrQuotaExceeded, CodeSpendCapExceeded: ErrSpendCapExceeded, CodeTooManyTurns: ErrTooManyTurns, CodeModelBusy: ErrModelBusy, CodeModelTimeout: ErrModelTimeout,
	CodeModelUnavailable: ErrModelUnavailable, CodeCancelled: ErrCancelled, CodeUnsupported: ErrUnsupported, CodeInternal: ErrInternal,
}

// safeMessages are the only texts an error block shows a user.
var safeMessages = map[ErrorCode]string{
	CodeInvalidRequest:   "The request is not valid.",
	CodeTooLarge:         "The message is too long.",
	CodeUnauthenticated:  "Please sign in to use the assistant.",
	CodeForbidden:        "You are not allowed to do that.",
	CodeNotFound:         "That conversation does not exist.",
	CodeConflict:         "That request was already handled or is no longer valid.",
	CodeQuotaExceeded:    "You have used your assistant allowance for now. Please try again later.",
	CodeSpendCapExceeded: "The assistant has reached its usage limit for now. Please try again in a few minutes.",
	CodeTooManyTurns:     "You already have several answers in progress. Please wait for one to finish.",
	CodeModelBusy:        "The assistant is busy right now. Please try again in a moment.",
	CodeModelTimeout:     "The assistant took too long to answer. Please try again.",
	CodeModelUnavailable: "The assistant is unavailable right now. Please try again later.",
	CodeCancelled:        "The answer was stopped.",
	CodeUnsupported:      "That is not available here.",
	CodeInternal:         "Something went wrong. Please try again.",
}

// SafeMessage returns the user-facing text for code.
func SafeMessage(code ErrorCode) string {
	if m, ok := safeMessages[code]; ok {
		return m
	}
	return safeMessages[CodeInternal]
}

// Error is the Engine's one wrapper for failures. Code is safe to show; Err
// is the cause, for logs only. Only the Engine wraps, and only once.
type Error struct {
	Code ErrorCode
	Op   string // what the Engine was doing, e.g. "resolve thread"
	Err  error  // the cause; may be nil
	// Message, when set, is shown instead of SafeMessage(Code). The Engine
	// sets it only to text built for the user (a quota refusal naming
	// when the budget resets), never from a cause.
	Message string
}

// UserMessage is the text a user may see for e.
func (e *Error) UserMessage() string {
	if e.Message != "" {
		return e.Message
	}
	return SafeMessage(e.Code)
}

// Error describes the failure for logs; it may hold the cause's text.
func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("assistant: %s: %s", e.Op, e.Code)
	}
	return fmt.Sprintf("assistant: %s: %s: %v", e.Op, e.Code, e.Err)
}

// Unwrap returns the code's sentinel and the cause, so errors.Is matches
// both ErrNotFound and, say, store.ErrNotFound.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s, ok := codeSentinels[e.Code]; ok {
		errs = append(errs, s)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Code returns the ErrorCode of err: the Code of the first *Error in its
// chain, the code whose sentinel err matches, "" for nil, otherwise
// CodeInternal.
func Code(err error) ErrorCode {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	for c, s := range codeSentinels {
		if errors.Is(err, s) {
			return c
		}
	}
	return CodeInternal
}

func wrap(code ErrorCode, op string, err error) *Error { return &Error{Code: code, Op: op, Err: err} }

// invalidRequest is CodeInvalidRequest with what is wrong, which is safe to
// show: it names a field, never echoes input.
func invalidRequest(op, what string) *Error {
	return &Error{Code: CodeInvalidRequest, Op: op, Err: errors.New(what), Message: "The request is not valid: " + what + "."}
}

// validID reports whether id can name a stored row: not empty, at most 128
// bytes, valid UTF-8 and free of NUL. Anything else is simply not found.
func validID(id string) bool {
	return id != "" && len(id) <= 128 && utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}
