package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/mcpserver"
	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/mcptools"
)

// The example's MCP: the Engine's tools served at /mcp, and an external MCP
// server's tools (PARLEY_MCP_TOOLS) beside the demo's.

// mcpToolsPrefix goes before the names of the tools PARLEY_MCP_TOOLS
// attaches; mcpToolsCategory is their category, which role user may use.
const (
	mcpToolsPrefix   = "ext_"
	mcpToolsCategory = "mcp"
)

// readMCPToolsURL reads PARLEY_MCP_TOOLS: the streamable HTTP endpoint of
// an MCP server whose tools the assistant may use; "" for none.
func readMCPToolsURL() (string, error) {
	v := os.Getenv("PARLEY_MCP_TOOLS")
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("PARLEY_MCP_TOOLS=%q: want the http:// or https:// URL of an MCP server's streamable HTTP endpoint", v)
	}
	return v, nil
}

// attachMCPTools connects to the MCP server at endpoint and returns reg
// with the server's tools beside the demo's, followed as the server
// changes its list, and a function that closes the session (the tools
// call the server through it). An empty endpoint returns reg as it is.
func attachMCPTools(ctx context.Context, endpoint string, reg tools.Registry, log *slog.Logger) (tools.Registry, func(), error) {
	if endpoint == "" {
		return reg, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	live := mcptools.NewLive(mcptools.Options{Prefix: mcpToolsPrefix, Category: mcpToolsCategory, Logger: log})
	client := mcp.NewClient(&mcp.Implementation{Name: "parley-example", Version: "1"}, &mcp.ClientOptions{ToolListChangedHandler: live.OnListChanged})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("PARLEY_MCP_TOOLS: connect to %s: %w", endpoint, err)
	}
	closeSession := func() {
		if err := cs.Close(); err != nil {
			log.Warn("closing the MCP tools session", "err", err)
		}
	}
	if err := live.Refresh(ctx, cs); err != nil {
		closeSession()
		return nil, nil, fmt.Errorf("PARLEY_MCP_TOOLS: %w", err)
	}
	log.Info("attached an MCP server's tools", "endpoint", endpoint, "tools", len(live.All()))
	// The demo's tools keep their names: a server's tool of the same name
	// (after the prefix) is hidden.
	return tools.Join(reg, live), closeSession, nil
}

// mcpHandler serves the Engine's tools at /mcp, authenticated by the
// X-Demo-User header like the rest of the API.
func mcpHandler(eng *assistant.Engine, log *slog.Logger) (http.Handler, error) {
	return mcpserver.New(eng, mcpserver.Config{Authenticate: authenticate, Name: "parley-example", Logger: log})
}

// close closes the MCP tools session, then the database.
func (a *app) close() error {
	if a.closeMCP != nil {
		a.closeMCP()
	}
	return a.database.close()
}

// mcpGrants is what role user may use of an attached MCP server: its
// category, whatever tools the server lists now or later; none without a
// server.
func mcpGrants(endpoint string) []string {
	if endpoint == "" {
		return nil
	}
	return []string{"category:" + mcpToolsCategory}
}
