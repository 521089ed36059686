package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/mcpserver"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// asUser is an http.RoundTripper that names the user in a header, as the
// example host's Authenticate expects.
type asUser string

func (u asUser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-User", string(u))
	return http.DefaultTransport.RoundTrip(r)
}

// The Engine's tools served over MCP: a client sees the tools its user may
// use, and a change waits for the user's approval.
func Example() {
	ctx := context.Background()
	type noteArgs struct {
		Text string `json:"text"`
	}
	reg, err := tools.NewSet(
		tools.Must(tools.New(tools.Spec{Name: "list_notes", Description: "List the notes.", Category: "notes"},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				return tools.OK("2 notes", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "add_note", Description: "Add a note.", Category: "notes", Effect: tools.Mutate},
			func(_ context.Context, _ tools.Call, in noteArgs) (tools.Result, error) {
				return tools.OK("added", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "purge", Description: "Delete every note.", Category: "admin", Effect: tools.Destructive},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.OK("purged", nil), nil })),
	)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := assistant.New(assistant.Config{
		Provider:   fake.New(),
		Store:      memstore.New(),
		Tools:      reg,
		Authorizer: assistant.RoleAuthorizer{Tools: map[string][]string{"user": {"category:notes"}, "admin": {"*"}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	h, err := mcpserver.New(eng, mcpserver.Config{Authenticate: func(r *http.Request) (parley.User, error) {
		if r.Header.Get("X-User") != "alice" {
			return parley.User{}, errors.New("unknown user")
		}
		return parley.User{ID: "alice", Roles: []string{"user"}}, nil
	}})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: asUser("alice")}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range list.Tools {
		fmt.Println(t.Name, "read-only:", t.Annotations.ReadOnlyHint)
	}
	// This client cannot be asked (no elicitation): the change waits for
	// alice's approval in the app.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_note", Arguments: map[string]string{"text": "milk"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("add_note is an error result:", res.IsError)
	// Output:
	// list_notes read-only: true
	// add_note read-only: false
	// add_note is an error result: true
}
