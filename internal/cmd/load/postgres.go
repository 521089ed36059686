package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// loopbackDSN parses a postgres:// URL and refuses any host but the local
// machine: a load run creates and drops databases, and must never do that
// elsewhere.
func loopbackDSN(dsn string) (*url.URL, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, errors.New("not a URL") // the error would repeat the password
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, errors.New("want a postgres:// URL")
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
	default:
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("host %q: only 127.0.0.1, localhost or ::1", h)
		}
	}
	return u, nil
}

// database is a fresh PostgreSQL database for one run.
type database struct {
	name  string
	url   string // the DSN with the fresh database in its path
	admin string // the DSN it was created through
}

// createDatabase creates parley_load_<random> through dsn.
func createDatabase(ctx context.Context, dsn string) (*database, error) {
	u, err := loopbackDSN(dsn)
	if err != nil {
		return nil, err
	}
	name := "parley_load_" + randomHex(6)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// The name is ours and plain [a-z0-9_]; quoting it is still right.
	if _, err := db.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	fresh := *u
	fresh.Path = "/" + name
	return &database{name: name, url: fresh.String(), admin: dsn}, nil
}

// drop removes the database, closing the sessions left on it.
func (d *database) drop(ctx context.Context) error {
	db, err := sql.Open("pgx", d.admin)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+d.name+`" WITH (FORCE)`)
	return err
}
