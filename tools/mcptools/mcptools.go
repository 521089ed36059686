package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
)

// DefaultCategory is the Category of imported tools when Options names none.
const DefaultCategory = "mcp"

// DefaultMaxResultBytes bounds the text of one result, when Options does not.
const DefaultMaxResultBytes = 256 << 10

// maxDescriptionBytes bounds an imported tool's description: it goes into
// every system prompt that offers the tool.
const maxDescriptionBytes = 1024

// ErrNoSession is returned by Import for a nil session.
var ErrNoSession = errors.New("mcptools: no client session")

// Options configures Import. Every field's zero value is a documented
// default.
type Options struct {
	// Prefix goes before every imported tool's name ("gh_"), so the tools
	// of two servers, or a server's and the host's, do not collide.
	// Default: none.
	Prefix string
	// Category groups the imported tools in catalogs and role rules
	// (RoleAuthorizer's "category:<name>"). Default DefaultCategory.
	Category string
	// Reuse is how long the result of a tool the server annotates as both
	// read-only and idempotent may answer an identical call later in a
	// thread (tools.Spec.Reuse). Zero, the default, is never; no other
	// imported tool is ever reused.
	Reuse time.Duration
	// Filter, when set, imports only the tools it returns true for.
	Filter func(*mcp.Tool) bool
	// MaxResultBytes bounds the text of one result (default
	// DefaultMaxResultBytes); more is cut with a note.
	MaxResultBytes int
	// Logger receives a line for each tool that cannot be imported; nil
	// discards them.
	Logger *slog.Logger
}

// Import lists the tools of the server cs is connected to and returns them
// as Parley tools, in the server's order, to put in a registry beside the
// host's own (tools.NewSet). Each calls the server through cs, which the
// host keeps open while the tools are in use and closes after.
//
// A tool's name is Prefix and its MCP name, with every character outside
// [a-zA-Z0-9_-] made '_' and cut to 64 bytes (see Name); its effect comes
// from the server's annotations (see EffectOf), so a tool the server does
// not say is read-only needs the user's approval. A tool whose name or
// input schema cannot be used, or whose name another tool of the server
// already took, is left out and logged. The Engine gates, guards and
// audits an imported tool like any other.
//
// Import returns ErrNoSession for a nil cs, and the listing's error.
func Import(ctx context.Context, cs *mcp.ClientSession, opts Options) ([]tools.BaseTool, error) {
	if cs == nil {
		return nil, ErrNoSession
	}
	opts.Category = cmp.Or(opts.Category, DefaultCategory)
	opts.MaxResultBytes = cmp.Or(max(opts.MaxResultBytes, 0), DefaultMaxResultBytes)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var out []tools.BaseTool
	taken := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcptools: list tools: %w", err)
		}
		if t == nil || opts.Filter != nil && !opts.Filter(t) {
			continue
		}
		tool, err := newTool(cs, t, opts)
		if err == nil && taken[tool.spec.Name] {
			err = fmt.Errorf("%w: %q", tools.ErrDuplicate, tool.spec.Name)
		}
		if err != nil {
			log.Warn("mcptools: tool left out", "tool", truncate(t.Name, 100), "err", err)
			continue
		}
		taken[tool.spec.Name] = true
		out = append(out, tool)
	}
	return out, nil
}

// NewRegistry is Import's tools as a registry of their own.
func NewRegistry(ctx context.Context, cs *mcp.ClientSession, opts Options) (*tools.Set, error) {
	ts, err := Import(ctx, cs, opts)
	if err != nil {
		return nil, err
	}
	return tools.NewSet(ts...)
}

// tool is one tool of an MCP server.
type tool struct {
	spec   tools.Spec
	remote string // the server's name for it
	cs     *mcp.ClientSession
	max    int
}

var _ tools.BaseTool = (*tool)(nil)

func newTool(cs *mcp.ClientSession, t *mcp.Tool, opts Options) (*tool, error) {
	schema, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, err
	}
	spec := tools.Spec{
		Name:        Name(opts.Prefix, t.Name),
		Description: description(t),
		Category:    opts.Category,
		InputSchema: schema,
		Effect:      EffectOf(t.Annotations),
	}
	if a := t.Annotations; a != nil && a.ReadOnlyHint && a.IdempotentHint && opts.Reuse > 0 {
		spec.Reuse = opts.Reuse
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	// Compiles the schema now, so a schema the Engine could not use is
	// left out here rather than failing every call.
	if _, err := tools.NewSet(&tool{spec: spec}); err != nil {
		return nil, err
	}
	return &tool{spec: spec, remote: t.Name, cs: cs, max: opts.MaxResultBytes}, nil
}

// EffectOf is the effect of a tool with annotations a: Read only when the
// server says the tool is read-only, Destructive when it says the tool is
// destructive, else Mutate, so that a tool the server says nothing about
// needs the user's approval. Annotations are the server's claims: a host
// imports only servers it trusts to make them.
func EffectOf(a *mcp.ToolAnnotations) tools.Effect {
	switch {
	case a == nil:
		return tools.Mutate
	case a.ReadOnlyHint:
		return tools.Read
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return tools.Destructive
	}
	return tools.Mutate
}

// inputSchema is the tool's input schema as JSON: an object schema, or nil
// (no arguments) when the server gives none.
func inputSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", tools.ErrInvalidSpec, err)
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}

// description is the tool's description for the model, one line-bounded
// text; a tool without one is described by its title or name.
func description(t *mcp.Tool) string {
	d := strings.TrimSpace(t.Description)
	if d == "" {
		d = strings.TrimSpace(t.Title)
	}
	if d == "" && t.Annotations != nil {
		d = strings.TrimSpace(t.Annotations.Title)
	}
	if d == "" {
		d = "The " + truncate(t.Name, 64) + " tool of an MCP server."
	}
	return strings.ToValidUTF8(truncate(d, maxDescriptionBytes), "")
}

func (t *tool) Spec() tools.Spec { return t.spec }

// Execute calls the tool on the server. A Mutate or Destructive call that
// was not approved is refused without reaching the server. The server's
// error result is a failed Result whose data holds the server's text (the
// Engine screens it like any tool's data); a failure to reach the server
// is the error, which the model never sees.
func (t *tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	if t.spec.NeedsApproval() && !call.Approved {
		return tools.Fail(tools.CodeNeedsApproval, "This action needs the user's approval."), nil
	}
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := t.cs.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		return tools.Result{}, fmt.Errorf("mcptools: call %q: %w", t.remote, err)
	}
	return resultOf(res, t.max), nil
}
