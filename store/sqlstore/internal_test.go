package sqlstore

import (
	"slices"
	"testing"
)

// Both dialects have the same migrations: a version means one schema.
func TestMigrationsMatchAcrossDialects(t *testing.T) {
	lite, err := migrations(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrations(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones; want the same, at least one", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].version != pg[i].version || lite[i].name != pg[i].name {
			t.Errorf("migration %d: SQLite %d_%s, PostgreSQL %d_%s", i, lite[i].version, lite[i].name, pg[i].version, pg[i].name)
		}
		if len(lite[i].stmts) != len(pg[i].stmts) {
			t.Errorf("migration %d: %d SQLite statements, %d PostgreSQL ones", lite[i].version, len(lite[i].stmts), len(pg[i].stmts))
		}
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- comment; not a statement\nCREATE TABLE a (\n  x TEXT -- inline\n);\n\nCREATE INDEX i ON a (x);\nSELECT 1")
	want := []string{"CREATE TABLE a (\n  x TEXT -- inline\n)", "CREATE INDEX i ON a (x)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Errorf("splitStatements = %q, want %q", got, want)
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
