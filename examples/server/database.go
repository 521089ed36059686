package main

import (
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
	close  func() error // releases the database
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
		log.Info("using PostgreSQL", "host", hostOf(s.DatabaseURL))
	case s.DatabaseURL != "":
		return database{}, fmt.Errorf("PARLEY_DATABASE_URL: want a postgres:// URL")
	case s.DatabasePath != "":
		db, err = sql.Open("sqlite", "file:"+s.DatabasePath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		log.Info("using SQLite", "file", s.DatabasePath)
	default:
		log.Info("using the in-memory store: conversations and notes are lost on restart")
		l, err := memquota.New(policy)
		return database{store: memstore.New(), ledger: l, notes: newMemoryNotes(), close: func() error { return nil }}, err
	}
	if err != nil {
		return database{}, err
	}
	d := database{close: db.Close}
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
	sweep := func(now time.Time) {
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
	}
	sweep(time.Now())
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			sweep(now)
		}
	}
}
