package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/assistant"
)

// maxEchoBytes caps any name taken from a request and shown back in an
// error message, so a refusal never repeats large input.
const maxEchoBytes = 64

// jsonBody refuses, with 415, a request that carries a body not declared
// as Content-Type: application/json (parameters such as charset=utf-8
// allowed). A browser sends HTML forms and text/plain posts cross-site
// without a preflight; refusing them keeps a cookie-authenticated host safe
// even where the cross-origin check cannot tell. A request with no body
// (a DELETE, a cancel) needs no Content-Type.
func (h *Handler) jsonBody(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 { // -1 is a body of unknown length
			next(w, r)
			return
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" || !isUTF8Charset(params["charset"]) {
			h.cfg.Logger.Debug("httpapi: unsupported media type", "path", r.URL.Path, "content_type", clip(r.Header.Get("Content-Type"), maxEchoBytes))
			closeUnread(w, r)
			h.refuse(w, r, http.StatusUnsupportedMediaType, codeUnsupportedMediaType,
				"The request body must be JSON, sent with Content-Type: application/json.")
			return
		}
		next(w, r)
	}
}

// isUTF8Charset reports whether a charset parameter allows a JSON body:
// absent, or UTF-8, the only encoding JSON has (RFC 8259).
func isUTF8Charset(cs string) bool {
	return cs == "" || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// decode reads exactly one JSON value, bounded by MaxBodyBytes, into v,
// refusing fields v does not have. On failure it has answered the request
// (400 naming what is wrong, or 413 for a body too large) and reports
// false.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	return h.decodeBody(w, r, v, false)
}

// decodeOptional is decode for a route whose body may be left out: no
// body, or only white space, leaves v as it is and reports true.
func (h *Handler) decodeOptional(w http.ResponseWriter, r *http.Request, v any) bool {
	return h.decodeBody(w, r, v, true)
}

func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	body, ok := h.body(w, r, h.cfg.MaxBodyBytes)
	if !ok {
		return false
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if optional && errors.Is(err, io.EOF) { // nothing but white space, a chunked empty body included
		return true
	}
	if err == nil {
		// Anything after the value but white space is refused, including
		// a stray '}' that dec.More would not report.
		if _, err = dec.Token(); err == io.EOF {
			return true
		} else if err == nil {
			err = errTrailingData
		}
	}
	if h.overLimit(w, r, body) {
		return false
	}
	h.invalid(w, r, describeJSONError(err))
	return false
}

var errTrailingData = errors.New("trailing data after the JSON body")

// body bounds what reading r's body may make the Handler hold, alike on
// every route: at most MaxBodyBytes read for any one JSON value it decodes
// and keeps, and total bytes in all. A route that decodes its body as one
// value reads at most MaxBodyBytes; the AI SDK route, whose client sends
// the whole conversation, reads more (total) but keeps one field or
// message at a time, calling next before each: each is bounded as a whole
// body of the other routes is. A body declared larger than
// total is refused with 413 before anything is read, and ok is false; a
// read past either bound fails, and overLimit answers it.
func (h *Handler) body(w http.ResponseWriter, r *http.Request, total int64) (body *boundedBody, ok bool) {
	body = &boundedBody{total: total, value: min(h.cfg.MaxBodyBytes, total)}
	if r.ContentLength > total {
		body.over = total
		h.overLimit(w, r, body)
		return nil, false
	}
	body.r = http.MaxBytesReader(w, r.Body, total) // a read past total closes the connection
	body.left = body.value
	return body, true
}

// boundedBody is a request body whose reads fail past its bounds (see
// Handler.body).
type boundedBody struct {
	r            io.Reader // the body, cut at total
	total, value int64
	left         int64 // what the value being read may still read
	over         int64 // the bound a read went past (total or value), 0 while none
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// A value exactly at its bound is no error: only a byte past it is.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n == 0 {
			if _, over := errors.AsType[*http.MaxBytesError](err); over {
				b.over = b.total
			}
			return 0, err
		}
		b.over = b.value
		return 0, &http.MaxBytesError{Limit: b.value}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if _, over := errors.AsType[*http.MaxBytesError](err); over {
		b.over = b.total
	}
	return n, err
}

// next starts the next value at the decoder's position: from there, the
// value may span the per-value bound. buffered is what the decoder has
// read ahead of its position (json.Decoder.Buffered), which counts.
func (b *boundedBody) next(buffered io.Reader) {
	b.left = b.value
	if l, ok := buffered.(interface{ Len() int }); ok {
		b.left -= int64(l.Len())
	}
}

// overLimit answers 413 and reports true if a read of body went past one
// of its bounds, naming the bound.
func (h *Handler) overLimit(w http.ResponseWriter, r *http.Request, body *boundedBody) bool {
	if body.over == 0 {
		return false
	}
	h.cfg.Logger.Debug("httpapi: body too large", "path", r.URL.Path, "limit", body.over)
	msg := fmt.Sprintf("The request body is larger than %d bytes.", body.over)
	if body.over < body.total {
		msg = fmt.Sprintf("A field or message of the request is larger than %d bytes.", body.over)
	}
	h.refuse(w, r, http.StatusRequestEntityTooLarge, assistant.CodeTooLarge, msg)
	return true
}

// describeJSONError says what is wrong with a body that did not decode,
// in terms a developer can act on: the field, the type it needs, or where
// the syntax broke. It repeats no input beyond a clipped field name.
func describeJSONError(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		// Value is the JSON type, followed for a number by its literal,
		// which is input: keep only the type.
		got, _, _ := strings.Cut(te.Value, " ")
		if te.Field == "" {
			return "the body must be a JSON " + jsonKind(te.Type) + ", not " + article(got)
		}
		return clip(te.Field, maxEchoBytes) + " must be " + article(jsonKind(te.Type)) + ", not " + article(got)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return "malformed JSON at byte " + strconv.FormatInt(se.Offset, 10)
	}
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty; send a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON body ends early"
	case errors.Is(err, errTrailingData):
		return err.Error()
	}
	// encoding/json reports an unknown field only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			name = n
		}
		return "unknown field " + quoteName(name)
	}
	return "the body is not valid JSON"
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "value"
}

func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// quoteName quotes a name taken from input for an error message, clipped
// to maxEchoBytes.
func quoteName(s string) string { return strconv.Quote(clip(s, maxEchoBytes)) }

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
