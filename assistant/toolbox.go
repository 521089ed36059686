package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/tools"
)

// toolbox is the tools a turn offers the model, and the gate state their
// calls build up over the turn's rounds. Only its methods write it.
type toolbox struct {
	offered    []offeredTool   // the host's tools this user may use on this page
	meta       []offeredTool   // the Engine's own tools offered this turn
	window     int             // the connection's context window, in tokens
	lazy       bool            // offered tools are loaded with search_tools
	loaded     map[string]bool // lazy turns: offered tools loaded so far
	repeats    map[string]int  // tool calls by name and canonical arguments
	autonomous bool            // Mutate and Destructive tools run without proposals
	auto       map[string]bool // tools the user's standing approvals run without a card
	made       int             // tool calls the model made this turn
	wrote      bool            // a Mutate or Destructive call succeeded this turn
}

// offeredTool is a tool this turn may offer to the model.
type offeredTool struct {
	spec tools.Spec
	tool tools.BaseTool
}

// Names of the Engine's own tools. A registry may not use them.
const (
	SearchToolsName = "search_tools"
	AskUserName     = "ask_user"
)

const searchToolsSchema = `{
  "type": "object",
  "properties": {
    "categories": {"type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}}
  },
  "required": ["categories"],
  "additionalProperties": false
}`

// searchToolsTool is a real tool so its arguments are validated like any
// other; the turn handles its calls itself, so Execute never runs. (So is
// askUserTool, in askuser.go.)
var searchToolsTool = tools.Must(tools.New(tools.Spec{
	Name:        SearchToolsName,
	Description: "Load the tools of one or more categories from the catalog, so you can call them from your next step on.",
	InputSchema: json.RawMessage(searchToolsSchema),
}, func(context.Context, tools.Call, struct {
	Categories []string `json:"categories"`
}) (tools.Result, error) {
	return tools.Result{}, errors.New("search_tools is handled by the turn")
}))

func isMetaTool(name string) bool { return name == SearchToolsName || name == AskUserName }

// newToolbox decides what a turn of u asking req offers: the host's tools
// the Authorizer allows on req's page, lazily when there are more than
// LazyToolThreshold (with the loaded set rebuilt from the replayed history
// past), and the Engine's own tools; and which of them run without a card
// (req.Autonomous, the user's standing approvals). It consults the host's Registry and Authorizer, so
// it runs before any write: a failure there leaves nothing behind.
func (e *Engine) newToolbox(ctx context.Context, u parley.User, req Request, past []stretch, window int) toolbox {
	tb := toolbox{offered: e.offeredTools(ctx, u, req.Page), autonomous: req.Autonomous, window: window}
	tb.auto = e.standingApprovals(ctx, u, tb.offered, req.AutoApprove)
	tb.setup(e, past)
	return tb
}

// setup decides lazy loading and the Engine's own tools for what is offered.
// The tools are loaded lazily past LazyToolThreshold of them, or when their
// definitions would take more than an eighth of a context window: a small
// model gets the catalog, one line a category, and loads what it needs.
func (tb *toolbox) setup(e *Engine, past []stretch) {
	tb.lazy = e.cfg.LazyToolThreshold >= 0 &&
		(len(tb.offered) > e.cfg.LazyToolThreshold || len(tb.offered) > 1 && toolDefTokens(toolDefs(tb.offered)) > tb.window/8)
	tb.loaded = make(map[string]bool)
	if tb.lazy {
		tb.rehydrate(past)
	}
	tb.meta = nil
	if tb.lazy {
		tb.meta = append(tb.meta, offeredTool{spec: searchToolsTool.Spec(), tool: searchToolsTool})
	}
	if !e.cfg.DisableAskUser && (len(tb.offered) > 0 || tb.lazy) {
		tb.meta = append(tb.meta, offeredTool{spec: askUserTool.Spec(), tool: askUserTool})
	}
}

// empty withdraws every tool: nothing of a blocked message reaches the
// model, not even through tools.
func (tb *toolbox) empty(e *Engine) {
	tb.offered = nil
	tb.setup(e, nil)
}

// offeredTools is the gate on the model side: only tools the Authorizer
// allows for u, on page. The same gate is checked again when a call
// arrives (see gate).
func (e *Engine) offeredTools(ctx context.Context, u parley.User, page string) []offeredTool {
	if e.cfg.Tools == nil {
		return nil
	}
	var out []offeredTool
	for _, t := range e.cfg.Tools.All() {
		spec := t.Spec()
		if !e.mayUse(ctx, u, &spec, page) {
			continue
		}
		out = append(out, offeredTool{spec: spec, tool: t})
	}
	return out
}

