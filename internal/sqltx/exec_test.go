package sqltx

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestExecReadsTheCountBeforeAnotherTakesTheConnection: a goroutine that
// takes the pool's only connection the moment it is free and holds it in
// Raw, as the store's LISTEN session does, does not keep Exec from
// returning. The hook runs after the statement and before its count is
// read, and returns once the goroutine has the connection or waits for it
// (db.Stats().WaitCount); the hook is the only one, and no test here runs
// in parallel. With db.ExecContext, the count (sql.Result.RowsAffected)
// waited for that goroutine, and a turn's write hung for as long as the
// session listened.
func TestExecReadsTheCountBeforeAnotherTakesTheConnection(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "exec.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)`); err != nil {
		t.Fatal(err)
	}
	release, held := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(release)
		wg.Wait()
	})
	testHookExecuted = func() {
		wg.Go(func() {
			conn, err := db.Conn(ctx)
			if err != nil {
				return
			}
			defer conn.Close()
			conn.Raw(func(any) error {
				close(held)
				<-release
				return nil
			})
		})
		// Wait until it has the connection, or waits for one (the
		// statement's connection is still held).
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			select {
			case <-held:
				return
			default:
			}
			if db.Stats().WaitCount > 0 {
				return
			}
		}
	}
	t.Cleanup(func() { testHookExecuted = nil })
	type result struct {
		n   int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := Exec(ctx, db, `DELETE FROM t WHERE x > ?`, 1)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.n != 2 {
			t.Fatalf("Exec = %d, %v; want 2 rows", r.n, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exec waited for the connection another goroutine took after the statement ran")
	}
}
