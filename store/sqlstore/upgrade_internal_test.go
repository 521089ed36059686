package sqlstore

import (
	"database/sql"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqlmigrate"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
)

// A database at schema version 2, with threads in it, is brought to the
// latest version by Migrate without losing them, and its threads take
// proposals afterwards.
func TestMigrateFromVersion2KeepsThreads(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
	}{
		{"SQLiteFile", sqltest.SQLiteFile},
		{"Postgres", sqltest.Postgres},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.open(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ms, err := migrations(s.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.write(ctx, func(q querier) error {
				return sqlmigrate.Apply(ctx, q, s.dialect == Postgres, component, ms[:2], ErrSchemaTooNew)
			}); err != nil {
				t.Fatalf("migrating to version 2: %v", err)
			}
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(ctx, &th); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate from version 2: %v", err)
			}
			if cur, latest, err := s.SchemaVersion(ctx); err != nil || cur != latest || cur < 3 {
				t.Errorf("SchemaVersion = %d, %d, %v; want the latest (at least 3) twice", cur, latest, err)
			}
			if _, err := s.GetThread(ctx, th.ID); err != nil {
				t.Errorf("the thread written at version 2: %v", err)
			}
			p := store.Proposal{Token: "tok", UserID: "u", ThreadID: th.ID, Tool: "t", ExpiresAt: time.Now().Add(time.Hour)}
			if err := s.CreateProposal(ctx, &p); err != nil {
				t.Errorf("CreateProposal after the upgrade: %v", err)
			}
		})
	}
}
