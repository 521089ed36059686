package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the "sqlite" driver: pure Go, no cgo

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// A store on a SQLite file: open the host's *sql.DB, migrate once at start,
// then persist a turn as the Engine does (user message and streaming
// placeholder together, then the placeholder completed).
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "parley-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A busy timeout lets connections wait for each other's writes; WAL
	// lets readers go on while one writes.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "parley.db")+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	s, err := sqlstore.New(db, sqlstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

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
	cur, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("schema up to date:", cur == latest)
	// Output:
	// 1 user      complete How many VMs do I have?
	// 2 assistant complete You have 3 VMs.
	// schema up to date: true
}
