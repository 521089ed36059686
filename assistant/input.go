package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
)

// input is what the user says this turn, as the guard left it: a value,
// read-only once screen returns it. Its three forms are the admitted text
// (the message, the form answers or a decision note), what is stored
// (stored) and what the model reads (forModel).
type input struct {
	text        string       // the admitted text
	verdict     guard.Result // the guard's verdict on text; Redacted is what is stored
	pageContext string       // the page context as the model may see it; "" when withheld
	pageScan    guard.Result // the document scan of the page context, for the audit
	page        screening    // how the page context reaches the model
	entities    []grounded   // the host objects the user refers to, authorized and screened
}

// screen runs the guard on what admission let in: the user's text (unless
// it is a note the server wrote) and the page context, and grounds the
// entities the user refers to. Nothing of a blocked message reaches the
// model: no entity is loaded for it.
func (e *Engine) screen(ctx context.Context, u parley.User, adm *admission) input {
	in := input{text: adm.text, verdict: guard.Result{Redacted: adm.text}}
	if adm.scan {
		in.verdict = e.checkInput(ctx, adm.text)
	}
	in.pageContext, in.pageScan, in.page = e.checkContext(ctx, adm.req.PageContext)
	if !in.blocked() {
		in.entities = e.ground(ctx, u, adm.thread.ID, adm.req.Entities, in.stored())
	}
	return in
}

// blocked reports whether the input guard refused the message.
func (in *input) blocked() bool { return in.verdict.Action >= guard.Block }

// stored is the text as the store keeps it, titles are made from it and
// mentions are found in it: credentials and personal data the guard found
// are redacted.
func (in *input) stored() string { return in.verdict.Redacted }

// rejectionPrompt is what the model sees instead of a blocked message: the
// categories only, never the user's text.
const rejectionPrompt = "The user's last message was withheld by a security filter and you cannot see it. " +
	"It appeared to contain: %s. Tell the user briefly and politely that you cannot process that message, " +
	"and suggest they send it again without that content. Do not guess what the message said."

// forModel is the user's message as the model sees it: the redacted text,
// or for a blocked message a rejection prompt naming only the categories.
func (in *input) forModel() string {
	switch in.verdict.Action {
	case guard.Block:
		return fmt.Sprintf(rejectionPrompt, strings.Join(humanCategories(in.verdict), ", "))
	case guard.Redact:
		return in.verdict.Redacted
	}
	return in.text
}

// GuardNotice is what the guard found in a user's own message and what
// became of it: the facts of the warning the user is shown with the
// answer, for a host that words it in the user's language
// (Config.GuardMessage) and for a client that does (the warning block
// carries it as Data: {"action", "instructions"?, "found"?, "forgotten"?}).
type GuardNotice struct {
	// Action is what became of the message: guard.Block (not sent to the
	// model), guard.Redact (parts hidden from it) or guard.Warn (sent).
	Action guard.Action `json:"action"`
	// Instructions is set when the message reads like instructions aimed
	// at the assistant.
	Instructions bool `json:"instructions,omitempty"`
	// Found are the other categories found, in the order first found:
	// personal data, credentials, what could not be scanned, a host
	// detector's own.
	Found []guard.Category `json:"found,omitempty"`
	// Forgotten is set when a blocked message is left out of the
	// conversation's later turns too, not only this one.
	Forgotten bool `json:"forgotten,omitempty"`
}

// notice is what the user is told of their message, if anything.
func (in *input) notice() (GuardNotice, bool) {
	r := in.verdict
	if r.Action < guard.Warn {
		return GuardNotice{}, false
	}
	n := GuardNotice{Action: r.Action, Forgotten: r.Action == guard.Block && r.Injection() >= guard.High}
	for _, f := range r.Findings {
		switch {
		case f.Kind == guard.KindInjection && plainNames[f.Category] == "":
			n.Instructions = true
		case !slices.Contains(n.Found, f.Category):
			n.Found = append(n.Found, f.Category)
		}
	}
	if r.Action == guard.Warn && !n.Instructions && len(n.Found) == 0 {
		return GuardNotice{}, false // nothing to name: a host detector's Warn with no finding
	}
	return n, true
}

