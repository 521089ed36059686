package sqlmigrate

import (
	"slices"
	"testing"
	"testing/fstest"
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
	ms, err := Load(fsys, "m")
	if err != nil || len(ms) != 2 || ms[0].Name != "one" || ms[1].Version != 2 {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	if _, err := Load(fstest.MapFS{"m/0002_two.sql": {Data: []byte("SELECT 2;")}}, "m"); err == nil {
		t.Error("a gap in versions was accepted")
	}
	if _, err := Load(fstest.MapFS{"m/two.sql": {Data: []byte("SELECT 2;")}}, "m"); err == nil {
		t.Error("a file not named NNNN_name.sql was accepted")
	}
}
