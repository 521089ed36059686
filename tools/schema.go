package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v5"
)

// SchemaFor infers the JSON Schema of T's JSON encoding, the way [New]
// infers a typed tool's InputSchema. Struct fields are named by their json
// tag and described by their jsonschema tag; fields without omitempty or
// omitzero are required; unknown properties are not allowed. A pointer type
// has its element's schema. A time.Time is a string of format date-time
// (RFC 3339, with an explicit offset), as it decodes.
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time](): {Type: "string", Format: "date-time"},
	}})
	if err != nil {
		return nil, err
	}
	if s.Type == "object" && s.Properties == nil && t.Kind() == reflect.Struct {
		s.Properties = map[string]*jsonschema.Schema{} // see noArgsSchema
	}
	return json.Marshal(s)
}

// argSchema is a compiled InputSchema.
type argSchema struct {
	schema *validator.Schema
	props  []string // sorted top-level property names, for hints
}

// schemaURL names the one in-memory resource each compilation uses.
const schemaURL = "mem://parley/tool-input.json"

// compileSchema compiles raw (already checked by checkObjectSchema). $refs
// outside the document are refused: a tool schema never reads files or the
// network.
func compileSchema(raw json.RawMessage) (*argSchema, error) {
	c := validator.NewCompiler()
	c.AssertFormat = true
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("external schema %q is not allowed", u)
	}
	if err := c.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	a := &argSchema{schema: s}
	for name := range s.Properties {
		a.props = append(a.props, name)
	}
	slices.Sort(a.props)
	return a, nil
}

// argsError describes arguments that failed validation or decoding. Its
// message names the fields and is safe to show the model.
type argsError struct {
	msg  string
	hint string
}

func (e *argsError) Error() string        { return "invalid arguments: " + e.msg }
func (e *argsError) Is(target error) bool { return target == ErrInvalidArgs }

// result is the Result the model sees for e.
func (e *argsError) result() Result {
	hint := e.hint
	if hint == "" {
		hint = "fix the arguments and call the tool again"
	}
	return Result{Error: &ToolError{Code: CodeInvalidArgs, Message: e.msg, Retryable: true, Hint: hint}}
}

// maxIssues caps how many problems one message lists.
const maxIssues = 5

// check validates args and returns what the tool receives: the arguments
// with surrounding space trimmed, and {} for empty or null arguments.
func (a *argSchema) check(args json.RawMessage) (json.RawMessage, *argsError) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // the validator compares numbers exactly
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &argsError{msg: "arguments are not valid JSON: " + jsonReason(err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &argsError{msg: "arguments are not valid JSON: unexpected data after the arguments object"}
	}
	var issues []issue
	checkNumbers(v, "", &issues)
	if len(issues) == 0 {
		if err := a.validate(v); err != nil {
			var ve *validator.ValidationError
			if !errors.As(err, &ve) {
				return nil, &argsError{msg: "arguments could not be validated"}
			}
			collect(ve, v, &issues)
		}
	}
	if len(issues) == 0 {
		return args, nil
	}
	return nil, a.explain(issues)
}

// validate runs the validator, which panics on some inputs it cannot
// represent; a panic here is a problem with the arguments, not the tool.
func (a *argSchema) validate(v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return a.schema.Validate(v)
}

func jsonReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// maxExponent bounds number exponents. The validator converts numbers to
// big.Rat, which refuses (and the validator then panics on) huge exponents;
// no float64 needs more than this.
const maxExponent = 400

// checkNumbers reports numbers no Go type can hold.
func checkNumbers(v any, path string, issues *[]issue) {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || exp > maxExponent || exp < -maxExponent {
				*issues = append(*issues, issue{path, "number is out of range"})
				return
			}
		}
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			*issues = append(*issues, issue{path, "number is out of range"})
		}
	case map[string]any:
		for k, e := range v {
			checkNumbers(e, joinField(path, k), issues)
		}
	case []any:
		for i, e := range v {
			checkNumbers(e, path+"["+strconv.Itoa(i)+"]", issues)
		}
	}
}