func (e *Engine) mayUse(ctx context.Context, u parley.User, spec *tools.Spec, page string) bool {
	if len(spec.Pages) > 0 && !slices.Contains(spec.Pages, page) {
		return false
	}
	return e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: spec}) == nil
}

// lookupTool finds a tool u may use, on any page, that the server runs.
func (e *Engine) lookupTool(ctx context.Context, u parley.User, name string) (offeredTool, bool) {
	if e.cfg.Tools == nil {
		return offeredTool{}, false
	}
	tool, ok := e.cfg.Tools.Lookup(name)
	if !ok {
		return offeredTool{}, false
	}
	spec := tool.Spec()
	if spec.ClientSide || e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: &spec}) != nil {
		return offeredTool{}, false
	}
	return offeredTool{spec: spec, tool: tool}, true
}

// readOnly reports whether name is a Read tool of the registry.
func (e *Engine) readOnly(name string) bool {
	if e.cfg.Tools == nil {
		return false
	}
	tool, ok := e.cfg.Tools.Lookup(name)
	return ok && isRead(tool.Spec())
}

// isRead reports whether a tool only reads: Effect Read, or unset, which
// tools.Spec documents as Read.
func isRead(s tools.Spec) bool { return s.Effect == tools.Read || s.Effect == "" }

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// callable is what the model may call now: the Engine's own tools, then the
// offered tools, or in a lazy turn only those loaded so far.
func (tb *toolbox) callable() []offeredTool {
	out := append(make([]offeredTool, 0, len(tb.meta)+len(tb.offered)), tb.meta...)
	for _, o := range tb.offered {
		if !tb.lazy || tb.loaded[o.spec.Name] {
			out = append(out, o)
		}
	}
	return out
}

// defs are the definitions of what the model may call now.
func (tb *toolbox) defs() []providers.ToolDef { return toolDefs(tb.callable()) }

// verifiers are the tools callable now that a verify round of the
// workflow policy may call (see verifier).
func (tb *toolbox) verifiers() []offeredTool {
	return slices.DeleteFunc(tb.callable(), func(o offeredTool) bool { return !verifier(o.spec) })
}

// toolDefs are the definitions of tools ts for the model.
func toolDefs(ts []offeredTool) []providers.ToolDef {
	defs := make([]providers.ToolDef, 0, len(ts))
	for _, o := range ts {
		params := o.spec.InputSchema
		if len(params) == 0 {
			params = emptyObjectSchema
		}
		defs = append(defs, providers.ToolDef{Name: o.spec.Name, Description: o.spec.Description, Parameters: params})
	}
	return defs
}

// names lists what the model may call now, for a refusal's hint.
func (tb *toolbox) names() string {
	var names []string
	for _, o := range tb.callable() {
		names = append(names, o.spec.Name)
	}
	if len(names) == 0 {
		return "(no tools are available)"
	}
	return strings.Join(names, ", ")
}

// gate is the gate on the execution side. The model is an untrusted
// proposer: a call to a tool that was not offered is refused and never
// runs, whatever the model claims. Authorization is asked again for the
// call itself, then come the guard's refusal of the arguments (argsRefusal),
// the loop check and a's tool-call rate.
func (tb *toolbox) gate(ctx context.Context, a *actor, c providers.ToolCall, argsRefusal *tools.Result) (offeredTool, *tools.Result) {
	tb.made++
	if i := slices.IndexFunc(tb.meta, func(o offeredTool) bool { return o.spec.Name == c.Name }); i >= 0 {
		if argsRefusal != nil {
			return offeredTool{}, argsRefusal
		}
		if r := tb.loopCheck(c); r != nil {
			return offeredTool{}, r
		}
		return tb.meta[i], nil
	}
	i := slices.IndexFunc(tb.offered, func(o offeredTool) bool { return o.spec.Name == c.Name })
	if i < 0 {
		// A tool this user may not use answers exactly like one that does
		// not exist, so refusals do not reveal hidden tools.
		r := refusal(tools.CodeUnknownTool, fmt.Sprintf("There is no tool named %q.", c.Name),
			"Use one of: "+tb.names()+".")
		r.Error.Blocked = false
		r.Error.Retryable = len(tb.offered) > 0
		return offeredTool{}, &r
	}
	o := tb.offered[i]
	if tb.lazy && !tb.loaded[o.spec.Name] {
		call, _ := json.Marshal(map[string][]string{"categories": {category(o.spec)}})
		r := refusal(tools.CodeNotLoaded, fmt.Sprintf("The tool %q is not loaded yet.", c.Name),
			fmt.Sprintf("Call %s with %s first, then call %s again.", SearchToolsName, call, c.Name))
		r.Error.Blocked, r.Error.Retryable = false, true
		return offeredTool{}, &r
	}
	// Authorize again at execution: the offered set was computed at the start
	// of the turn, and the decision must hold for the call itself.
	if err := a.e.cfg.Authorizer.Authorize(ctx, a.u, Action{Kind: UseTool, Tool: &o.spec}); err != nil {
		r := refusal(tools.CodeNotAuthorized, fmt.Sprintf("You may no longer use the tool %q for this user.", c.Name),
			"Tell the user this is not something you can do for them.")
		return offeredTool{}, &r
	}
	if argsRefusal != nil { // counted neither as a repeat nor against the rate
		return offeredTool{}, argsRefusal
	}
	if r := tb.loopCheck(c); r != nil {
		return offeredTool{}, r
	}
	if r := a.takeToolCall(ctx); r != nil {
		return offeredTool{}, r
	}
	return o, nil
}

