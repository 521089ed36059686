package sqlstore

import (
	"github.com/parleyhq/parley/internal/sqlmigrate"
	"slices"
	"testing"
)

// Both dialects have the same migrations: a version means one schema. A
// version may have nothing to do on one dialect (4, which escapes text on
// PostgreSQL only): its file there holds only comments.
func TestMigrationsMatchAcrossDialects(t *testing.T) {
	lite, err := schema.Migrations(string(SQLite))
	if err != nil {
		t.Fatal(err)
	}
	pg, err := schema.Migrations(string(Postgres))
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones; want the same, at least one", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].Version != pg[i].Version || lite[i].Name != pg[i].Name {
			t.Errorf("migration %d: SQLite %d_%s, PostgreSQL %d_%s", i, lite[i].Version, lite[i].Name, pg[i].Version, pg[i].Name)
		}
		if len(lite[i].Stmts) != len(pg[i].Stmts) && len(lite[i].Stmts) != 0 && len(pg[i].Stmts) != 0 {
			t.Errorf("migration %d: %d SQLite statements, %d PostgreSQL ones", lite[i].Version, len(lite[i].Stmts), len(pg[i].Stmts))
		}
	}
}

func TestSplitStatements(t *testing.T) {
	got := sqlmigrate.Split("-- comment; not a statement\nCREATE TABLE a (\n  x TEXT -- inline\n);\n\nCREATE INDEX i ON a (x);\nSELECT 1")
	want := []string{"CREATE TABLE a (\n  x TEXT -- inline\n)", "CREATE INDEX i ON a (x)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Errorf("Split = %q, want %q", got, want)
	}
}

func TestRebindNumbersPlaceholdersForPostgres(t *testing.T) {
	pg := &Store{dialect: Postgres}
	if got := pg.rebind("a = ? AND b IN (?, ?)"); got != "a = $1 AND b IN ($2, $3)" {
		t.Errorf("rebind = %q", got)
	}
	lite := &Store{dialect: SQLite}
	if got := lite.rebind("a = ?"); got != "a = ?" {
		t.Errorf("SQLite rebind = %q", got)
	}
}
