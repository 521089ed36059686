package sqlstore_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

func TestNewDetectsTheDialect(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
		want sqlstore.Dialect
	}{
		{"SQLite", sqltest.SQLiteMemory, sqlstore.SQLite},
		{"Postgres", sqltest.Postgres, sqlstore.Postgres},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := sqlstore.New(c.open(t), sqlstore.Options{})
			if err != nil || s.Dialect() != c.want {
				t.Errorf("New = %v, %v; want dialect %s", s, err, c.want)
			}
		})
	}
}

func TestNewRejectsWhatItCannotUse(t *testing.T) {
	if _, err := sqlstore.New(nil, sqlstore.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	// A driver it does not know needs Options.Dialect.
	unknown := sql.OpenDB(&faultConnector{base: sqliteConnector(t, ":memory:")})
	defer unknown.Close()
	if _, err := sqlstore.New(unknown, sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "Options.Dialect") {
		t.Errorf("New with an unknown driver: err = %v, want one naming Options.Dialect", err)
	}
	if _, err := sqlstore.New(unknown, sqlstore.Options{Dialect: "oracle"}); err == nil {
		t.Error("New with an unknown dialect succeeded")
	}
	if _, err := sqlstore.New(unknown, sqlstore.Options{Dialect: sqlstore.SQLite}); err != nil {
		t.Errorf("New with an explicit dialect: %v", err)
	}
}

// Every method returns an error, not a panic, once the host has closed the
// pool.
func TestClosedDatabaseFailsEveryMethod(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := migrated(t, db)
			ctx := t.Context()
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(ctx, &th); err != nil {
				t.Fatal(err)
			}
			u, a := turn(th.ID)
			if err := s.AppendTurn(ctx, u, a); err != nil {
				t.Fatal(err)
			}
			db.Close()
			u2, a2 := turn(th.ID)
			for name, call := range map[string]func() error{
				"Migrate":       func() error { return s.Migrate(ctx) },
				"CreateThread":  func() error { return s.CreateThread(ctx, &store.Thread{OwnerID: "u"}) },
				"GetThread":     func() error { _, err := s.GetThread(ctx, th.ID); return err },
				"ListThreads":   func() error { _, err := s.ListThreads(ctx, "u", store.ListOptions{}); return err },
				"RenameThread":  func() error { return s.RenameThread(ctx, th.ID, "x") },
				"ArchiveThread": func() error { return s.ArchiveThread(ctx, th.ID, at(1)) },
				"DeleteThread":  func() error { return s.DeleteThread(ctx, th.ID) },
				"RequestCancel": func() error { return s.RequestCancel(ctx, th.ID, at(1)) },
				"ClearCancel":   func() error { return s.ClearCancel(ctx, th.ID) },
				"AppendTurn":    func() error { return s.AppendTurn(ctx, u2, a2) },
				"UpdateMessage": func() error { return s.UpdateMessage(ctx, a) },
				"GetMessage":    func() error { _, err := s.GetMessage(ctx, a.ID); return err },
				"ListMessages":  func() error { _, err := s.ListMessages(ctx, th.ID); return err },
				"AppendAudit":   func() error { return s.AppendAudit(ctx, &store.AuditEvent{Kind: "k", ActorID: "u"}) },
				"ListAudit":     func() error { _, err := s.ListAudit(ctx, store.AuditFilter{}); return err },
				"CreateProposal": func() error {
					return s.CreateProposal(ctx, &store.Proposal{Token: "tok", UserID: "u", ThreadID: th.ID, Tool: "t", ExpiresAt: at(1)})
				},
				"GetProposal": func() error { _, err := s.GetProposal(ctx, "tok"); return err },
				"DecideProposal": func() error {
					_, err := s.DecideProposal(ctx, "tok", store.ProposalApplied, at(1))
					return err
				},
				"ListProposals":   func() error { _, err := s.ListProposals(ctx, th.ID); return err },
				"ExpireProposals": func() error { _, err := s.ExpireProposals(ctx, at(1)); return err },
				"SchemaVersion":   func() error { _, _, err := s.SchemaVersion(ctx); return err },
				"SetModelPreference": func() error {
					return s.SetModelPreference(ctx, store.ModelPreference{UserID: "u", Connection: "c", Model: "m"})
				},
				"ModelPreference":      func() error { _, err := s.ModelPreference(ctx, "u"); return err },
				"ClearModelPreference": func() error { return s.ClearModelPreference(ctx, "u") },
				"DeleteThreadsOlderThan": func() error {
					_, err := s.DeleteThreadsOlderThan(ctx, time.Now())
					return err
				},
			} {
				err := call()
				if err == nil {
					t.Errorf("%s on a closed database succeeded", name)
				} else if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) {
					t.Errorf("%s on a closed database: %v, want an infrastructure error, not a store sentinel", name, err)
				}
			}
		})
	}
}

