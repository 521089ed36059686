package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/quota/sqlquota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/sqlstore"
)

// database is what the example keeps: the threads, the quota ledger and
// the demo notes, all in one database, or all in memory.
type database struct {
	store  store.Store
	ledger quota.Ledger
	notes  *notes
	sql    *sql.DB // nil in memory
}

// close releases the database: closes the pool, or does nothing in memory.
func (d database) close() error {
	if d.sql == nil {
		return nil
	}
	return d.sql.Close()
}

// openDatabase opens the database the settings name: PostgreSQL for a
// postgres:// DatabaseURL, else a SQLite file at DatabasePath, else memory.
// It runs the store's and the ledger's migrations and sets up the notes.
func openDatabase(ctx context.Context, s settings, log *slog.Logger) (database, error) {
	policy := quota.Policy{Defaults: s.Quota}
	var db *sql.DB
	var err error
	postgres := false
	switch {
	case strings.HasPrefix(s.DatabaseURL, "postgres://") || strings.HasPrefix(s.DatabaseURL, "postgresql://"):
		db, err = sql.Open("pgx", s.DatabaseURL)
		postgres = true
		conns := cmp.Or(s.MaxConns, defaultPostgresConns)
		log.Info("using PostgreSQL", "host", hostOf(s.DatabaseURL), "max_conns", conns)
		boundPool(db, conns)
	case s.DatabaseURL != "":
		return database{}, fmt.Errorf("PARLEY_DATABASE_URL: want a postgres:// URL")
	case s.DatabasePath != "":
		if err := checkDatabaseDir(s.DatabasePath); err != nil {
			return database{}, err
		}
		db, err = sql.Open("sqlite", "file:"+s.DatabasePath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		conns := cmp.Or(s.MaxConns, defaultSQLiteConns)
		log.Info("using SQLite", "file", s.DatabasePath, "max_conns", conns)
		boundPool(db, conns)
	default:
		log.Info("using the in-memory store: conversations and notes are lost on restart")
		l, err := memquota.New(policy)
		return database{store: memstore.New(), ledger: l, notes: newMemoryNotes()}, err
	}
	if err != nil {
		return database{}, err
	}
	d := database{sql: db}
	sq, err := sqlstore.New(db, sqlstore.Options{})
	if err == nil {
		d.store, err = sq, sq.Migrate(ctx)
	}
	var l *sqlquota.Ledger
	if err == nil {
		l, err = sqlquota.New(db, policy, sqlquota.Options{})
	}
	if err == nil {
		d.ledger, err = l, l.Migrate(ctx)
	}
	if err == nil {
		d.notes, err = openNotes(ctx, db, postgres)
	}
	if err != nil {
		_ = db.Close()
		return database{}, fmt.Errorf("database: %w", err)
	}
	return d, nil
}

// The database pool's default bounds (PARLEY_DATABASE_MAX_CONNS).
//
// PostgreSQL: 16 leaves room under its default max_connections of 100 for
// several instances and for other clients; past it, a request waits for a
// connection instead of failing with "too many clients".
//
// SQLite: in WAL mode the file has one writer at a time however many
// connections there are, and readers run beside it. The store and the
// ledger each queue their write transactions in Go, so at most a few
// connections write at once and the rest serve reads. The driver
// (modernc.org/sqlite, pure Go) is CPU-bound, so readers beyond the cores
// gain nothing, while each connection keeps a page cache of its own and a
// writer waiting on the file lock polls it through the busy timeout and
// fails after 10s, where one waiting for the pool just waits. 8 keeps reads
// going beside the writers on a small machine; 200 streams x 5 rounds with
// pools of 1 to 256 all ran without an error, the latency differences
// within the noise between runs.
const (
	defaultPostgresConns = 16
	defaultSQLiteConns   = 8
)

// boundPool caps db at n open connections and keeps as many idle, so a
// busy server does not open and close them per request; one idle for five
// minutes is closed. A request that finds all n busy waits for one (up to
// its context) instead of opening another.
func boundPool(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
}

// hostOf names a database URL's host without its credentials, for the log.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return u.Host
}

// sweepRetention deletes threads idle for longer than days, once an hour,
// until ctx ends. days < 0 disables it.
func sweepRetention(ctx context.Context, st store.Store, days int, log *slog.Logger) {
	sq, ok := st.(*sqlstore.Store)
	if !ok || days < 0 {
		return
	}
	sweepEvery(ctx, time.Hour, true, func(now time.Time) {
		n, err := sq.DeleteThreadsOlderThan(ctx, now.AddDate(0, 0, -days))
		if err != nil {
			if ctx.Err() == nil {
				log.Error("retention sweep", "err", err)
			}
		} else if n > 0 {
			log.Info("retention sweep deleted old threads", "threads", n, "days", days)
		} else {
			log.Debug("retention sweep found no old threads", "days", days)
		}
	})
}
