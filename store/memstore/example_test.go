package memstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

// One turn as the Engine stores it: the user message and a streaming
// placeholder appended together, then the placeholder completed.
func Example() {
	ctx := context.Background()
	s := memstore.New()

	th := store.Thread{OwnerID: "alice", Title: "VMs"}
	if err := s.CreateThread(ctx, &th); err != nil {
		log.Fatal(err)
	}

	user := &store.Message{ThreadID: th.ID, Role: store.RoleUser, Status: store.StatusComplete, Content: "How many VMs do I have?"}
	reply := &store.Message{ThreadID: th.ID, Role: store.RoleAssistant, Status: store.StatusStreaming}
	if err := s.AppendTurn(ctx, user, reply); err != nil {
		log.Fatal(err)
	}

	reply.Status = store.StatusComplete
	reply.Blocks = []blocks.Block{{Kind: blocks.Markdown, Content: "You have 3 VMs."}}
	reply.InputTokens, reply.OutputTokens = 120, 8
	if err := s.UpdateMessage(ctx, reply); err != nil {
		log.Fatal(err)
	}

	msgs, err := s.ListMessages(ctx, th.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		text := m.Content
		if len(m.Blocks) > 0 {
			text = m.Blocks[0].Content
		}
		fmt.Printf("%d %-9s %-8s %s\n", m.Seq, m.Role, m.Status, text)
	}
	// Output:
	// 1 user      complete How many VMs do I have?
	// 2 assistant complete You have 3 VMs.
}
