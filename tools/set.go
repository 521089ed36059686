package tools

import (
	"fmt"
	"slices"
)

// Set is the Registry most hosts need: a fixed list of tools, in
// registration order. It is immutable and safe for concurrent use.
type Set struct {
	tools  []BaseTool
	byName map[string]BaseTool
}

var _ Registry = (*Set)(nil)

// NewSet returns a Set of ts, in that order. Every tool's Spec is checked
// with [Spec.Validate] and its InputSchema compiled, once, here; [Invoke]
// reuses the compiled schema. NewSet returns an error wrapping
// [ErrInvalidSpec] for a nil tool or a bad spec or schema, and one wrapping
// [ErrDuplicate] if two tools share a name.
func NewSet(ts ...BaseTool) (*Set, error) {
	s := &Set{tools: make([]BaseTool, 0, len(ts)), byName: make(map[string]BaseTool, len(ts))}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("%w: tool %d is nil", ErrInvalidSpec, i)
		}
		spec := t.Spec()
		if err := spec.Validate(); err != nil {
			return nil, err
		}
		if _, dup := s.byName[spec.Name]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicate, spec.Name)
		}
		if _, ok := t.(compiledTool); !ok {
			if _, err := compiledFor(spec); err != nil {
				return nil, err
			}
		}
		s.tools = append(s.tools, t)
		s.byName[spec.Name] = t
	}
	return s, nil
}

// Lookup returns the tool named name, or false.
func (s *Set) Lookup(name string) (BaseTool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// All returns every tool in registration order. The slice is the caller's.
func (s *Set) All() []BaseTool { return slices.Clone(s.tools) }

// Len returns the number of tools.
func (s *Set) Len() int { return len(s.tools) }