// warning is the notice the user sees about their own message, if any,
// worded by word (Config.GuardMessage) or, when it is nil, says "" or
// panics (logged to log), by guardMessage.
func (in *input) warning(ctx context.Context, log *slog.Logger, u parley.User, word func(parley.User, GuardNotice) string) (blocks.Block, bool) {
	n, ok := in.notice()
	if !ok {
		return blocks.Block{}, false
	}
	var msg string
	if word != nil {
		msg = hostWords(ctx, log, word, u, n)
	}
	if msg == "" {
		msg = guardMessage(n)
	}
	data, err := json.Marshal(n)
	if err != nil { // an Action past the named ones: the words alone
		data = nil
	}
	return blocks.Block{Kind: blocks.Warning, Content: msg, Data: data}, true
}

// hostWords is word(u, n), or "" when the host's function panics: a bug
// in how a notice is worded must not cost the user the answer.
func hostWords(ctx context.Context, log *slog.Logger, word func(parley.User, GuardNotice) string, u parley.User, n GuardNotice) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			log.ErrorContext(ctx, "assistant: GuardMessage panicked; the notice is worded in English", "err", fmt.Sprint(r))
			msg = ""
		}
	}()
	return word(u, n)
}

// guardMessage is the English wording of n: it names what the guard found
// in words a user knows, and says what becomes of the message, now and in
// later turns.
func guardMessage(n GuardNotice) string {
	var steer, found []string
	if n.Instructions {
		steer = []string{injectionWords}
	}
	for _, c := range n.Found {
		name, ok := plainNames[c]
		if !ok {
			name = strings.ReplaceAll(string(c), "_", " ") // a custom detector's
		}
		if !slices.Contains(found, name) {
			found = append(found, name)
		}
	}
	switch n.Action {
	case guard.Block:
		msg := "Your message was not sent to the assistant because it appears to contain " + joinWords(append(steer, found...)) + "."
		if n.Forgotten {
			msg += " The assistant will not remember it in this conversation."
		}
		return msg
	case guard.Redact:
		return "Parts of your message that look like " + joinWords(append(steer, found...)) + " were hidden from the assistant."
	}
	var parts []string
	if len(steer) > 0 {
		parts = append(parts, "Parts of your message read like "+injectionWords+". It was sent, "+
			"and in later messages the assistant will read it as your request, not as new rules.")
	}
	if len(found) > 0 {
		parts = append(parts, "Your message appears to contain "+joinWords(found)+". "+avoidSharing(n.Found))
	}
	return strings.Join(parts, " ")
}

// injectionWords is what a user is told an injection finding is.
const injectionWords = "instructions aimed at the assistant"

// plainNames are what a user is told the guard found, by category.
var plainNames = map[guard.Category]string{
	guard.Credential:  "a password or an access key",
	guard.JWT:         "a login token",
	guard.NationalID:  "an identity number",
	guard.IBAN:        "a bank account number",
	guard.Card:        "a card number",
	guard.Email:       "an email address",
	guard.VAT:         "a tax number",
	guard.Phone:       "a phone number",
	guard.IPAddress:   "an IP address",
	guard.GuardError:  "something the security check could not read",
	guard.InvalidJSON: "something the security check could not read",
	guard.TooLarge:    "more text than the security check takes",
}

// avoidSharing is the advice for what a warned message holds.
func avoidSharing(found []guard.Category) string {
	if slices.Contains(found, guard.JWT) || slices.Contains(found, guard.Credential) {
		return "Avoid sharing passwords, keys or tokens with the assistant."
	}
	return "Avoid sharing personal data with the assistant."
}

// joinWords joins names as prose: "a, b and c".
func joinWords(names []string) string {
	switch len(names) {
	case 0:
		return "something the security check flagged"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// unscreenedRoom is the most the page context and the entities of req may
// add to the system prompt once screened, in bytes: the page context as
// cut, and for each reference the request names (or, with Mentions, for
// as many as a message may find) its line and its share of the entities'
// text. The quota is reserved on it before the guard reads them.
func (e *Engine) unscreenedRoom(req Request) int {
	const sectionHead, itemHead = 128, 192 // a section's heading and fence, an item's tag and title
	n := 0
	if req.PageContext != "" {
		n += sectionHead + len(req.PageContext)
	}
	refs := len(req.Entities)
	if e.cfg.Mentions != nil {
		refs = MaxEntities
	}
	if refs > 0 {
		n += sectionHead + refs*itemHead
		if e.cfg.ResolveEntity != nil {
			n += min(refs*MaxEntityBytes, maxEntityTotal)
		}
	}
	return n
}
