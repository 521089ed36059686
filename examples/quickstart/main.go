// Command quickstart is the README's Quickstart: an Engine with one typed
// tool, an OpenAI-compatible model and the HTTP API, on this machine only.
//
//	OPENAI_API_KEY=sk-... go run ./examples/quickstart
//	curl -N -H 'X-User: alice' -H 'Content-Type: application/json' \
//	    -d '{"message": "What time is it?"}' http://127.0.0.1:8080/api/chat/stream
package main

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

func main() {
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		log.Fatal("set OPENAI_API_KEY (examples/offline runs without a model server)")
	}
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
		// The model's name goes here (or in each Connection, for several;
		// a request picks among them with Request.Model).
		Provider:   openai.New(openai.Config{BaseURL: "https://api.openai.com/v1", APIKey: key, Model: "gpt-4o-mini"}),
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"get_time"}, Staff: []string{"staff"}},
		Store:      memstore.New(),
		Tools:      reg,
		Logger:     slog.Default(), // refusals, model failures and misconfiguration are logged here
	})
	if err != nil {
		log.Fatal(err) // e.g. a RoleAuthorizer grant that names no tool
	}
	http.Handle("/api/chat/", httpapi.New(eng, httpapi.Config{Authenticate: authenticate}))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}

// authenticate says who sent r: your sessions or tokens go here. This one
// believes an X-User header, so it listens on 127.0.0.1 only.
func authenticate(r *http.Request) (parley.User, error) {
	id := r.Header.Get("X-User")
	if id == "" {
		return parley.User{}, errors.New("no X-User header") // 401
	}
	return parley.User{ID: id, Roles: []string{"user"}}, nil
}
