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

// openStore opens the store and the quota ledger the settings name:
// PostgreSQL for a postgres:// DatabaseURL, else a SQLite file at
// DatabasePath, else memory. It runs the migrations. The returned close func
// releases the database.
func openStore(ctx context.Context, s settings, log *slog.Logger) (store.Store, quota.Ledger, func() error, error) {
	policy := quota.Policy{Defaults: s.Quota}
	var db *sql.DB
	var err error
	switch {
	case strings.HasPrefix(s.DatabaseURL, "postgres://") || strings.HasPrefix(s.DatabaseURL, "postgresql://"):
		db, err = sql.Open("pgx", s.DatabaseURL)
		log.Info("using PostgreSQL", "host", hostOf(s.DatabaseURL))
	case s.DatabaseURL != "":
		return nil, nil, nil, fmt.Errorf("PARLEY_DATABASE_URL: want a postgres:// URL")
	case s.DatabasePath != "":
		db, err = sql.Open("sqlite", "file:"+s.DatabasePath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		log.Info("using SQLite", "file", s.DatabasePath)
	default:
		log.Info("using the in-memory store: conversations are lost on restart")
		l, err := memquota.New(policy)
		return memstore.New(), l, func() error { return nil }, err
	}
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := sqlstore.New(db, sqlstore.Options{})
	if err == nil {
		err = st.Migrate(ctx)
	}
	var l *sqlquota.Ledger
	if err == nil {
		l, err = sqlquota.New(db, policy, sqlquota.Options{})
	}
	if err == nil {
		err = l.Migrate(ctx)
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, nil, fmt.Errorf("database: %w", err)
	}
	return st, l, db.Close, nil
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
