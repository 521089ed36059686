package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// noArgsSchema is the schema of a tool whose Spec has no InputSchema: an
// object with no properties. "properties" is spelled out because some
// OpenAI-compatible servers reject object schemas without it.
const noArgsSchema = `{"type":"object","properties":{},"additionalProperties":false}`

// Schema returns the JSON Schema of the tool's arguments: InputSchema, or an
// object schema with no properties when InputSchema is empty. It is what a
// provider should send as the tool's parameters. Callers must not modify the
// returned bytes.
func (s Spec) Schema() json.RawMessage {
	if len(s.InputSchema) == 0 {
		return json.RawMessage(noArgsSchema)
	}
	return s.InputSchema
}

// Validate reports whether s is well formed: Name matches
// ^[a-zA-Z0-9_-]{1,64}$, Description is not empty, Effect is Read, Mutate,
// Destructive or empty (Read), Reuse is not negative and is zero unless
// the tool is a server-side Read tool, InputSchema, when set, is a JSON
// object whose "type" is "object", and each IDArgs entry is a name or a
// well-formed JSON Pointer that InputSchema does not rule out (a step into
// an object schema that allows no other properties than those it lists
// must name one of them). The error wraps [ErrInvalidSpec]. Validate does
// not compile the schema; [New] and [NewSet] do.
func (s Spec) Validate() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("%w: tool name %q must match %s", ErrInvalidSpec, s.Name, nameRE)
	}
	if len(bytes.TrimSpace([]byte(s.Description))) == 0 {
		return fmt.Errorf("%w: tool %q: description is empty", ErrInvalidSpec, s.Name)
	}
	switch s.Effect {
	case "", Read, Mutate, Destructive:
	default:
		return fmt.Errorf("%w: tool %q: unknown effect %q", ErrInvalidSpec, s.Name, s.Effect)
	}
	if s.Reuse < 0 || s.Reuse > 0 && (s.NeedsApproval() || s.ClientSide) {
		return fmt.Errorf("%w: tool %q: Reuse must be zero, or positive for a Read tool the server runs", ErrInvalidSpec, s.Name)
	}
	if len(s.InputSchema) > 0 {
		if err := checkObjectSchema(s.InputSchema); err != nil {
			return fmt.Errorf("%w: tool %q: %v", ErrInvalidSpec, s.Name, err)
		}
	}
	if err := checkIDArgs(s.IDArgs, s.InputSchema); err != nil {
		return fmt.Errorf("%w: tool %q: %v", ErrInvalidSpec, s.Name, err)
	}
	return nil
}

// checkObjectSchema reports whether raw is a schema for a JSON object, the
// only kind of arguments a model can send.
func checkObjectSchema(raw json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return fmt.Errorf("input schema is not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return fmt.Errorf(`input schema must have "type": "object"`)
	}
	return nil
}