// A database that fails in the middle of a turn's transaction leaves no
// trace of the turn: the thread is not bumped, no message is written, no
// Seq is used up. The Engine then shows the user an error block.
func TestFailureInsideAppendTurnWritesNothing(t *testing.T) {
	for _, c := range []struct {
		name    string
		connect func(t *testing.T) (driver.Connector, sqlstore.Dialect)
	}{
		{"SQLiteFile", func(t *testing.T) (driver.Connector, sqlstore.Dialect) {
			return sqliteConnector(t, sqltest.SQLiteDSN(filepath.Join(t.TempDir(), "f.db"))), sqlstore.SQLite
		}},
		{"Postgres", func(t *testing.T) (driver.Connector, sqlstore.Dialect) {
			dsn := sqltest.PostgresDSN(t)
			pg := sqltest.OpenPostgres(t, dsn)
			dc, err := pg.Driver().(driver.DriverContext).OpenConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			return dc, sqlstore.Postgres
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, dialect := c.connect(t)
			fc := &faultConnector{base: base}
			db := sql.OpenDB(fc)
			t.Cleanup(func() { db.Close() })
			s, err := sqlstore.New(db, sqlstore.Options{Dialect: dialect})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			th := store.Thread{OwnerID: "u", CreatedAt: at(0), UpdatedAt: at(0)}
			if err := s.CreateThread(ctx, &th); err != nil {
				t.Fatal(err)
			}

			// The thread row is updated first; the message insert fails.
			fc.failOn.Store("INSERT INTO parley_messages")
			u, a := turn(th.ID)
			if err := s.AppendTurn(ctx, u, a); !errors.Is(err, errInjected) {
				t.Fatalf("AppendTurn with a failing insert: err = %v, want the injected fault", err)
			}
			if u.ID != "" || a.Seq != 0 {
				t.Errorf("the failed AppendTurn filled the caller's messages: %+v, %+v", u, a)
			}
			fc.failOn.Store("")

			got, err := s.GetThread(ctx, th.ID)
			if err != nil || !got.UpdatedAt.Equal(th.UpdatedAt) {
				t.Errorf("after the failed turn GetThread = %v, %v; want UpdatedAt still %v", got.UpdatedAt, err, th.UpdatedAt)
			}
			if ms, err := s.ListMessages(ctx, th.ID); err != nil || len(ms) != 0 {
				t.Errorf("after the failed turn ListMessages = %d messages, %v; want none", len(ms), err)
			}
			u, a = turn(th.ID)
			if err := s.AppendTurn(ctx, u, a); err != nil || u.Seq != 1 || a.Seq != 2 {
				t.Errorf("the next AppendTurn: Seq %d, %d, err %v; want 1, 2 (no Seq used up)", u.Seq, a.Seq, err)
			}

			// A failing final write leaves the placeholder as it was.
			fc.failOn.Store("UPDATE parley_messages")
			final := *a
			final.Status, final.Blocks = store.StatusComplete, manyBlocks(20)
			if err := s.UpdateMessage(ctx, &final); !errors.Is(err, errInjected) {
				t.Fatalf("UpdateMessage with a failing update: err = %v, want the injected fault", err)
			}
			fc.failOn.Store("")
			if m, err := s.GetMessage(ctx, a.ID); err != nil || m.Status != store.StatusStreaming || len(m.Blocks) != 0 {
				t.Errorf("after the failed update the placeholder = %q with %d blocks, %v; want it unchanged", m.Status, len(m.Blocks), err)
			}
		})
	}
}

