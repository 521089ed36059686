package sqlstore_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/racesplit"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// benchBackends are the databases the benchmarks compare: a SQLite file
// (the embedded default) and PostgreSQL (skipped without a server).
var benchBackends = []struct {
	name string
	open func(testing.TB) *sql.DB
}{
	{"SQLiteFile", sqltest.SQLiteFile},
	{"Postgres", sqltest.Postgres},
}

// latencies records one duration per iteration and reports the median and
// 99th percentile beside ns/op.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 { return float64(l[int(p*float64(len(l)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkTurnPersist measures what a turn costs the store: AppendTurn
// (user message and streaming placeholder, one transaction) then the final
// UpdateMessage of the placeholder with 20 blocks and the model messages.
func BenchmarkTurnPersist(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := migrated(b, be.open(b))
			ctx := b.Context()
			final := manyBlocks(20)
			model := []byte(`[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_vms","arguments":"{\"region\":\"eu-west\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"3 VMs"},{"role":"assistant","content":"You have 3 VMs."}]`)
			var th store.Thread
			lat := make(latencies, 0, b.N)
			i := 0
			for b.Loop() {
				if i%50 == 0 { // a new conversation every 50 turns
					th = store.Thread{OwnerID: "bench-user", Title: "bench"}
					if err := s.CreateThread(ctx, &th); err != nil {
						b.Fatal(err)
					}
				}
				i++
				start := time.Now()
				u, a := turn(th.ID)
				if err := s.AppendTurn(ctx, u, a); err != nil {
					b.Fatal(err)
				}
				a.Status, a.Blocks, a.ModelMessages = store.StatusComplete, final, model
				a.InputTokens, a.OutputTokens, a.UpdatedAt = 1200, 340, time.Time{}
				if err := s.UpdateMessage(ctx, a); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}
}

// BenchmarkListThreads50Of10k lists the 50 most recent threads of a user
// who has 10,000, in a table that also holds 10,000 threads of 20 other
// users; 5% of the user's threads are archived (and skipped).
func BenchmarkListThreads50Of10k(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b)
			s := migrated(b, db)
			seedThreads(b, db, s)
			ctx := b.Context()
			lat := make(latencies, 0, b.N)
			for b.Loop() {
				start := time.Now()
				ts, err := s.ListThreads(ctx, "heavy-user", store.ListOptions{Limit: 50})
				if err != nil || len(ts) != 50 {
					b.Fatalf("ListThreads = %d threads, %v", len(ts), err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}
}

// seedThreads inserts the listing benchmark's 20,000 threads with
// multi-row INSERTs in one transaction, then refreshes the planner's
// statistics as a live database's autovacuum would.
func seedThreads(b testing.TB, db *sql.DB, s *sqlstore.Store) {
	b.Helper()
	ctx := b.Context()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	const perStmt = 500
	row := "(?, ?, 'a thread title', ?, ?, ?)"
	q := rebind(s, `INSERT INTO parley_threads (id, owner_id, title, created_at, updated_at, archived_at) VALUES `+
		strings.TrimSuffix(strings.Repeat(row+", ", perStmt), ", "))
	var args []any
	for i := range 20000 {
		owner := "heavy-user"
		if i%2 == 1 {
			owner = fmt.Sprint("other-user-", i%40)
		}
		when := base.Add(time.Duration(i) * time.Second)
		var archived any
		if i%40 == 0 {
			archived = timeArg(s, when)
		}
		args = append(args, fmt.Sprintf("%08d-bench", i), owner, timeArg(s, when), timeArg(s, when), archived)
		if len(args) == perStmt*5 {
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				b.Fatal(err)
			}
			args = args[:0]
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE parley_threads"); err != nil {
		b.Fatal(err)
	}
}

// The listing query walks an index in order and stops after 50 rows, with
// the table seeded as in the benchmark: no full scan, no sort of all the
// user's threads. (PostgreSQL may prefer the updated_at index when one user
// owns half the table, as here; with many users it takes the owner index.)
func TestListThreadsWalksAnIndex(t *testing.T) {
	for _, be := range benchBackends {
		t.Run(be.name, func(t *testing.T) {
			if be.name != "Postgres" {
				racesplit.Skip(t) // seeding SQLite took 6-13 s under -race, and nothing here is concurrent
			}
			db := be.open(t)
			s := migrated(t, db)
			seedThreads(t, db, s)
			explain := "EXPLAIN "
			if s.Dialect() == sqlstore.SQLite {
				explain = "EXPLAIN QUERY PLAN "
			}
			// The query ListThreads runs.
			rows, err := db.QueryContext(t.Context(), rebind(s, explain+`SELECT id FROM parley_threads
				WHERE owner_id = ? AND archived_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT ?`), "heavy-user", 50)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			var plan strings.Builder
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintln(&plan, vals...)
			}
			p := plan.String()
			bad := strings.Contains(p, "Seq Scan") || strings.Contains(p, "->  Sort") || strings.HasPrefix(p, "Sort") ||
				strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "parley_threads_")
			if bad {
				t.Errorf("the listing does not walk the owner index:\n%s", plan.String())
			}
		})
	}
}
