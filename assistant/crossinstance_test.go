package assistant_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
	"github.com/parleyhq/parley/tools"
)

// instances returns two Engines, as two app instances would run them: each
// with its own *sql.DB pool and Store over the same PostgreSQL schema.
func instances(t *testing.T, p providers.Provider) (a, b *assistant.Engine, sa, sb *sqlstore.Store) {
	t.Helper()
	return instancesWith(t, p, newHarness(t, fake.New()).registry())
}

// instancesWith is instances over the given tools.
func instancesWith(t *testing.T, p providers.Provider, reg tools.Registry) (a, b *assistant.Engine, sa, sb *sqlstore.Store) {
	t.Helper()
	dsn := sqltest.PostgresDSN(t) // skips without PARLEY_TEST_POSTGRES_DSN
	mk := func() (*assistant.Engine, *sqlstore.Store) {
		st, err := sqlstore.New(sqltest.OpenPostgres(t, dsn), sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		eng, err := assistant.New(assistant.Config{
			Provider: p, Store: st, Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
			Tools: reg, CancelPollInterval: 50 * time.Millisecond, MaxTurnsPerUser: -1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return eng, st
	}
	a, sa = mk()
	b, sb = mk()
	return a, b, sa, sb
}

func TestPostgresCancelOnOneInstanceStopsTheTurnOnTheOther(t *testing.T) {
	a, b, sa, _ := instances(t, fake.New(slowTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	start := time.Now()
	if err := b.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	bs := <-rest
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopped %v after the other instance's Cancel, want < 1s", d)
	}
	if last := bs[len(bs)-1]; last.ErrorCode != string(assistant.CodeCancelled) {
		t.Errorf("last block %+v, want cancelled", last)
	}
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err := sa.GetMessage(context.Background(), meta.MessageID)
	if err != nil || m.Status != store.StatusCancelled || len(m.Blocks) == 0 {
		t.Errorf("stored on PostgreSQL: %s %+v (%v), want cancelled with the partial text", m.Status, m.Blocks, err)
	}
}

func TestPostgresAThreadWrittenOnOneInstanceReadsBackIdenticallyOnTheOther(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.Text("Let me check."), fake.CallTool("c1", "get_weather", `{"city":"Oslo"}`), fake.Usage(10, 5)},
		fake.Turn{fake.Text("It is **sunny**.\n\n```go\nfmt.Println(\"Oslo\")\n```\n"), fake.Usage(20, 9)},
	)
	a, b, _, _ := instances(t, p)
	var streamed []blocks.Block
	for bl := range a.Stream(context.Background(), alice, assistant.Request{Message: "Weather in Oslo?"}) {
		streamed = append(streamed, bl)
	}
	id := streamed[0].Meta.ThreadID
	_, onA, err := a.Thread(context.Background(), alice, id, assistant.ThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, onB, err := b.Thread(context.Background(), alice, id, assistant.ThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(onA)
	jb, _ := json.Marshal(onB)
	if string(ja) != string(jb) || len(onB) != 2 {
		t.Fatalf("the instances read the thread differently:\nA %s\nB %s", ja, jb)
	}
	var want []blocks.Block
	for _, bl := range streamed {
		want = blocks.Absorb(want, bl)
	}
	if !blocksEqual(onB[1].Blocks, want) {
		t.Errorf("B's blocks differ from what streamed on A:\n got %+v\nwant %+v", onB[1].Blocks, want)
	}
	var mm []providers.Message
	if err := json.Unmarshal(onB[1].ModelMessages, &mm); err != nil || len(mm) != 3 || mm[0].ToolCalls[0].ID != "c1" || mm[1].Role != providers.Tool {
		t.Errorf("model messages on B = %+v (%v), want call, result, answer in order", mm, err)
	}
}

func TestPostgresANewerMessageOnOneInstanceSupersedesTheTurnOnTheOther(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if req.Messages[len(req.Messages)-1].Content == "first question" {
			return slowTurn()
		}
		return fake.Turn{fake.Text("the new answer")}
	})})
	a, b, sa, _ := instances(t, p)
	meta, rest := startTurn(t, a, assistant.Request{Message: "first question"})
	reply, err := assistant.Collect(b.Stream(context.Background(), alice, assistant.Request{ThreadID: meta.ThreadID, Message: "instead"}))
	if err != nil || reply.Text != "the new answer" {
		t.Fatalf("newer turn on B: %q %v", reply.Text, err)
	}
	bs := <-rest
	if last := bs[len(bs)-1]; last.ErrorCode != string(assistant.CodeCancelled) {
		t.Errorf("the turn on A ended with %+v, want it superseded", last)
	}
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs, _ := sa.ListMessages(context.Background(), meta.ThreadID)
	if len(msgs) != 4 || msgs[1].Status != store.StatusCancelled || msgs[3].Status != store.StatusComplete {
		t.Errorf("statuses %v, want A's reply cancelled and B's complete", statuses(msgs))
	}
}