// changed records that a Mutate or Destructive call succeeded: the next
// model call reports it, with no tools (see pace).
func (tb *toolbox) changed() { tb.wrote = true }

func refusal(code tools.ErrorCode, msg, hint string) tools.Result {
	return tools.Result{Error: &tools.ToolError{Code: code, Message: msg, Blocked: true, Hint: hint}}
}

// maxRepeats is how often one exact call may run in a turn; the next
// identical call is refused, so a model stuck in a loop must change course.
const maxRepeats = 3

// loopCheck counts calls by name and canonical arguments.
func (tb *toolbox) loopCheck(c providers.ToolCall) *tools.Result {
	key := callKey(c.Name, c.Args)
	if tb.repeats == nil {
		tb.repeats = make(map[string]int)
	}
	tb.repeats[key]++
	if tb.repeats[key] <= maxRepeats {
		return nil
	}
	r := refusal(tools.CodeLoopDetected,
		fmt.Sprintf("You already called %q with these arguments %d times in this turn.", c.Name, maxRepeats),
		"Use the results you already have, try different arguments, or answer the user.")
	return &r
}

// approvalFor says how a call of spec by a is approved: "" for a tool that
// changes nothing; approvalAutonomous or approvalAuto when it may run at
// once (an autonomous turn, the user's standing approval, or the host's
// AutoApprove); approvalPending
// when it needs a proposal and the user's decision.
func (tb *toolbox) approvalFor(ctx context.Context, a *actor, spec tools.Spec) string {
	switch {
	case !spec.NeedsApproval():
		return ""
	case tb.autonomous:
		return approvalAutonomous
	case tb.auto[spec.Name]:
		return approvalAuto
	case a.e.cfg.AutoApprove != nil && a.e.cfg.AutoApprove(ctx, a.u, spec):
		return approvalAuto
	}
	return approvalPending
}

