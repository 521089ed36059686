package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// testDatabase returns the path of a SQLite database of the test's own, as
// the example leaves a new file once it has started on it: migrated, the
// demo users' notes seeded. It is a copy of one file set up once per test
// binary. Setting up a file parses every table's SQL in the driver, which
// is C translated to Go: 75 ms a file under -race, in the dozens of apps
// these tests start. The tests that start on a new file themselves (the
// server processes', the notes' and the settings' tests) still do.
func testDatabase(t *testing.T) string {
	t.Helper()
	data, err := migratedFile()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// migratedFile is the file testDatabase copies, set up by openDatabase.
var migratedFile = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "parley-testdb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "parley.db")
	d, err := openDatabase(context.Background(), settings{DatabasePath: path}, testLogger(io.Discard))
	if err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the WAL into the file.
	if err := d.close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})