func TestPostgres64TurnsAcrossTwoInstancesKeepQuotaExact(t *testing.T) {
	dsn := sqltest.PostgresDSN(t)
	const limit, actual = 12_000, 900 // each turn reserves more than it uses
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok"), fake.Usage(800, 100)})
	var engines []*assistant.Engine
	var ledger quota.Ledger
	holds := &holdLog{}
	for range 2 {
		db := sqltest.OpenPostgres(t, dsn)
		st, err := sqlstore.New(db, sqlstore.Options{})
		if err == nil {
			err = st.Migrate(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
		l, err := sqlquota.New(db, quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(limit)}}, sqlquota.Options{})
		if err == nil {
			err = l.Migrate(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
		eng, err := assistant.New(assistant.Config{Provider: p, Store: st, Ledger: holdRecorder{l, holds}, Authorizer: assistant.RoleAuthorizer{}, MaxTurnsPerUser: -1})
		if err != nil {
			t.Fatal(err)
		}
		engines, ledger = append(engines, eng), l
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, refused := 0, 0
	for i := range 64 {
		wg.Go(func() {
			_, err := assistant.Collect(engines[i%2].Stream(context.Background(), alice, assistant.Request{Message: "hi"}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case errors.Is(err, assistant.ErrQuotaExceeded):
				refused++
			default:
				t.Errorf("turn failed: %v", err)
			}
		})
	}
	wg.Wait()
	u, err := ledger.Usage(context.Background(), "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Holds are capped at the allowance left, so usage may pass the limit
	// by what capped turns used beyond their holds, and by nothing else.
	over := holds.overshoot(actual)
	if u.Daily.Used != int64(admitted*actual) || u.Daily.Used > limit+over || u.Daily.Held != 0 || admitted == 0 || refused == 0 {
		t.Errorf("admitted %d, refused %d; ledger used %d held %d: want used = admitted x %d exactly, within %d + %d, nothing held",
			admitted, refused, u.Daily.Used, u.Daily.Held, actual, limit, over)
	}
}

// The same decision sent to two instances at once runs the tool once: the
// token is consumed by one conditional UPDATE on the shared database.
func TestPostgresDecisionsOnTwoInstancesRunTheToolOnce(t *testing.T) {
	h := newHarness(t, fake.New())
	p := fake.New(fake.Turn{fake.CallTool("c1", "add_note", `{}`)})
	p.SetDefault(fake.Turn{fake.Text("Added.")})
	a, b, _, _ := instancesWith(t, p, h.registry())
	reply, err := assistant.Collect(a.Stream(context.Background(), alice, assistant.Request{Message: "add a note"}))
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, bl := range reply.Blocks {
		if bl.Kind == blocks.Confirm {
			token = bl.ID
		}
	}
	if token == "" {
		t.Fatalf("no confirm card in %+v", reply.Blocks)
	}
	const perInstance = 8
	var wg sync.WaitGroup
	errs := make([]error, 2*perInstance)
	for i := range errs {
		eng := a
		if i%2 == 1 {
			eng = b
		}
		wg.Go(func() {
			_, errs[i] = assistant.Collect(eng.Stream(context.Background(), alice,
				assistant.Request{ThreadID: reply.ThreadID, Decision: &assistant.Decision{Token: token, Apply: true}}))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, assistant.ErrConflict):
			t.Errorf("a losing decision got %v, want ErrConflict", err)
		}
	}
	if n := h.runs["add_note"].Load(); won != 1 || n != 1 {
		t.Errorf("%d decisions won, the tool ran %d times; want 1 and 1", won, n)
	}
}
