package sqlquota_test

import (
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
)

func newLedger(t testing.TB, db *sql.DB) *sqlquota.Ledger {
	t.Helper()
	l, err := sqlquota.New(db, quota.Policy{}, sqlquota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMigrateIsIdempotent(t *testing.T) {
	eachBackend(t, false, func(t *testing.T, open func(testing.TB) *sql.DB) {
		l := newLedger(t, open(t))
		if cur, latest, err := l.SchemaVersion(t.Context()); err != nil || cur != 0 || latest < 1 {
			t.Fatalf("SchemaVersion before Migrate = %d, %d, %v; want 0, >= 1, nil", cur, latest, err)
		}
		for range 3 {
			if err := l.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if cur, latest, err := l.SchemaVersion(t.Context()); err != nil || cur != latest {
			t.Fatalf("SchemaVersion after Migrate = %d, %d, %v; want equal", cur, latest, err)
		}
	})
}

// Instances starting at once all migrate; each version is applied once.
func TestMigrateConcurrently(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t testing.TB) func() *sql.DB
	}{
		{"SQLiteFile", func(t testing.TB) func() *sql.DB {
			dsn := sqltest.SQLiteDSN(t.TempDir() + "/q.db")
			return func() *sql.DB {
				db, err := sql.Open("sqlite", dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
		}},
		{"Postgres", func(t testing.TB) func() *sql.DB {
			dsn := sqltest.PostgresDSN(t)
			return func() *sql.DB { return sqltest.OpenPostgres(t, dsn) }
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			const instances = 8
			dbs := make([]*sql.DB, instances)
			for i := range dbs {
				dbs[i] = open()
			}
			var wg sync.WaitGroup
			errs := make([]error, instances)
			for i, db := range dbs {
				wg.Go(func() { errs[i] = newLedger(t, db).Migrate(t.Context()) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := dbs[0].QueryRowContext(t.Context(),
				`SELECT COUNT(*) FROM parley_schema_migrations WHERE component = 'quota'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			_, latest, _ := newLedger(t, dbs[0]).SchemaVersion(t.Context())
			if n != latest {
				t.Errorf("%d version rows for component quota, want %d (one per version)", n, latest)
			}
		})
	}
}

func TestMigrateRefusesANewerSchema(t *testing.T) {
	db := sqltest.SQLiteMemory(t)
	l := newLedger(t, db)
	if err := l.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(),
		`INSERT INTO parley_schema_migrations (component, version, name, applied_at) VALUES ('quota', 999, 'future', '2100-01-01T00:00:00.000000Z')`); err != nil {
		t.Fatal(err)
	}
	if err := l.Migrate(t.Context()); !errors.Is(err, sqlquota.ErrSchemaTooNew) {
		t.Fatalf("Migrate over a newer schema = %v, want ErrSchemaTooNew", err)
	}
}

func TestUnmigratedDatabaseIsErrNotMigrated(t *testing.T) {
	l := newLedger(t, sqltest.SQLiteMemory(t))
	_, err := l.Usage(t.Context(), "u", timeZero)
	if !errors.Is(err, sqlquota.ErrNotMigrated) {
		t.Fatalf("Usage before Migrate = %v, want ErrNotMigrated", err)
	}
}

var timeZero = time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)

// PruneUsage deletes only the rows of periods over by the cutoff.
func TestPruneUsageDeletesEndedPeriodsOnly(t *testing.T) {
	l := migrated(t, sqltest.SQLiteMemory(t), quota.Policy{})
	ctx := t.Context()
	day1 := timeZero // Tuesday 5 May 2026
	h, err := l.Reserve(ctx, "u", 10, day1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, h, 4); err != nil {
		t.Fatal(err)
	}
	n, err := l.PruneUsage(ctx, day1.Add(48*time.Hour)) // Thursday: only Tuesday is over
	if err != nil || n != 1 {
		t.Fatalf("PruneUsage = %d, %v; want 1 (the daily row)", n, err)
	}
	u, err := l.Usage(ctx, "u", day1)
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != 0 || u.Weekly.Used != 4 || u.Monthly.Used != 4 {
		t.Errorf("after pruning: daily %d, weekly %d, monthly %d; want 0, 4, 4", u.Daily.Used, u.Weekly.Used, u.Monthly.Used)
	}
}
