package sqlmigrate

import (
	"database/sql"
	"errors"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/internal/sqltx"
)

func TestSplitDropsCommentsAndCutsAtLineEndSemicolons(t *testing.T) {
	got := Split("-- a comment\nCREATE TABLE a (x TEXT DEFAULT ';');\n\nCREATE INDEX i\n  ON a (x);\nSELECT 1")
	want := []string{"CREATE TABLE a (x TEXT DEFAULT ';')", "CREATE INDEX i\n  ON a (x)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Errorf("Split = %q, want %q", got, want)
	}
}

func TestLoadOrdersVersionsAndRejectsGapsAndBadNames(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_two.sql": {Data: []byte("SELECT 2;")},
		"m/0001_one.sql": {Data: []byte("SELECT 1;")},
	}
	ms, err := load(fsys, "m")
	if err != nil || len(ms) != 2 || ms[0].Name != "one" || ms[1].Version != 2 {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	if _, err := load(fstest.MapFS{"m/0002_two.sql": {Data: []byte("SELECT 2;")}}, "m"); err == nil {
		t.Error("a gap in versions was accepted")
	}
	if _, err := load(fstest.MapFS{"m/two.sql": {Data: []byte("SELECT 2;")}}, "m"); err == nil {
		t.Error("a file not named NNNN_name.sql was accepted")
	}
}

var errTooNew = errors.New("too new")

// demo is a component of two versions in both dialects.
var demo = Component{Name: "demo", TooNew: errTooNew, Files: fstest.MapFS{
	"migrations/sqlite/0001_one.sql":   {Data: []byte("CREATE TABLE demo_a (x TEXT);")},
	"migrations/sqlite/0002_two.sql":   {Data: []byte("CREATE TABLE demo_b (x TEXT);")},
	"migrations/postgres/0001_one.sql": {Data: []byte("CREATE TABLE demo_a (x TEXT);")},
	"migrations/postgres/0002_two.sql": {Data: []byte("CREATE TABLE demo_b (x TEXT);")},
}}

func TestComponentMigratesOnceAndRefusesANewerSchema(t *testing.T) {
	for _, c := range []struct {
		dialect string
		open    func(testing.TB) *sql.DB
	}{
		{"sqlite", sqltest.SQLiteFile},
		{"postgres", sqltest.Postgres},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			db := c.open(t)
			ctx := t.Context()
			var writes sqltx.WriteLock
			if c.dialect == "sqlite" {
				writes = make(sqltx.WriteLock, 1)
			}
			if cur, latest, err := demo.Version(ctx, db, c.dialect); cur != 0 || latest != 2 || err != nil {
				t.Fatalf("Version before Migrate = %d, %d, %v; want 0, 2, nil", cur, latest, err)
			}
			for range 2 {
				if err := demo.Migrate(ctx, db, c.dialect, writes); err != nil {
					t.Fatal(err)
				}
			}
			if cur, latest, err := demo.Version(ctx, db, c.dialect); cur != 2 || latest != 2 || err != nil {
				t.Fatalf("Version after Migrate = %d, %d, %v; want 2, 2, nil", cur, latest, err)
			}
			var rows int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM parley_schema_migrations WHERE component = 'demo'`).Scan(&rows); err != nil || rows != 2 {
				t.Fatalf("version rows after two Migrates = %d, %v; want 2", rows, err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE parley_schema_migrations SET version = 3 WHERE component = 'demo' AND version = 2`); err != nil {
				t.Fatal(err)
			}
			if err := demo.Migrate(ctx, db, c.dialect, writes); !errors.Is(err, errTooNew) {
				t.Errorf("Migrate over version 3 = %v, want one wrapping the component's TooNew", err)
			}
		})
	}
}