// issue is one problem with one field. path is "" for the arguments object.
type issue struct {
	path, msg string
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// explain turns issues into one short, deterministic message.
func (a *argSchema) explain(issues []issue) *argsError {
	slices.SortFunc(issues, func(x, y issue) int {
		if c := strings.Compare(x.path, y.path); c != 0 {
			return c
		}
		return strings.Compare(x.msg, y.msg)
	})
	issues = slices.Compact(issues)
	var b strings.Builder
	unknownAtTop := false
	for i, is := range issues {
		if i == maxIssues {
			fmt.Fprintf(&b, "; and %d more", len(issues)-maxIssues)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if is.path == "" {
			b.WriteString("arguments")
		} else {
			b.WriteString(strconv.Quote(is.path))
		}
		b.WriteString(": ")
		b.WriteString(is.msg)
		if is.msg == msgUnknown && !strings.ContainsAny(is.path, ".[") {
			unknownAtTop = true
		}
	}
	e := &argsError{msg: b.String()}
	if unknownAtTop && len(a.props) > 0 {
		e.hint = "valid properties: " + strings.Join(a.props, ", ")
	} else if unknownAtTop {
		e.hint = "this tool takes no arguments; call it with {}"
	}
	return e
}

const msgUnknown = "unknown property"

// formatFixes say how to write a value of a format the model got wrong.
var formatFixes = map[string]string{
	"date-time": "write it in RFC 3339 with an explicit offset, such as 2026-11-27T14:30:00Z (UTC) or 2026-11-27T14:30:00+01:00",
	"date":      "write it as YYYY-MM-DD, such as 2026-11-27",
	"time":      "write it as HH:MM:SS with an offset, such as 14:30:00Z or 14:30:00+01:00",
}

// collect walks the validator's error tree and records its leaves.
func collect(ve *validator.ValidationError, root any, issues *[]issue) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, root, issues)
		}
		return
	}
	path := fieldPath(root, ve.InstanceLocation)
	kw := ve.KeywordLocation[strings.LastIndexByte(ve.KeywordLocation, '/')+1:]
	msg := ve.Message
	switch kw {
	case "required":
		for _, name := range quotedNames(strings.TrimPrefix(msg, "missing properties: ")) {
			*issues = append(*issues, issue{joinField(path, name), "missing required property"})
		}
		return
	case "additionalProperties", "unevaluatedProperties":
		if strings.HasSuffix(msg, " not allowed") {
			for _, name := range quotedNames(msg) {
				*issues = append(*issues, issue{joinField(path, name), msgUnknown})
			}
			return
		}
	case "type":
		msg = typeMessage(msg)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		msg, _, _ = strings.Cut(msg, " but found ")
	case "minLength", "maxLength":
		msg, _, _ = strings.Cut(msg, ", but got ")
	case "minItems":
		msg = countMessage(msg, "must have at least", "item")
	case "maxItems":
		msg = countMessage(msg, "must have at most", "item")
	case "minProperties":
		msg = countMessage(msg, "must have at least", "property")
	case "maxProperties":
		msg = countMessage(msg, "must have at most", "property")
	case "enum", "const":
		if rest, ok := strings.CutPrefix(msg, "value "); ok {
			msg = rest
		} else {
			msg = "is not an allowed value"
		}
	case "format":
		if _, f, ok := strings.Cut(msg, " is not valid "); ok {
			if names := quotedNames(f); len(names) == 1 {
				msg = "must be a valid " + names[0]
				if fix, ok := formatFixes[names[0]]; ok {
					msg += ": " + fix
				}
			}
		}
	case "pattern":
		if rest, ok := strings.CutPrefix(msg, "does not match pattern "); ok {
			msg = "must match the pattern " + rest
		}
	case "multipleOf":
		if _, m, ok := strings.Cut(msg, " not multipleOf "); ok {
			msg = "must be a multiple of " + m
		}
	case "uniqueItems":
		msg = "must not contain duplicate items"
	case "not":
		msg = "is not an allowed value"
	case "oneOf":
		msg = "matches more than one allowed form"
	case "":
		if msg == "not allowed" {
			msg = "is not allowed"
		}
	}
	*issues = append(*issues, issue{path, msg})
}

