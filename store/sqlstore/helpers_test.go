package sqlstore_test

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/store/sqlstore"
)

// base is a reference instant with microseconds, in a zone that is not UTC.
var base = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("UTC+05:30", 5*3600+1800))

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

func openSQLite(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// countRows counts the rows of table, orphans included.
func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// rebind and timeArg let tests write raw SQL for either dialect.
func rebind(s *sqlstore.Store, q string) string {
	if s.Dialect() != sqlstore.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func timeArg(s *sqlstore.Store, t time.Time) any {
	if s.Dialect() == sqlstore.SQLite {
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t
}
