package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
	"github.com/parleyhq/parley/tools/mcptools"
)

// A server's tools imported beside a host's: the effects follow the
// server's annotations, and a tool it says nothing about needs approval.
func ExampleImport() {
	ctx := context.Background()
	// An MCP server, here in process; usually a StreamableClientTransport
	// or a CommandTransport reaches it.
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	done := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	destructive := true
	srv.AddTool(&mcp.Tool{Name: "read_file", Description: "Read a file.", InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, done)
	srv.AddTool(&mcp.Tool{Name: "files/delete", Description: "Delete a file.", InputSchema: schema, Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}}, done)
	srv.AddTool(&mcp.Tool{Name: "sync", Description: "Sync the folder.", InputSchema: schema}, done)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "my-app", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	imported, err := mcptools.Import(ctx, cs, mcptools.Options{Prefix: "fs_", Category: "files"})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := tools.NewSet(imported...) // with the host's own tools, for assistant.Config.Tools
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range reg.All() {
		fmt.Println(t.Spec().Name, t.Spec().Effect)
	}
	// Output:
	// fs_files_delete destructive
	// fs_read_file read
	// fs_sync mutate
}
