package assistant_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// An Engine with one typed tool, driven by a scripted model: the model calls
// the tool, the Engine validates and runs it, and the model answers.
func Example() {
	type cityArgs struct {
		City string `json:"city" jsonschema:"the city name"`
	}
	weather := tools.Must(tools.New(tools.Spec{
		Name: "get_weather", Description: "Weather for a city.", Effect: tools.Read,
	}, func(ctx context.Context, c tools.Call, in cityArgs) (tools.Result, error) {
		return tools.OK("sunny in "+in.City, map[string]string{"sky": "sunny"}), nil
	}))
	reg, err := tools.NewSet(weather)
	if err != nil {
		log.Fatal(err)
	}
	model := fake.New(
		fake.Turn{fake.CallTool("call_1", "get_weather", `{"city":"Paris"}`), fake.Usage(120, 10)},
		fake.Turn{fake.Text("It is sunny in Paris."), fake.Usage(160, 6)},
	)
	eng, err := assistant.New(assistant.Config{
		Provider:   model,
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"get_weather"}},
		Store:      memstore.New(),
		Tools:      reg,
	})
	if err != nil {
		log.Fatal(err)
	}
	user := parley.User{ID: "alice", Roles: []string{"user"}}
	for b := range eng.Stream(context.Background(), user, assistant.Request{Message: "Weather in Paris?"}) {
		switch b.Kind {
		case blocks.ToolCall:
			fmt.Printf("tool_call %s %s\n", b.Name, b.Data)
		case blocks.ToolResult:
			fmt.Printf("tool_result %s ok=%v: %s\n", b.Name, b.OK, b.Content)
		case blocks.Markdown:
			fmt.Printf("markdown %q\n", b.Content)
		case blocks.Meta:
			if b.Meta.Finish != "" {
				fmt.Printf("done: %d in, %d out, %s\n", b.Meta.InputTokens, b.Meta.OutputTokens, b.Meta.Finish)
			}
		}
	}
	// Output:
	// tool_call get_weather {"city":"Paris"}
	// tool_result get_weather ok=true: sunny in Paris
	// markdown "It is sunny in Paris."
	// done: 280 in, 16 out, stop
}

// Collect gathers a turn for callers that do not stream.
func ExampleCollect() {
	eng, err := assistant.New(assistant.Config{
		Provider:   fake.New(fake.Turn{fake.Text("Hello, ", "Alice!")}),
		Authorizer: assistant.RoleAuthorizer{},
		Store:      memstore.New(),
	})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := assistant.Collect(eng.Stream(context.Background(), parley.User{ID: "alice"}, assistant.Request{Message: "Hi"}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Text)
	fmt.Println(reply.ThreadID != "", reply.Title)
	// Output:
	// Hello, Alice!
	// true Hi
}

// The README's quickstart, runnable: a typed tool, the OpenAI-compatible
// provider and the HTTP API. A local mock stands in for the model server and
// httptest for http.ListenAndServe.
func ExampleEngine_quickstart() {
	llm := httptest.NewServer(openaimock.New(openaimock.Text("Hello ", "from ", "the model.")))
	defer llm.Close()
	url, key := llm.URL+"/v1", "sk-test"

	reg, err := tools.NewSet(
		tools.Must(tools.New(tools.Spec{
			Name: "get_time", Description: "The current time in UTC.", Effect: tools.Read,
		}, func(ctx context.Context, c tools.Call, _ struct{}) (tools.Result, error) {
			return tools.OK("the time", time.Now().UTC().Format(time.RFC3339)), nil
		})),
	)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := assistant.New(assistant.Config{
		Provider:   openai.New(openai.Config{BaseURL: url, APIKey: key, Model: "gpt-4o-mini"}),
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"get_time"}, Staff: []string{"staff"}},
		Store:      memstore.New(),
		Tools:      reg,
		Logger:     slog.Default(), // refusals, model failures and misconfiguration are logged here
	})
	if err != nil {
		log.Fatal(err) // e.g. a RoleAuthorizer grant that names no tool
	}
	mux := http.NewServeMux()
	mux.Handle("/api/chat/", httpapi.New(eng, httpapi.Config{
		Authenticate: func(r *http.Request) (parley.User, error) { return parley.User{ID: "alice"}, nil },
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Post(srv.URL+"/api/chat/stream", "application/json", strings.NewReader(`{"message":"Hi"}`))
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	fmt.Println(res.Status, res.Header.Get("Content-Type"))
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		b, err := blocks.ParseNDJSON(lines.Bytes())
		if err != nil {
			log.Fatal(err)
		}
		if b.Kind == blocks.Markdown {
			fmt.Printf("%s %q\n", b.Kind, b.Content)
		} else {
			fmt.Println(b.Kind)
		}
	}
	// Output:
	// 200 OK application/x-ndjson
	// meta
	// markdown "Hello from the model."
	// meta
}

// A Mutate tool waits for the user: the first turn ends with a confirm card,
// and a decision turn runs the stored call once and lets the model answer.
func ExampleEngine_Stream_approval() {
	type noteArgs struct {
		Text string `json:"text"`
	}
	add := tools.Must(tools.New(tools.Spec{
		Name: "add_note", Description: "Adds a note.", Effect: tools.Mutate,
	}, func(ctx context.Context, c tools.Call, in noteArgs) (tools.Result, error) {
		return tools.OK("added “"+in.Text+"”", nil), nil // c.Approved is true here
	}))
	add = tools.Must(tools.WithPropose(add, func(ctx context.Context, c tools.Call, in noteArgs) (tools.Result, error) {
		return tools.OK("Add the note “"+in.Text+"”", nil), nil // the card's text
	}))
	reg, err := tools.NewSet(add)
	if err != nil {
		log.Fatal(err)
	}
	model := fake.New(
		fake.Turn{fake.Text("I will add it."), fake.CallTool("call_1", "add_note", `{"text":"buy bread"}`)},
		fake.Turn{fake.Text("Done.")},
	)
	eng, err := assistant.New(assistant.Config{
		Provider:   model,
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
		Store:      memstore.New(),
		Tools:      reg,
	})
	if err != nil {
		log.Fatal(err)
	}
	user := parley.User{ID: "alice"}
	first, err := assistant.Collect(eng.Stream(context.Background(), user, assistant.Request{Message: "Note: buy bread"}))
	if err != nil {
		log.Fatal(err)
	}
	var token string
	for _, b := range first.Blocks {
		if b.Kind == blocks.Confirm {
			token = b.ID
			fmt.Printf("confirm %s: %s\n", b.Name, b.Content)
		}
	}
	fmt.Println("finish:", first.Finish)
	decision := assistant.Request{ThreadID: first.ThreadID, Decision: &assistant.Decision{Token: token, Apply: true}}
	for b := range eng.Stream(context.Background(), user, decision) {
		switch b.Kind {
		case blocks.ToolResult:
			fmt.Printf("tool_result %s ok=%v: %s\n", b.Name, b.OK, b.Content)
		case blocks.Markdown:
			fmt.Printf("markdown %q\n", b.Content)
		}
	}
	_, err = assistant.Collect(eng.Stream(context.Background(), user, decision))
	fmt.Println("again:", assistant.Code(err))
	// Output:
	// confirm add_note: Add the note “buy bread”
	// finish: approval
	// tool_result add_note ok=true: added “buy bread”
	// markdown "Done."
	// again: conflict
}
