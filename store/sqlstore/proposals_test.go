package sqlstore_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// proposal returns a pending proposal in threadID expiring at(60).
func proposal(threadID string) *store.Proposal {
	return &store.Proposal{Token: "tok-" + uuid.NewString(), UserID: "u", ThreadID: threadID,
		Tool: "reboot_vm", Args: []byte(`{"vm":"vm-1"}`), CreatedAt: at(1), ExpiresAt: at(60)}
}

// A host may open SQLite without foreign keys (they are off unless a
// connection asks): a proposal still needs its thread, and deleting or
// sweeping the thread still takes its proposals, leaving no orphan rows.
func TestProposalsFollowTheirThreadWithoutSQLiteForeignKeys(t *testing.T) {
	db := openSQLite(t, "file:"+filepath.Join(t.TempDir(), "nofk.db")+"?_pragma=busy_timeout(10000)")
	var fk int
	if err := db.QueryRowContext(t.Context(), `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 0 {
		t.Fatalf("PRAGMA foreign_keys = %d, %v; want 0 for this test to mean anything", fk, err)
	}
	s := migrated(t, db)
	ctx := t.Context()

	err := s.CreateProposal(ctx, proposal(uuid.NewString()))
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateProposal in an unknown thread: err = %v, want ErrNotFound", err)
	}
	deleted := store.Thread{OwnerID: "u", UpdatedAt: at(500)}
	swept := store.Thread{OwnerID: "u", UpdatedAt: at(0)}
	for _, th := range []*store.Thread{&deleted, &swept} {
		if err := s.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := s.CreateProposal(ctx, proposal(th.ID)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.DeleteThread(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteThreadsOlderThan(ctx, at(100)); err != nil || n != 1 {
		t.Fatalf("DeleteThreadsOlderThan = %d, %v; want 1", n, err)
	}
	if n := countRows(t, db, "parley_proposals"); n != 0 {
		t.Errorf("%d proposal rows left after their threads were deleted, want 0", n)
	}
}

// The retention sweep takes the proposals of the threads it deletes (by
// the cascade on PostgreSQL, explicitly on SQLite) and keeps the others.
func TestDeleteThreadsOlderThanTakesProposals(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := migrated(t, db)
			ctx := t.Context()
			old := store.Thread{OwnerID: "u", UpdatedAt: at(0)}
			kept := store.Thread{OwnerID: "u", UpdatedAt: at(200)}
			var keep *store.Proposal
			for _, th := range []*store.Thread{&old, &kept} {
				if err := s.CreateThread(ctx, th); err != nil {
					t.Fatal(err)
				}
				keep = proposal(th.ID)
				if err := s.CreateProposal(ctx, keep); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := s.DeleteThreadsOlderThan(ctx, at(100)); err != nil || n != 1 {
				t.Fatalf("DeleteThreadsOlderThan = %d, %v; want 1", n, err)
			}
			if n := countRows(t, db, "parley_proposals"); n != 1 {
				t.Errorf("%d proposal rows after the sweep, want 1", n)
			}
			if _, err := s.GetProposal(ctx, keep.Token); err != nil {
				t.Errorf("the kept thread's proposal: %v", err)
			}
		})
	}
}

// Two Stores on separate pools stand for two app instances: deciders of one
// token spread over both still have exactly one winner.
func TestDecideProposalAcrossInstances(t *testing.T) {
	const deciders = 32
	for _, c := range sharedBackends {
		t.Run(c.name, func(t *testing.T) {
			open := c.open(t)
			stores := []*sqlstore.Store{migrated(t, open()), migrated(t, open())}
			th := store.Thread{OwnerID: "u"}
			if err := stores[0].CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				p := proposal(th.ID)
				if err := stores[1].CreateProposal(t.Context(), p); err != nil {
					t.Fatal(err)
				}
				errs := make([]error, deciders)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range deciders {
					s, status := stores[i%2], store.ProposalApplied
					if i%4 >= 2 {
						status = store.ProposalDeclined
					}
					wg.Go(func() {
						<-start
						_, errs[i] = s.DecideProposal(t.Context(), p.Token, status, at(2))
					})
				}
				close(start)
				wg.Wait()
				wins := 0
				for i, err := range errs {
					switch {
					case err == nil:
						wins++
					case !errors.Is(err, store.ErrConflict):
						t.Errorf("round %d: decider %d: %v, want nil or ErrConflict", round, i, err)
					}
				}
				if wins != 1 {
					t.Errorf("round %d: %d deciders won, want exactly 1", round, wins)
				}
			}
		})
	}
}

// Values the database cannot hold as given are ErrInvalid, and nothing is
// written: Args that are not JSON (both dialects) and, on PostgreSQL, a NUL
// character in a key (free text such as the summary is escaped instead).
func TestCreateProposalRejectsWhatItCannotStore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := migrated(t, db)
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			bad := map[string]*store.Proposal{}
			p := proposal(th.ID)
			p.Args = []byte(`{"vm":`)
			bad["Args that are not JSON"] = p
			if s.Dialect() == sqlstore.Postgres {
				p = proposal(th.ID)
				p.UserID = "nul\x00here"
				bad["a NUL in the user id"] = p
			}
			for name, p := range bad {
				if err := s.CreateProposal(t.Context(), p); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("CreateProposal with %s: err = %v, want ErrInvalid", name, err)
				}
			}
			if n := countRows(t, db, "parley_proposals"); n != 0 {
				t.Errorf("%d rejected proposals were written", n)
			}
		})
	}
}

// A token is a credential: it stays out of every error a store returns.
func TestProposalErrorsDoNotHoldTheToken(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := migrated(t, b.open(t))
			ctx := t.Context()
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(ctx, &th); err != nil {
				t.Fatal(err)
			}
			p := proposal(th.ID)
			if err := s.CreateProposal(ctx, p); err != nil {
				t.Fatal(err)
			}
			dup := proposal(th.ID)
			dup.Token = p.Token
			_, getErr := s.GetProposal(ctx, p.Token+"x")
			_, decideErr := s.DecideProposal(ctx, p.Token+"x", store.ProposalApplied, at(2))
			if _, err := s.DecideProposal(ctx, p.Token, store.ProposalApplied, at(2)); err != nil {
				t.Fatal(err)
			}
			_, againErr := s.DecideProposal(ctx, p.Token, store.ProposalApplied, at(3))
			for name, err := range map[string]error{
				"CreateProposal with a taken token": s.CreateProposal(ctx, dup),
				"GetProposal of an unknown token":   getErr,
				"DecideProposal of an unknown one":  decideErr,
				"DecideProposal twice":              againErr,
			} {
				if err == nil {
					t.Errorf("%s succeeded", name)
				} else if strings.Contains(err.Error(), p.Token) {
					t.Errorf("%s: the error shows the token: %v", name, err)
				}
			}
		})
	}
}

// ListProposals and ExpireProposals can be served by their indexes, in
// order: no sort of the table. (On PostgreSQL sequential scans are turned
// off for the check, since a tiny table is always cheaper to scan.)
func TestProposalQueriesUseTheirIndexes(t *testing.T) {
	for _, be := range benchBackends {
		t.Run(be.name, func(t *testing.T) {
			db := be.open(t)
			s := migrated(t, db)
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			explain := "EXPLAIN QUERY PLAN "
			if s.Dialect() == sqlstore.Postgres {
				explain = "EXPLAIN "
				if _, err := conn.ExecContext(t.Context(), "SET enable_seqscan = off"); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct {
				index, query string
				args         []any
			}{
				{"parley_proposals_thread", `SELECT token FROM parley_proposals WHERE thread_id = ? ORDER BY created_at, n`,
					[]any{"t"}},
				{"parley_proposals_pending", `UPDATE parley_proposals SET status = ?, decided_at = ?
					WHERE status = ? AND expires_at <= ?`,
					[]any{"expired", timeArg(s, at(0)), "pending", timeArg(s, at(0))}},
			} {
				plan := explainPlan(t, conn, rebind(s, explain+c.query), c.args...)
				if !strings.Contains(plan, c.index) || strings.Contains(plan, "TEMP B-TREE") ||
					strings.Contains(plan, "Sort") {
					t.Errorf("the query does not use %s in order:\n%s", c.index, plan)
				}
			}
		})
	}
}

func explainPlan(t *testing.T, conn *sql.Conn, q string, args ...any) string {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&plan, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}
