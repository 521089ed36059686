package tools

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/blocks"
)

// Errorf returns a failed Result with the given code and a formatted
// message. The message reaches the model and the user: keep it short and
// free of internals.
func Errorf(code ErrorCode, format string, args ...any) Result {
	return Fail(code, fmt.Sprintf(format, args...))
}

// WithHint returns r with a hint telling the model what to do instead. It
// does nothing to a successful Result.
func (r Result) WithHint(hint string) Result {
	if r.Error != nil {
		e := *r.Error
		e.Hint = hint
		r.Error = &e
	}
	return r
}

// WithRetry returns r marked as worth retrying unchanged later (a busy
// backend, a lock). It does nothing to a successful Result.
func (r Result) WithRetry() Result {
	if r.Error != nil {
		e := *r.Error
		e.Retryable = true
		r.Error = &e
	}
	return r
}

// WithUI returns r with a block to show the user; the model never sees it.
func (r Result) WithUI(b blocks.Block) Result {
	r.UI = &b
	return r
}

// MarshalForModel returns the compact JSON the model sees for r, the
// content of the tool message:
//
//	{"ok":true,"summary":"...","data":...}
//	{"ok":false,"error":{"code":"INVALID_ARGS","message":"...","retryable":true}}
//
// r is normalized as [Invoke] does first. UI is never included. If Data
// cannot be encoded, the model gets an INTERNAL error instead. HTML
// characters are not escaped: the model reads them literally.
func MarshalForModel(r Result) []byte {
	r = normalize(r)
	b, err := encodeCompact(r)
	if err != nil {
		b, _ = encodeCompact(Result{Summary: r.Summary, Error: &ToolError{Code: CodeInternal, Message: "the tool result could not be encoded"}})
	}
	return b
}

func encodeCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