// searchTools loads the offered tools of the requested categories and
// returns their full specs for the model.
func (tb *toolbox) searchTools(args json.RawMessage) tools.Result {
	if r, _ := tools.Validate(searchToolsTool, args); !r.OK {
		return r
	}
	var in struct {
		Categories []string `json:"categories"`
	}
	_ = json.Unmarshal(args, &in) // the schema accepted it
	type toolInfo struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		Parameters   json.RawMessage `json:"parameters,omitempty"`
		Effect       string          `json:"effect"`
		Instructions string          `json:"instructions,omitempty"`
	}
	var loaded []toolInfo
	var names, unknown []string
	for _, c := range in.Categories {
		found := false
		for _, o := range tb.offered {
			if category(o.spec) != c {
				continue
			}
			found = true
			if tb.loaded[o.spec.Name] {
				continue
			}
			tb.loaded[o.spec.Name] = true
			names = append(names, o.spec.Name)
			loaded = append(loaded, toolInfo{Name: o.spec.Name, Description: o.spec.Description,
				Parameters: o.spec.InputSchema, Effect: effectNote(o.spec), Instructions: o.spec.Instructions})
		}
		if !found {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == len(in.Categories) {
		r := tools.Fail(tools.CodeInvalidArgs, "unknown categories: "+strings.Join(unknown, ", "))
		r.Error.Retryable = true
		r.Error.Hint = "Use categories from the catalog: " + strings.Join(tb.categories(), ", ") + "."
		return r
	}
	summary := "Loaded " + strconv.Itoa(len(names)) + " tools: " + strings.Join(names, ", ") + ". You can call them now."
	if len(names) == 0 {
		summary = "Those tools are already loaded."
	}
	if len(unknown) > 0 {
		summary += " Unknown categories: " + strings.Join(unknown, ", ") + "."
	}
	return tools.OK(summary, map[string]any{"tools": loaded})
}

// defaultCategory groups tools that name none.
const defaultCategory = "general"

func category(s tools.Spec) string {
	if s.Category == "" {
		return defaultCategory
	}
	return s.Category
}

// categories lists the categories of the offered tools, in first-seen order.
func (tb *toolbox) categories() []string {
	var cs []string
	for _, o := range tb.offered {
		if c := category(o.spec); !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// effectNote says how a call of the tool is carried out, for the model.
func effectNote(s tools.Spec) string {
	switch {
	case s.ClientSide:
		return "runs in the user's application; its result arrives with the user's next message"
	case s.NeedsApproval():
		return "changes data: the user must approve each call on a card, which ends your turn"
	}
	return "read-only: runs at once"
}

// rehydrate rebuilds the loaded set of a lazy turn from the replayed
// history: every tool called before, and every category loaded before,
// that the user may still use.
func (tb *toolbox) rehydrate(past []stretch) {
	for _, s := range past {
		for _, m := range s.msgs {
			for _, c := range m.ToolCalls {
				if c.Name != SearchToolsName {
					if slices.ContainsFunc(tb.offered, func(o offeredTool) bool { return o.spec.Name == c.Name }) {
						tb.loaded[c.Name] = true
					}
					continue
				}
				var in struct {
					Categories []string `json:"categories"`
				}
				if json.Unmarshal(c.Args, &in) != nil {
					continue
				}
				for _, o := range tb.offered {
					if slices.Contains(in.Categories, category(o.spec)) {
						tb.loaded[o.spec.Name] = true
					}
				}
			}
		}
	}
}

// describe writes the tools section of the system prompt: the offered
// tools in full, or in a lazy turn a catalog with one line per category
// naming its tools (described by catalog), then the tools loaded in
// earlier turns, callable at once; and the note on ask_user.
func (tb *toolbox) describe(b *strings.Builder, catalog map[string]string) {
	switch {
	case tb.lazy:
		tb.writeCatalog(b, catalog)
	case len(tb.offered) > 0:
		b.WriteString("\n\n## Tools available to this user\n")
		for _, o := range tb.offered {
			writeTool(b, o.spec)
		}
	}
	if slices.ContainsFunc(tb.meta, func(o offeredTool) bool { return o.spec.Name == AskUserName }) {
		b.WriteString("\nWhen you need details only the user can give, call ask_user with a short form instead of guessing.\n")
	}
}

// writeTool writes one tool's line of the tool list.
func writeTool(b *strings.Builder, spec tools.Spec) {
	b.WriteString("- ")
	b.WriteString(spec.Name)
	b.WriteString(": ")
	b.WriteString(spec.Description)
	switch {
	case spec.ClientSide:
		b.WriteString(" (runs in the user's application)")
	case spec.NeedsApproval():
		b.WriteString(" (needs the user's approval)")
	}
	b.WriteByte('\n')
	if ins := strings.TrimSpace(spec.Instructions); ins != "" {
		b.WriteString("  ")
		b.WriteString(ins)
		b.WriteByte('\n')
	}
}

// writeCatalog writes the lazy catalog. The tools' full specs are loaded
// with search_tools.
func (tb *toolbox) writeCatalog(b *strings.Builder, catalog map[string]string) {
	b.WriteString("\n\n## Tool catalog\n")
	b.WriteString("Your tools are grouped by category. Before calling a tool, load its category with search_tools, e.g. search_tools({\"categories\": [\"")
	b.WriteString(tb.categories()[0])
	b.WriteString("\"]}).\n")
	for _, c := range tb.categories() {
		b.WriteString("- ")
		b.WriteString(c)
		if d := oneLine(catalog[c], 160); d != "" {
			b.WriteString(" (")
			b.WriteString(d)
			b.WriteString(")")
		}
		b.WriteString(": ")
		first := true
		for _, o := range tb.offered {
			if category(o.spec) != c {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(o.spec.Name)
		}
		b.WriteByte('\n')
	}
	var loaded []tools.Spec
	for _, o := range tb.offered {
		if tb.loaded[o.spec.Name] {
			loaded = append(loaded, o.spec)
		}
	}
	if len(loaded) > 0 {
		b.WriteString("\nAlready loaded:\n")
		for _, spec := range loaded {
			writeTool(b, spec)
		}
	}
}
