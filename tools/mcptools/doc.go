// Package mcptools imports the tools of an external MCP server as Parley
// tools, so a host's assistant can use them beside its own.
//
//	cs, err := mcp.NewClient(&mcp.Implementation{Name: "my-app"}, nil).Connect(ctx, transport, nil)
//	...
//	defer cs.Close()
//	imported, err := mcptools.Import(ctx, cs, mcptools.Options{Prefix: "gh_", Category: "github"})
//	reg, err := tools.NewSet(append(myTools, imported...)...)
//
// # Gating
//
// An imported tool is a tools.BaseTool like any other: the Engine offers
// it only to users its Authorizer allows (by name, or by Options.Category),
// validates its arguments against the server's input schema, guards them,
// audits the call and screens the result. Its effect comes from the
// server's annotations (EffectOf): read-only tools run at once; every
// other tool, including one the server says nothing about, needs the
// user's approval, and its Execute refuses an unapproved call without
// reaching the server. Its result is reused from an earlier identical call
// (tools.Spec.Reuse) only when the server says it is read-only and
// idempotent and Options.Reuse allows it.
//
// # Errors
//
// Import fails only when the server cannot list its tools; a single tool
// that cannot be imported (a name or schema Parley cannot use, a name
// taken) is left out and logged. A call that cannot reach the server is
// an error of Execute, whose text the model never sees; the server's
// error result is a failed Result whose data holds the server's text.
//
// # Concurrency
//
// The tools are safe for concurrent use: calls share the host's client
// session, which must stay open while they are in use. The tool list is
// read once, by Import; a host that follows a server's changes imports
// again and builds a new registry.
package mcptools
