package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/racesplit"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// The sweep deletes threads last updated before the cutoff, archived or
// not, with their messages; it keeps newer threads, threads updated exactly
// at the cutoff, and every audit event.
func TestDeleteThreadsOlderThan(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var clock atomic.Pointer[time.Time]
			setClock := func(v time.Time) { clock.Store(&v) }
			setClock(at(0))
			s, err := sqlstore.New(b.open(t), sqlstore.Options{Now: func() time.Time { return *clock.Load() }})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			cutoff := at(100)
			create := func(owner string, updated time.Time) store.Thread {
				th := store.Thread{OwnerID: owner, CreatedAt: at(0), UpdatedAt: updated}
				if err := s.CreateThread(ctx, &th); err != nil {
					t.Fatal(err)
				}
				return th
			}
			// Old, with a turn appended while the clock said at(10).
			oldWithTurn := create("u", at(0))
			setClock(at(10))
			u, a := turn(oldWithTurn.ID)
			if err := s.AppendTurn(ctx, u, a); err != nil {
				t.Fatal(err)
			}
			oldArchived := create("u", at(20))
			if err := s.ArchiveThread(ctx, oldArchived.ID, at(30)); err != nil {
				t.Fatal(err)
			}
			atCutoff := create("u", cutoff)
			// Created old, then written to after the cutoff: kept.
			revived := create("u", at(5))
			setClock(at(200))
			ru, ra := turn(revived.ID)
			if err := s.AppendTurn(ctx, ru, ra); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendAudit(ctx, &store.AuditEvent{Kind: "tool.call", ActorID: "u", ThreadID: oldWithTurn.ID}); err != nil {
				t.Fatal(err)
			}

			n, err := s.DeleteThreadsOlderThan(ctx, cutoff)
			if err != nil || n != 2 {
				t.Fatalf("DeleteThreadsOlderThan = %d, %v; want 2", n, err)
			}
			for _, id := range []string{oldWithTurn.ID, oldArchived.ID} {
				if _, err := s.GetThread(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("GetThread of a swept thread: err = %v, want ErrNotFound", err)
				}
			}
			for _, id := range []string{u.ID, a.ID} {
				if _, err := s.GetMessage(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("GetMessage of a swept thread's message: err = %v, want ErrNotFound", err)
				}
			}
			for _, id := range []string{atCutoff.ID, revived.ID} {
				if _, err := s.GetThread(ctx, id); err != nil {
					t.Errorf("a thread that is not older than the cutoff was swept: %v", err)
				}
			}
			if ms, err := s.ListMessages(ctx, revived.ID); err != nil || len(ms) != 2 {
				t.Errorf("the kept thread has %d messages, %v; want 2", len(ms), err)
			}
			if es, err := s.ListAudit(ctx, store.AuditFilter{ThreadID: oldWithTurn.ID}); err != nil || len(es) != 1 {
				t.Errorf("audit events of the swept thread: %d, %v; want 1 kept", len(es), err)
			}
			if n, err := s.DeleteThreadsOlderThan(ctx, cutoff); err != nil || n != 0 {
				t.Errorf("second sweep = %d, %v; want 0", n, err)
			}
		})
	}
}

// A sweep larger than one batch deletes everything old, across batches.
func TestDeleteThreadsOlderThanInBatches(t *testing.T) {
	const old, recent = 1234, 3
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name != "Postgres" {
				racesplit.Skip(t) // 1,237 SQLite inserts took 3-9 s under -race, and nothing here is concurrent
			}
			db := b.open(t)
			s := migrated(t, db)
			ctx := t.Context()
			// Seeded in one transaction: the sweep is under test, not CreateThread.
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			ins := rebind(s, `INSERT INTO parley_threads (id, owner_id, title, created_at, updated_at) VALUES (?, 'u', '', ?, ?)`)
			for i := range old + recent {
				when := at(i % 50)
				if i >= old {
					when = at(1000)
				}
				if _, err := tx.ExecContext(ctx, ins, fmt.Sprint("t-", i), timeArg(s, when), timeArg(s, when)); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			n, err := s.DeleteThreadsOlderThan(ctx, at(500))
			if err != nil || n != old {
				t.Fatalf("DeleteThreadsOlderThan = %d, %v; want %d", n, err, old)
			}
			ts, err := s.ListThreads(ctx, "u", store.ListOptions{IncludeArchived: true})
			if err != nil || len(ts) != recent {
				t.Errorf("left %d threads, %v; want %d", len(ts), err, recent)
			}
		})
	}
}

func TestDeleteThreadsOlderThanStopsWithTheContext(t *testing.T) {
	s := migrated(t, backends[1].open(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.DeleteThreadsOlderThan(ctx, at(0)); err == nil {
		t.Error("DeleteThreadsOlderThan with a canceled context succeeded")
	}
}