// Caller-chosen ids and owners are values, never SQL: quotes, comment
// markers and placeholders in them are stored and found byte for byte.
func TestHostileIDsAreBoundNotSpliced(t *testing.T) {
	hostile := []string{
		`'; DROP TABLE parley_threads; --`,
		`x' OR '1'='1`,
		`"; DELETE FROM parley_messages; --`,
		`? $1 $2 :id @id %s %_`,
		`\'\\`,
		"ünï 🎉\ttab\nnewline",
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := migrated(t, b.open(t))
			ctx := t.Context()
			for i, h := range hostile {
				th := store.Thread{ID: "thread " + h, OwnerID: "owner " + h, Title: h}
				if err := s.CreateThread(ctx, &th); err != nil {
					t.Fatalf("CreateThread(%q): %v", h, err)
				}
				u, a := turn(th.ID)
				u.ID, a.ID = "user "+h, "assistant "+h
				u.Guard.Categories = []string{h}
				if err := s.AppendTurn(ctx, u, a); err != nil {
					t.Fatalf("AppendTurn(%q): %v", h, err)
				}
				if err := s.RenameThread(ctx, th.ID, h+h); err != nil {
					t.Fatalf("RenameThread(%q): %v", h, err)
				}
				if err := s.AppendAudit(ctx, &store.AuditEvent{ID: "audit " + h, Kind: h, ActorID: h, ThreadID: th.ID}); err != nil {
					t.Fatalf("AppendAudit(%q): %v", h, err)
				}
				ts, err := s.ListThreads(ctx, "owner "+h, store.ListOptions{})
				if err != nil || len(ts) != 1 || ts[0].ID != th.ID || ts[0].Title != h+h {
					t.Errorf("ListThreads(%q) = %+v, %v", h, ts, err)
				}
				ms, err := s.ListMessages(ctx, th.ID)
				if err != nil || len(ms) != 2 || ms[0].ID != u.ID || ms[1].ID != a.ID || ms[0].Guard.Categories[0] != h {
					t.Errorf("ListMessages(%q) = %+v, %v", h, ms, err)
				}
				es, err := s.ListAudit(ctx, store.AuditFilter{Kind: h, ActorID: h, ThreadID: th.ID})
				if err != nil || len(es) != 1 || es[0].ID != "audit "+h {
					t.Errorf("ListAudit(%q) = %+v, %v", h, es, err)
				}
				// Nothing else was touched: every earlier thread is still there.
				for _, prev := range hostile[:i+1] {
					if _, err := s.GetThread(ctx, "thread "+prev); err != nil {
						t.Errorf("thread %q after writing %q: %v", prev, h, err)
					}
				}
			}
			es, err := s.ListAudit(ctx, store.AuditFilter{})
			if err != nil || len(es) != len(hostile) {
				t.Errorf("ListAudit = %d events, %v; want %d", len(es), err, len(hostile))
			}
		})
	}
}

// Times are kept to the microsecond (truncated) and read back in UTC.
func TestTimesAreMicrosecondsInUTC(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := migrated(t, b.open(t))
			in := base.Add(987 * time.Nanosecond)
			th := store.Thread{OwnerID: "u", CreatedAt: in, UpdatedAt: in, ArchivedAt: &in}
			if err := s.CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetThread(t.Context(), th.ID)
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]time.Time{"CreatedAt": got.CreatedAt, "UpdatedAt": got.UpdatedAt, "ArchivedAt": *got.ArchivedAt} {
				if !v.Equal(base) || v.Location() != time.UTC {
					t.Errorf("%s = %v, want %v in UTC", name, v, base.UTC())
				}
			}
			// Years the fixed-width form cannot order are refused, not mangled.
			far := time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)
			err = s.CreateThread(t.Context(), &store.Thread{OwnerID: "u", CreatedAt: far})
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("CreateThread in year 12345: err = %v, want ErrInvalid", err)
			}
		})
	}
}

