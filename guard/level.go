package guard

import "fmt"

// Action is what the Engine does with a message or tool call. Actions are
// ordered: a stronger action includes the weaker ones, and a Result's
// Action is the strongest of its findings'.
type Action int8

// The actions, weakest first.
const (
	Allow  Action = iota // pass through unchanged
	Flag                 // pass through; the findings are recorded on the message
	Warn                 // pass through; the user is shown a warning
	Redact               // the model sees Result.Redacted; the user is shown a warning
	Block                // nothing of the text reaches the model or the tool
)

var actionNames = [...]string{"allow", "flag", "warn", "redact", "block"}

// String returns the lower-case name: "allow", "flag", "warn", "redact" or
// "block".
func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", int8(a))
}

// MarshalText encodes a as its name, so it is stored and sent as a string.
func (a Action) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(actionNames) {
		return nil, fmt.Errorf("guard: invalid action %d", int8(a))
	}
	return []byte(actionNames[a]), nil
}

// UnmarshalText decodes a name written by MarshalText (any case).
func (a *Action) UnmarshalText(b []byte) error {
	i, ok := lookupName(actionNames[:], b)
	if !ok {
		return fmt.Errorf("guard: unknown action %q", b)
	}
	*a = Action(i)
	return nil
}

// Severity says how dangerous a finding is. Severities are ordered, and a
// Result's Severity is the highest of its findings'. The Engine audits
// High and Critical findings.
type Severity int8

// The severities, lowest first.
const (
	None Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = [...]string{"none", "low", "medium", "high", "critical"}

// String returns the lower-case name: "none", "low", "medium", "high" or
// "critical".
func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", int8(s))
}

// MarshalText encodes s as its name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(severityNames) {
		return nil, fmt.Errorf("guard: invalid severity %d", int8(s))
	}
	return []byte(severityNames[s]), nil
}

// UnmarshalText decodes a name written by MarshalText (any case).
func (s *Severity) UnmarshalText(b []byte) error {
	i, ok := lookupName(severityNames[:], b)
	if !ok {
		return fmt.Errorf("guard: unknown severity %q", b)
	}
	*s = Severity(i)
	return nil
}

// lookupName finds b among names, ignoring ASCII case.
func lookupName(names []string, b []byte) (int, bool) {
	for i, n := range names {
		if len(n) != len(b) {
			continue
		}
		eq := true
		for j := range b {
			c := b[j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != n[j] {
				eq = false
				break
			}
		}
		if eq {
			return i, true
		}
	}
	return 0, false
}

// severityAction is the default action for a finding whose category has no
// entry in the action map: injection findings are judged by severity.
func severityAction(s Severity) Action {
	switch {
	case s >= High:
		return Block
	case s == Medium:
		return Warn
	case s == Low:
		return Flag
	}
	return Allow
}
