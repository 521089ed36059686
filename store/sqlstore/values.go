package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parleyhq/parley/blocks"
)

// sqliteTime is how SQLite columns hold an instant: UTC, microseconds, fixed
// width, so that comparing the text compares the times.
const sqliteTime = "2006-01-02T15:04:05.000000Z"

// Years a stored time may have: what the fixed-width SQLite form can order,
// and well inside PostgreSQL's timestamptz range.
const minYear, maxYear = 1, 9999

// args collects the arguments of one statement, converting Go values to the
// dialect's column types. The first value it cannot store is kept in err,
// which the caller checks before running the statement.
type args struct {
	d   Dialect
	err error
	a   []any
}

func (s *Store) args(n int) *args { return &args{d: s.dialect, a: make([]any, 0, n)} }

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, v...)
	}
}

// add appends values that need no conversion: integers, bools, and
// strings that are keys or names (ids, owners, kinds, statuses), which are
// compared in queries and stored as they are.
func (a *args) add(v ...any) *args { a.a = append(a.a, v...); return a }

// text appends free text (a title, a message's content, a summary, a model's
// call id) or JSON text: any string, escaped on PostgreSQL (see
// escapeText), which leaves JSON unchanged unless it holds U+0001 or bytes
// that are not UTF-8.
func (a *args) text(s string) *args {
	if a.d == Postgres {
		s = escapeText(s)
	}
	a.a = append(a.a, s)
	return a
}

// time appends an instant at microsecond precision in UTC.
func (a *args) time(t time.Time) *args {
	t = t.UTC().Truncate(time.Microsecond)
	if y := t.Year(); y < minYear || y > maxYear {
		a.fail("time %v outside years %d to %d", t, minYear, maxYear)
	}
	if a.d == SQLite {
		a.a = append(a.a, t.Format(sqliteTime))
	} else {
		a.a = append(a.a, t)
	}
	return a
}

// timePtr appends an optional instant; nil is NULL.
func (a *args) timePtr(p *time.Time) *args {
	if p == nil {
		a.a = append(a.a, nil)
		return a
	}
	return a.time(*p)
}

// json appends raw JSON; empty and the literal null are NULL. Anything
// else must be one JSON value.
func (a *args) json(what string, raw []byte) *args {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		a.a = append(a.a, nil)
		return a
	}
	if !json.Valid(raw) {
		a.fail("%s is not valid JSON", what)
	}
	return a.text(string(raw))
}

// exactJSON appends raw JSON as the very bytes given, for a value whose
// bytes matter and not only its meaning (a proposal's Args, which ArgsHash
// hashes); empty is NULL. Anything else must be one JSON value.
func (a *args) exactJSON(what string, raw []byte) *args {
	if len(raw) == 0 {
		a.a = append(a.a, nil)
		return a
	}
	if !json.Valid(raw) {
		a.fail("%s is not valid JSON", what)
	}
	return a.text(string(raw))
}

// blocks appends blocks in their stored (verbose) JSON form; none is NULL.
func (a *args) blocks(bs []blocks.Block) *args {
	if len(bs) == 0 {
		a.a = append(a.a, nil)
		return a
	}
	buf := make([]byte, 0, 128*len(bs))
	buf = append(buf, '[')
	for i := range bs {
		if i > 0 {
			buf = append(buf, ',')
		}
		enc, _ := bs[i].MarshalJSON() // never fails: invalid Data is written as a string
		buf = append(buf, enc...)
	}
	buf = append(buf, ']')
	return a.text(string(buf))
}

// strings appends a list of strings as a JSON array; none is NULL.
func (a *args) strings(ss []string) *args {
	if len(ss) == 0 {
		a.a = append(a.a, nil)
		return a
	}
	b, err := json.Marshal(ss)
	if err != nil {
		a.fail("%v", err)
	}
	return a.text(string(b))
}

// timeDest scans an instant stored by either dialect into a UTC time.
type timeDest struct{ t *time.Time }

func (d timeDest) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("sqlstore: NULL in a NOT NULL time column")
	}
	*d.t = t
	return nil
}

// timePtrDest scans an optional instant; NULL is nil.
type timePtrDest struct{ p **time.Time }

func (d timePtrDest) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil {
		return err
	}
	*d.p = nil
	if ok {
		*d.p = &t
	}
	return nil
}

func scanTime(src any) (time.Time, bool, error) {
	var s string
	switch v := src.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		return v.UTC(), true, nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return time.Time{}, false, fmt.Errorf("sqlstore: cannot scan %T as a time", src)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlstore: stored time %q: %w", s, err)
	}
	return t.UTC(), true, nil
}

// textDest scans a free-text column written by args.text; escaped says
// the stored form is escaped (PostgreSQL).
type textDest struct {
	s       *string
	escaped bool
}

func (d textDest) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*d.s = v
	case []byte:
		*d.s = string(v)
	default:
		return fmt.Errorf("sqlstore: cannot scan %T as text", src)
	}
	if d.escaped {
		*d.s = unescapeText(*d.s)
	}
	return nil
}

// jsonDest scans a nullable JSON column written by args.text into a
// fresh byte slice; NULL is nil. escaped as for textDest.
type jsonDest struct {
	b       *[]byte
	escaped bool
}

func (d jsonDest) Scan(src any) error {
	if src == nil {
		*d.b = nil
		return nil
	}
	if v, ok := src.([]byte); ok && !d.escaped {
		*d.b = bytes.Clone(v) // no round trip through a string; nil stays nil
		return nil
	}
	var s string
	if err := (textDest{&s, d.escaped}).Scan(src); err != nil {
		// textDest fails only on a type it cannot scan; name JSON.
		return fmt.Errorf("sqlstore: cannot scan %T as JSON", src)
	}
	*d.b = []byte(s)
	return nil
}

// text and json return the destinations of free-text and JSON columns in
// the store's dialect.
func (s *Store) text(p *string) textDest { return textDest{p, s.dialect == Postgres} }
func (s *Store) json(p *[]byte) jsonDest { return jsonDest{p, s.dialect == Postgres} }

// decodeBlocks reads the stored form written by args.blocks.
func decodeBlocks(raw []byte) ([]blocks.Block, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var bs []blocks.Block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("sqlstore: stored blocks: %w", err)
	}
	return bs, nil
}

func decodeStrings(raw []byte) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, fmt.Errorf("sqlstore: stored strings: %w", err)
	}
	return ss, nil
}

// rowScanner is what scan functions read from: *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// queryAll runs a query and scans every row into a T. It returns an empty,
// non-nil slice when there are no rows.
func queryAll[T any](ctx context.Context, db *sql.DB, q string, args []any, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