// Free text and JSON take any string on PostgreSQL, escaped (U+0001 is the
// escape character); keys and names are stored as they are, so one that
// PostgreSQL cannot hold (a NUL in an owner id) is ErrInvalid, the
// caller's fault, not an infrastructure failure, and nothing is written.
func TestPostgresEscapesTextAndRefusesNULInKeys(t *testing.T) {
	db := sqltest.Postgres(t)
	s := migrated(t, db)
	ctx := t.Context()
	th := store.Thread{OwnerID: "u", Title: "nul\x00here \x01 \xff"}
	if err := s.CreateThread(ctx, &th); err != nil {
		t.Fatalf("CreateThread with a NUL in the title: %v", err)
	}
	u, a := turn(th.ID)
	a.Blocks = []blocks.Block{{Kind: blocks.Markdown, Content: "nul\x00here"}}
	a.ModelMessages = []byte(`{"s":"\u0000 \ud800 \u0001"}`)
	if err := s.AppendTurn(ctx, u, a); err != nil {
		t.Fatalf("AppendTurn with a NUL in a block: %v", err)
	}
	// The stored form is the escaped one, and JSON without U+0001 is
	// stored as given.
	var title, blocksText, mm string
	if err := db.QueryRowContext(ctx, `SELECT title FROM parley_threads WHERE id = $1`, th.ID).Scan(&title); err != nil {
		t.Fatal(err)
	}
	if want := "nul\x010here \x011 \x01xff"; title != want {
		t.Errorf("stored title = %q, want %q", title, want)
	}
	if err := db.QueryRowContext(ctx, `SELECT blocks, model_messages FROM parley_messages WHERE id = $1`, a.ID).Scan(&blocksText, &mm); err != nil {
		t.Fatal(err)
	}
	if want := `[{"kind":"markdown","content":"nul\u0000here"}]`; blocksText != want {
		t.Errorf("stored blocks = %s, want %s", blocksText, want)
	}
	if want := string(a.ModelMessages); mm != want {
		t.Errorf("stored model messages = %s, want %s", mm, want)
	}

	err := s.CreateThread(ctx, &store.Thread{OwnerID: "nul\x00owner"})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("CreateThread with a NUL in the owner: err = %v, want ErrInvalid", err)
	}
	if ts, _ := s.ListThreads(ctx, "nul\x00owner", store.ListOptions{}); len(ts) != 0 {
		t.Errorf("the refused thread was written")
	}
}

