package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

func TestMigrateTwiceIsANoOp(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := migrated(t, db)
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
			cur, latest, err := s.SchemaVersion(t.Context())
			if err != nil || cur != latest || latest < 1 {
				t.Errorf("SchemaVersion = %d, %d, %v; want the latest version twice", cur, latest, err)
			}
			if n := versionRows(t, db); n != latest {
				t.Errorf("version table has %d rows for the store, want %d", n, latest)
			}
			if _, err := s.GetThread(t.Context(), th.ID); err != nil {
				t.Errorf("the second Migrate lost data: %v", err)
			}
		})
	}
}

// Instances starting at once each call Migrate: all must succeed and the
// migrations must be applied exactly once.
func TestConcurrentMigrateFromSeparatePools(t *testing.T) {
	const n = 4
	for _, c := range sharedBackends {
		t.Run(c.name, func(t *testing.T) {
			open := c.open(t)
			stores := make([]*sqlstore.Store, n)
			for i := range stores {
				s, err := sqlstore.New(open(), sqlstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				stores[i] = s
			}
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Go(func() {
					<-start
					errs[i] = s.Migrate(t.Context())
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("Migrate %d: %v", i, err)
				}
			}
			db := open()
			_, latest, _ := stores[0].SchemaVersion(t.Context())
			if got := versionRows(t, db); got != latest {
				t.Errorf("version table has %d rows for the store, want %d (each migration once)", got, latest)
			}
			th := store.Thread{OwnerID: "u"}
			if err := stores[n-1].CreateThread(t.Context(), &th); err != nil {
				t.Errorf("CreateThread after concurrent migrations: %v", err)
			}
		})
	}
}

func TestMigrateRefusesANewerSchema(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := migrated(t, db)
			_, latest, err := s.SchemaVersion(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			// What a newer Parley would have recorded.
			if _, err := db.ExecContext(t.Context(), rebind(s,
				`INSERT INTO parley_schema_migrations (component, version, name, applied_at) VALUES ('store', ?, 'from_the_future', ?)`),
				latest+1, timeArg(s, at(0))); err != nil {
				t.Fatal(err)
			}
			err = s.Migrate(t.Context())
			if !errors.Is(err, sqlstore.ErrSchemaTooNew) {
				t.Fatalf("Migrate of a newer schema: err = %v, want ErrSchemaTooNew", err)
			}
			t.Logf("the refusal reads: %v", err)
			if cur, _, _ := s.SchemaVersion(t.Context()); cur != latest+1 {
				t.Errorf("SchemaVersion after the refusal = %d, want %d untouched", cur, latest+1)
			}
		})
	}
}

func TestUnmigratedDatabaseSaysSo(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, err := sqlstore.New(b.open(t), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if cur, latest, err := s.SchemaVersion(t.Context()); err != nil || cur != 0 || latest < 1 {
				t.Errorf("SchemaVersion = %d, %d, %v; want 0, latest, nil", cur, latest, err)
			}
			ctx := t.Context()
			_, err = s.GetThread(ctx, "x")
			wantNotMigrated(t, "GetThread", err)
			wantNotMigrated(t, "CreateThread", s.CreateThread(ctx, &store.Thread{OwnerID: "u"}))
			_, err = s.ListThreads(ctx, "u", store.ListOptions{})
			wantNotMigrated(t, "ListThreads", err)
			wantNotMigrated(t, "AppendTurn", s.AppendTurn(ctx,
				&store.Message{ThreadID: "x", Role: store.RoleUser}, &store.Message{Role: store.RoleAssistant}))
			_, err = s.ListMessages(ctx, "x")
			wantNotMigrated(t, "ListMessages", err)
			wantNotMigrated(t, "AppendAudit", s.AppendAudit(ctx, &store.AuditEvent{Kind: "k", ActorID: "u"}))
			_, err = s.DeleteThreadsOlderThan(ctx, at(0))
			wantNotMigrated(t, "DeleteThreadsOlderThan", err)
			wantNotMigrated(t, "CreateProposal", s.CreateProposal(ctx,
				&store.Proposal{Token: "tok", UserID: "u", ThreadID: "x", Tool: "t", ExpiresAt: at(1)}))
			_, err = s.GetProposal(ctx, "tok")
			wantNotMigrated(t, "GetProposal", err)
			_, err = s.DecideProposal(ctx, "tok", store.ProposalApplied, at(1))
			wantNotMigrated(t, "DecideProposal", err)
			_, err = s.ListProposals(ctx, "x")
			wantNotMigrated(t, "ListProposals", err)
			_, err = s.ExpireProposals(ctx, at(1))
			wantNotMigrated(t, "ExpireProposals", err)
		})
	}
}

func wantNotMigrated(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, sqlstore.ErrNotMigrated) {
		t.Errorf("%s on an unmigrated database: err = %v, want ErrNotMigrated", op, err)
	}
}

func versionRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM parley_schema_migrations WHERE component = 'store'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
