package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parleyhq/parley/internal/sqltest"
)

func TestDatabasePoolIsBounded(t *testing.T) {
	for name, c := range map[string]struct {
		s    func(t *testing.T) settings
		want int
	}{
		"sqlite default": {func(t *testing.T) settings { return settings{DatabasePath: filepath.Join(t.TempDir(), "p.db")} }, defaultSQLiteConns},
		"sqlite set": {func(t *testing.T) settings {
			return settings{DatabasePath: filepath.Join(t.TempDir(), "p.db"), MaxConns: 3}
		}, 3},
		"postgres default": {func(t *testing.T) settings { return settings{DatabaseURL: sqltest.PostgresDSN(t)} }, defaultPostgresConns},
		"postgres set":     {func(t *testing.T) settings { return settings{DatabaseURL: sqltest.PostgresDSN(t), MaxConns: 5} }, 5},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := openDatabase(context.Background(), c.s(t), testLogger(io.Discard))
			if err != nil {
				t.Fatal(err)
			}
			defer d.close()
			if got := d.sql.Stats().MaxOpenConnections; got != c.want {
				t.Errorf("max open connections %d, want %d", got, c.want)
			}
		})
	}
}

// A pool far smaller than the load makes requests wait for a connection,
// never fail for want of one.
func TestASmallPoolMakesLoadWaitNotFail(t *testing.T) {
	forEachSQLStore(t, func(t *testing.T, s settings) {
		s.MaxConns, s.MaxTurnsPerUser = 2, -1
		srv, _ := newTestApp(t, s)
		var wg sync.WaitGroup
		for i := range 30 {
			user := []string{"alice", "bob", "sam"}[i%3]
			wg.Go(func() {
				resp := doReq(t, srv, "POST", "/api/chat/stream", user, `{"message":"show my notes"}`)
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"finish":"stop"`)) {
					t.Errorf("%s: %d %s", user, resp.StatusCode, raw)
				}
			})
		}
		wg.Wait()
	})
}