// Two Stores on separate pools stand for two app instances sharing one
// database: their concurrent turns on one thread still get distinct,
// gap-free Seqs.
func TestConcurrentAppendTurnAcrossInstances(t *testing.T) {
	const perStore, goroutines = 3, 16
	for _, c := range sharedBackends {
		t.Run(c.name, func(t *testing.T) {
			open := c.open(t)
			a := migrated(t, open())
			b := migrated(t, open())
			th := store.Thread{OwnerID: "u"}
			if err := a.CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var failed atomic.Int32
			for g := range goroutines {
				s := a
				if g%2 == 1 {
					s = b
				}
				wg.Go(func() {
					for range perStore {
						u, m := turn(th.ID)
						if err := s.AppendTurn(t.Context(), u, m); err != nil {
							t.Errorf("AppendTurn: %v", err)
							failed.Add(1)
							return
						}
					}
				})
			}
			wg.Wait()
			ms, err := b.ListMessages(t.Context(), th.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 * perStore * goroutines; len(ms) != want {
				t.Fatalf("%d messages, want %d", len(ms), want)
			}
			for i, m := range ms {
				wantRole := store.RoleUser
				if i%2 == 1 {
					wantRole = store.RoleAssistant
				}
				if m.Seq != i+1 || m.Role != wantRole {
					t.Fatalf("message %d: Seq %d role %s, want Seq %d role %s", i, m.Seq, m.Role, i+1, wantRole)
				}
			}
		})
	}
}

func turn(threadID string) (user, assistant *store.Message) {
	return &store.Message{ThreadID: threadID, Role: store.RoleUser, Status: store.StatusComplete, Content: "question"},
		&store.Message{ThreadID: threadID, Role: store.RoleAssistant, Status: store.StatusStreaming}
}

// manyBlocks returns n blocks shaped like a tool-using answer.
func manyBlocks(n int) []blocks.Block {
	bs := make([]blocks.Block, 0, n)
	for i := range n {
		switch i % 4 {
		case 0:
			bs = append(bs, blocks.Block{Kind: blocks.Markdown, Content: strings.Repeat("Some answer text with *markdown*. ", 8)})
		case 1:
			bs = append(bs, blocks.Block{Kind: blocks.ToolCall, ID: "call_1", Name: "list_vms", Data: []byte(`{"region":"eu-west","limit":20}`)})
		case 2:
			bs = append(bs, blocks.Block{Kind: blocks.ToolResult, ID: "call_1", Name: "list_vms", OK: true, Content: "3 VMs",
				Data: []byte(`[{"id":"vm-1","state":"running"},{"id":"vm-2","state":"stopped"},{"id":"vm-3","state":"running"}]`)})
		default:
			bs = append(bs, blocks.Block{Kind: blocks.Code, Tag: "sql", Content: "SELECT id, state FROM vms WHERE region = 'eu-west';\n"})
		}
	}
	return bs
}

// The fault-injecting driver wraps another driver's connections and fails
// every statement whose text contains failOn. It implements only the
// prepare path, so database/sql sends every statement through it.

var errInjected = errors.New("injected fault")

type faultConnector struct {
	base   driver.Connector
	failOn atomic.Value // string
}

func (c *faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: conn, c: c}, nil
}

func (c *faultConnector) Driver() driver.Driver { return faultDriver{} }

type faultDriver struct{}

func (faultDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("faultDriver: use the connector")
}

type faultConn struct {
	driver.Conn
	c *faultConnector
}

func (fc *faultConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if f, _ := fc.c.failOn.Load().(string); f != "" && strings.Contains(q, f) {
		return nil, errInjected
	}
	if p, ok := fc.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, q)
	}
	return fc.Conn.Prepare(q)
}

func (fc *faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return fc.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// sqliteConnector returns a connector for a modernc.org/sqlite DSN.
func sqliteConnector(t testing.TB, dsn string) driver.Connector {
	db := openSQLite(t, dsn)
	return dsnConnector{drv: db.Driver(), dsn: dsn}
}

type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// On a pool of two connections the Store does not LISTEN: its two
// listeners would hold both, and the turns they follow could never end.
// The Engine then polls, and a stream resumes on its own instance only.
func TestPostgresTooSmallAPoolDoesNotListen(t *testing.T) {
	db := sqltest.Postgres(t)
	s := migrated(t, db)
	db.SetMaxOpenConns(2)
	if err := s.WatchThreads(t.Context(), func(string) {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("WatchThreads on a pool of 2: %v, want errors.ErrUnsupported", err)
	}
	if _, err := s.Subscribe(t.Context(), "t"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Subscribe on a pool of 2: %v, want errors.ErrUnsupported", err)
	}
	if err := s.Publish(t.Context(), "t", nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Publish on a pool of 2: %v, want errors.ErrUnsupported", err)
	}
	db.SetMaxOpenConns(4)
	if _, err := s.Subscribe(t.Context(), "t"); err != nil {
		t.Fatalf("Subscribe on a pool of 4: %v", err)
	}
}
