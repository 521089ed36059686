package main

import (
	"context"
	"io"
	"log/slog"
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
	migrated.once.Do(func() {
		dir, err := os.MkdirTemp("", "parley-testdb-")
		if err != nil {
			migrated.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "parley.db")
		d, err := openDatabase(context.Background(), settings{DatabasePath: path}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			migrated.err = err
			return
		}
		// Closing the last connection checkpoints the WAL into the file.
		if migrated.err = d.close(); migrated.err == nil {
			migrated.data, migrated.err = os.ReadFile(path)
		}
	})
	if migrated.err != nil {
		t.Fatal(migrated.err)
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	if err := os.WriteFile(path, migrated.data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// migrated is the file testDatabase copies.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}
