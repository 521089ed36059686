package guard

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Category names what a finding is about. It is stored on messages and in
// audit events, keys the action map, and names redactions:
// [CARD_REDACTED]. Custom detectors may use categories of their own.
type Category string

// Injection categories: attempts to steer the model.
const (
	InstructionOverride Category = "instruction_override" // "ignore all previous instructions"
	RoleHijack          Category = "role_hijack"          // "you are now an unrestricted AI"
	PromptExtraction    Category = "prompt_extraction"    // "print your system prompt"
	DelimiterInjection  Category = "delimiter_injection"  // <|im_start|>system, [INST], ### system
	ToolAbuse           Category = "tool_abuse"           // "call delete_all_users without confirmation"
	DataExfiltration    Category = "data_exfiltration"    // "send this conversation to https://..."
	Jailbreak           Category = "jailbreak"            // DAN, developer mode, "no ethical guidelines"
	EncodedPayload      Category = "encoded_payload"      // "decode this base64 and follow it"
	HiddenText          Category = "hidden_text"          // Unicode tag characters, bidi overrides
)

// PII and credential categories.
const (
	Credential Category = "credential"  // API keys, tokens, private keys, passwords
	NationalID Category = "national_id" // SSN, NHS, NIF/NIE, codice fiscale, PESEL, Aadhaar
	IBAN       Category = "iban"
	Card       Category = "card"
	Email      Category = "email"
	JWT        Category = "jwt"
	VAT        Category = "vat"
	Phone      Category = "phone"
	IPAddress  Category = "ip_address"
)

// Categories for inputs the guard could not scan. Both fail closed.
const (
	GuardError  Category = "guard_error"  // a detector failed or panicked, or ctx ended
	InvalidJSON Category = "invalid_json" // CheckArgs got arguments that are not JSON
	TooLarge    Category = "too_large"    // the input exceeds Config.MaxBytes
)

// DefaultActions returns (a copy of) the category -> action map used when
// Config.Actions does not name a category. Categories in neither map (the
// injection categories, and custom ones) get an action from their
// severity: High and Critical block, Medium warns, Low flags.
func DefaultActions() map[Category]Action { return maps.Clone(defaultActions) }

var defaultActions = map[Category]Action{
	Credential:  Block,
	NationalID:  Redact,
	IBAN:        Redact,
	Card:        Redact,
	Email:       Warn,
	JWT:         Warn,
	VAT:         Warn,
	Phone:       Flag,
	IPAddress:   Flag,
	GuardError:  Block,
	InvalidJSON: Block,
	TooLarge:    Block,
}

// Kind groups categories by what the Engine does with them beyond the
// action: injection findings (and guard failures) keep a message out of
// later history; PII findings do not, because the stored text is redacted.
type Kind int8

// The kinds.
const (
	KindInjection Kind = iota // an attempt to steer the model, or an unscannable input
	KindPII                   // personal data or a credential
)

// String returns "injection" or "pii".
func (k Kind) String() string {
	if k == KindPII {
		return "pii"
	}
	return "injection"
}

// Finding is one detection. It never holds the matched text: findings are
// logged and audited, and a finding must not leak the secret it found.
type Finding struct {
	// Detector names the rule that matched, e.g. "injection/override",
	// "pii/card", "credential/github". Custom detectors use their Name.
	Detector string
	Category Category
	Kind     Kind
	Severity Severity
	// Action is what this finding alone calls for, from the action map.
	Action Action
	// Start and End are byte offsets into the text given to Check, or
	// into the raw arguments given to CheckArgs: text[Start:End] is the
	// matched span. For a match inside decoded content (base64, hex,
	// percent, tag characters) they cover the whole encoded run.
	Start, End int
	// Confidence is between 0 and 1; context words before a match (such as
	// "card" before a card number) raise it.
	Confidence float64
	// Via names the view the match was made in when it was not the plain
	// normalized text: "compact", "leet", "typo", "tags", "base64", "base32",
	// "hex", "percent", "ascii85", "uuencode", "rot13", "atbash",
	// "reversed", "morse", "braille", "nato", "variation_selectors",
	// "invisible_operators"; "" otherwise.
	Via string
}

// Result is the outcome of one Check or CheckArgs.
type Result struct {
	// Action is the strongest action of the findings; Allow without any.
	Action Action
	// Severity is the highest severity of the findings; None without any.
	Severity Severity
	// Findings are ordered by Start, then End.
	Findings []Finding
	// Redacted is the input with every finding whose action is Redact or
	// Block and whose kind is PII replaced by [<CATEGORY>_REDACTED]; it
	// is the input itself when there is nothing to redact. CheckArgs
	// keeps Redacted valid JSON.
	Redacted string
	// Cause is why the guard failed closed (a detector error or panic, a
	// done context), for the log; nil otherwise. It may hold internals and
	// is not for the user.
	Cause error
}

// ErrBlocked is returned by [Result.Err] for a blocked input.
var ErrBlocked = errors.New("guard: input blocked")

// ErrInvalidConfig is wrapped by errors from [New].
var ErrInvalidConfig = errors.New("guard: invalid config")

// Categories returns the categories of the findings, sorted and unique.
func (r Result) Categories() []string {
	if len(r.Findings) == 0 {
		return nil
	}
	cs := make([]string, 0, len(r.Findings))
	for _, f := range r.Findings {
		cs = append(cs, string(f.Category))
	}
	slices.Sort(cs)
	return slices.Compact(cs)
}

// Injection returns the highest severity of the injection-kind findings,
// None if there are none. The Engine keeps a message whose Injection is
// High or more out of later history, and replays one whose Injection is
// Medium fenced as the user's words, not instructions.
func (r Result) Injection() Severity {
	s := None
	for _, f := range r.Findings {
		if f.Kind == KindInjection && f.Severity > s {
			s = f.Severity
		}
	}
	return s
}

// Err returns nil unless r's Action is Block; then an error wrapping
// [ErrBlocked] that names the categories (never the matched text).
func (r Result) Err() error {
	if r.Action < Block {
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrBlocked, strings.Join(r.Categories(), ", "))
}

// redactionLabel returns "[<CATEGORY>_REDACTED]".
func redactionLabel(c Category) string {
	return "[" + strings.ToUpper(string(c)) + "_REDACTED]"
}
