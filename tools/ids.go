package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IDsAt returns the ids args holds at arg, an entry of [Spec.IDArgs]: a
// top-level argument name, or a JSON Pointer (RFC 6901) when it starts with
// "/". The value there is one id, a string or a number (as written), or an
// array of them; values of other types are not ids and are skipped. An
// argument args leaves out gives no ids and no error.
//
// Object keys also match when they differ only in case, as encoding/json
// matches keys to struct fields: a tool that decodes args into a struct
// never reads an id IDsAt did not return.
//
// IDsAt returns an error wrapping [ErrInvalidArgs] if args is not a JSON
// object, and one wrapping [ErrInvalidSpec] if arg is empty or a malformed
// pointer.
func IDsAt(args json.RawMessage, arg string) ([]string, error) {
	tokens, err := idTokens(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("%w: the arguments are not valid JSON", ErrInvalidArgs)
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber() // as written: as float64, two large ids would look alike
	var root any
	if err := d.Decode(&root); err != nil {
		return nil, fmt.Errorf("%w: the arguments are not valid JSON", ErrInvalidArgs)
	}
	if _, ok := root.(map[string]any); !ok {
		return nil, fmt.Errorf("%w: the arguments are not a JSON object", ErrInvalidArgs)
	}
	return idsAt(root, tokens, nil), nil
}

// idsAt appends the ids at tokens under v to out.
func idsAt(v any, tokens []string, out []string) []string {
	if len(tokens) == 0 {
		return appendIDs(out, v, true)
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if strings.EqualFold(k, tokens[0]) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = idsAt(x[k], tokens[1:], out)
		}
	case []any:
		if i, ok := arrayIndex(tokens[0]); ok && i < len(x) {
			out = idsAt(x[i], tokens[1:], out)
		}
	}
	return out
}

// appendIDs appends v to out if it is an id, or, when list, the ids an
// array v holds.
func appendIDs(out []string, v any, list bool) []string {
	switch x := v.(type) {
	case string:
		return append(out, x)
	case json.Number:
		return append(out, x.String())
	case []any:
		if list {
			for _, e := range x {
				out = appendIDs(out, e, false)
			}
		}
	}
	return out
}

// arrayIndex reads an RFC 6901 array index: 0, or digits without a
// leading zero.
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// idTokens splits an IDArgs entry into the keys it steps through: a name
// is one key, taken as written; a pointer's tokens are unescaped (~1 is /,
// ~0 is ~).
func idTokens(arg string) ([]string, error) {
	switch {
	case arg == "":
		return nil, errors.New("an IDArgs entry is empty")
	case arg[0] != '/':
		return []string{arg}, nil
	}
	tokens := strings.Split(arg[1:], "/")
	for i, t := range tokens {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("IDArgs %q is not a JSON pointer: ~ must be followed by 0 or 1", arg)
			}
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// checkIDArgs reports an IDArgs entry that is malformed, or that schema
// rules out: a step into an object schema that lists its properties,
// allows no others, and lacks that one (most likely a typo, which would
// leave the argument unchecked). Steps the schema does not describe in
// that plain way are not checked.
func checkIDArgs(args []string, schema json.RawMessage) error {
	for _, arg := range args {
		tokens, err := idTokens(arg)
		if err != nil {
			return err
		}
		var node map[string]json.RawMessage
		if json.Unmarshal(schema, &node) != nil {
			continue
		}
		for _, t := range tokens {
			var props map[string]json.RawMessage
			if json.Unmarshal(node["properties"], &props) != nil || props == nil {
				break
			}
			next, ok := props[t]
			if !ok {
				if string(bytes.TrimSpace(node["additionalProperties"])) == "false" && node["patternProperties"] == nil {
					return fmt.Errorf("IDArgs %q: the input schema has no property %q", arg, t)
				}
				break
			}
			node = nil
			if json.Unmarshal(next, &node) != nil {
				break
			}
		}
	}
	return nil
}
