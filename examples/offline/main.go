// Command offline runs an assistant with no model server and no network: a
// scripted model (providers/fake) asks to rename a note through a
// hand-written tool, the card shows the tool's dry-run summary, the user
// applies it, and the tool runs once.
//
//	go run ./examples/offline
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// renameNote is a hand-written tools.BaseTool (Spec and Execute) with a dry
// run (Propose, tools.Proposer). A real one would hold your database.
type renameNote struct {
	mu     sync.Mutex
	titles map[string]string // note id → title
}

type renameArgs struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (*renameNote) Spec() tools.Spec {
	return tools.Spec{
		Name:        "rename_note",
		Description: "Renames one of the user's notes.",
		Effect:      tools.Mutate, // runs only after the user applies a card
		// The arguments are checked against this before Propose and Execute run.
		InputSchema: json.RawMessage(`{"type": "object",
			"properties": {"id": {"type": "string"}, "title": {"type": "string", "minLength": 1}},
			"required": ["id", "title"], "additionalProperties": false}`),
	}
}

// Propose is the dry run: it runs when the model calls the tool, changes
// nothing, and its Summary is the card's text (without it the card shows
// the raw arguments). A failure here shows no card; the model is told.
func (t *renameNote) Propose(ctx context.Context, c tools.Call) (tools.Result, error) {
	var in renameArgs
	if err := json.Unmarshal(c.Args, &in); err != nil {
		return tools.Result{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.titles[in.ID]
	if !ok {
		return tools.Fail(tools.CodeNotFound, "no note "+in.ID), nil
	}
	return tools.OK(fmt.Sprintf("Rename “%s” to “%s”", old, in.Title), nil), nil
}

// Execute runs once the user applies the card, with the arguments the card
// was made from (c.Approved is true).
func (t *renameNote) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	var in renameArgs
	if err := json.Unmarshal(c.Args, &in); err != nil {
		return tools.Result{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.titles[in.ID]; !ok {
		return tools.Fail(tools.CodeNotFound, "no note "+in.ID), nil
	}
	t.titles[in.ID] = in.Title
	return tools.OK("renamed note "+in.ID+" to “"+in.Title+"”", map[string]string{"id": in.ID, "title": in.Title}), nil
}

// title is note id's title, for main to show.
func (t *renameNote) title(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.titles[id]
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	notes := &renameNote{titles: map[string]string{"1": "Shopping"}}
	reg, err := tools.NewSet(notes)
	if err != nil {
		return err
	}
	// Each fake.Turn is one model call's answer, in order. For a real
	// model, put openai.New(...) or anthropic.New(...) here.
	model := fake.New(
		fake.Turn{fake.CallTool("call_1", "rename_note", `{"id": "1", "title": "Groceries"}`), fake.Usage(150, 12)},
		fake.Turn{fake.Text("Your note is now called “Groceries”."), fake.Usage(190, 9)},
	)
	eng, err := assistant.New(assistant.Config{
		Provider:   model,
		Model:      "scripted", // the model's name, sent with every call
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"rename_note"}},
		Store:      memstore.New(),
		Tools:      reg,
	})
	if err != nil {
		return err
	}
	user := parley.User{ID: "alice", Roles: []string{"user"}}

	// Turn 1: the model calls the tool; the turn ends with a confirm card.
	first, err := assistant.Collect(eng.Stream(ctx, user, assistant.Request{Message: "Rename note 1 to Groceries"}))
	if err != nil {
		return err
	}
	var card blocks.Block
	for _, b := range first.Blocks {
		if b.Kind == blocks.Confirm {
			card = b // b.ID is the card's single-use token
		}
	}
	fmt.Fprintf(w, "turn 1 finished %q; the card says: %s\n", first.Finish, card.Content)

	// Turn 2: the user applies the card; the tool runs, the model reports.
	reply, err := assistant.Collect(eng.Stream(ctx, user, assistant.Request{
		ThreadID: first.ThreadID,
		Decision: &assistant.Decision{Token: card.ID, Apply: true},
	}))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "turn 2 finished %q: %s\n", reply.Finish, reply.Text)
	fmt.Fprintf(w, "same thread: %v, titled %q; %d tokens in, %d out\n",
		reply.ThreadID == first.ThreadID, reply.Title, reply.Usage.InputTokens, reply.Usage.OutputTokens)
	fmt.Fprintf(w, "note 1 is now %q\n", notes.title("1"))
	return nil
}
