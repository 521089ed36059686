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
	if r.ContentLength > h.cfg.MaxBodyBytes {
		h.tooLarge(w, r)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
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
	if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
		h.tooLarge(w, r)
		return false
	}
	h.invalid(w, r, describeJSONError(err))
	return false
}

var errTrailingData = errors.New("trailing data after the JSON body")

func (h *Handler) tooLarge(w http.ResponseWriter, r *http.Request) {
	h.cfg.Logger.Debug("httpapi: body too large", "path", r.URL.Path, "limit", h.cfg.MaxBodyBytes)
	h.refuse(w, r, http.StatusRequestEntityTooLarge, assistant.CodeTooLarge,
		fmt.Sprintf("The request body is larger than %d bytes.", h.cfg.MaxBodyBytes))
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