// typeMessage rewrites "expected null or string, but got number" as
// "must be string, got number": a model should not be invited to send null.
func typeMessage(msg string) string {
	want, got, ok := strings.Cut(strings.TrimPrefix(msg, "expected "), ", but got ")
	if !ok {
		return msg
	}
	types := strings.Split(want, " or ")
	if len(types) > 1 {
		types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	}
	return "must be " + strings.Join(types, " or ") + ", got " + got
}

// countMessage rewrites "minimum 2 items required, but found 1 items" as
// "must have at least 2 items".
func countMessage(msg, prefix, noun string) string {
	f := strings.Fields(msg)
	if len(f) < 2 {
		return msg
	}
	if f[1] != "1" {
		if noun == "property" {
			noun = "properties"
		} else {
			noun += "s"
		}
	}
	return prefix + " " + f[1] + " " + noun
}

// quotedNames extracts the names the validator quotes as '...' (a Go
// quoted string with ' delimiters).
func quotedNames(s string) []string {
	var names []string
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return names
		}
		s = s[i+1:]
		j := 0
		for j < len(s) && s[j] != '\'' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return names
		}
		body := strings.ReplaceAll(s[:j], `\'`, `'`)
		body = strings.ReplaceAll(body, `"`, `\"`)
		if name, err := strconv.Unquote(`"` + body + `"`); err == nil {
			names = append(names, name)
		}
		s = s[j+1:]
	}
}

// fieldPath renders a JSON pointer into root as name.sub[2].x.
func fieldPath(root any, ptr string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if arr, ok := cur.([]any); ok {
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(arr) {
				b.WriteString("[" + tok + "]")
				cur = arr[i]
				continue
			}
		}
		if obj, ok := cur.(map[string]any); ok {
			cur = obj[tok]
		} else {
			cur = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// schemaCache holds compiled schemas of tools that do not carry their own
// (plain BaseTools), keyed by tool name and schema text, so each schema is
// compiled once per process. It is bounded: past maxCached entries it
// starts over, which only costs recompilation.
var schemaCache struct {
	mu sync.RWMutex
	m  map[string]map[string]cached
	n  int
}

type cached struct {
	a   *argSchema
	err error
}

const maxCached = 4096

// compiledFor returns the compiled schema of spec, compiling it at most
// once per (name, schema).
func compiledFor(spec Spec) (*argSchema, error) {
	raw := spec.Schema()
	schemaCache.mu.RLock()
	c, ok := schemaCache.m[spec.Name][string(raw)] // no allocation for the lookup
	schemaCache.mu.RUnlock()
	if ok {
		return c.a, c.err
	}
	c.err = checkObjectSchema(raw)
	if c.err == nil {
		c.a, c.err = compileSchema(raw)
	}
	if c.err != nil {
		c.err = fmt.Errorf("%w: tool %q: %v", ErrInvalidSpec, spec.Name, c.err)
	}
	schemaCache.mu.Lock()
	defer schemaCache.mu.Unlock()
	if schemaCache.m == nil || schemaCache.n >= maxCached {
		schemaCache.m, schemaCache.n = map[string]map[string]cached{}, 0
	}
	byName := schemaCache.m[spec.Name]
	if byName == nil {
		byName = map[string]cached{}
		schemaCache.m[spec.Name] = byName
	}
	if prev, ok := byName[string(raw)]; ok {
		return prev.a, prev.err // another goroutine won the race
	}
	byName[string(raw)] = c
	schemaCache.n++
	return c.a, c.err
}
