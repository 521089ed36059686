// Package parley is an embeddable SDK that adds a streaming, tool-using AI
// assistant to a Go backend. The host plugs in its users, tools, database
// and model endpoint, and mounts one HTTP handler.
//
// The model is an untrusted proposer. Every gate — who may chat, which tools
// exist for this user, which tools run without a human, what reaches the
// model — is enforced in Go by the [assistant.Engine], never by prompt wording.
//
// # Packages
//
//   - blocks: the unit of output (Block), its wire codecs and the stream parser.
//   - providers: the model interface; providers/openai speaks any
//     OpenAI-compatible endpoint, providers/fake is scripted for tests.
//   - tools: tool specs, the result envelope, typed tools with schema
//     inference and validation, and the registry.
//   - store: persistence interfaces; store/memstore is the in-memory one.
//   - assistant: the Engine and its turn pipeline; assistant/httpapi serves it.
//
// # Quickstart
//
//	reg, _ := tools.NewSet(tools.Must(tools.New(tools.Spec{
//		Name: "get_time", Description: "Current time in UTC.", Effect: tools.Read,
//	}, func(ctx context.Context, c tools.Call, _ struct{}) (tools.Result, error) {
//		return tools.OK("now", time.Now().UTC()), nil
//	})))
//	eng, err := assistant.New(assistant.Config{
//		Provider:   openai.New(openai.Config{BaseURL: url, APIKey: key, Model: "gpt-4o-mini"}),
//		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"get_time"}},
//		Store:      memstore.New(),
//		Tools:      reg,
//	})
//	if err != nil { log.Fatal(err) }
//	api := httpapi.New(eng, httpapi.Config{Authenticate: myAuth})
//	http.Handle("/api/chat/", api)
//	log.Fatal(http.ListenAndServe(":8080", nil))
//
// Each package's doc.go describes its contracts, errors and concurrency.
package parley
