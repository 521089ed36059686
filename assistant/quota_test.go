package assistant_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

func newLedger(t *testing.T, daily int64) *memquota.Ledger {
	t.Helper()
	l, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(daily)}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func usageOf(t *testing.T, l quota.Ledger, user string) quota.PeriodUsage {
	t.Helper()
	u, err := l.Usage(context.Background(), user, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u.Daily
}

func TestQuotaExceededRefusesBeforeAnythingIsPersistedOrSent(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("never")})
	l := newLedger(t, 100)
	// The day's allowance is used up: 100 of 100 tokens.
	h0, err := l.Reserve(context.Background(), "alice", 100, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(context.Background(), h0, 100); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	u := alice
	u.TimeZone = "Europe/Berlin"
	_, streamed, err := h.collect(t, u, assistant.Request{Message: "hi"})
	if !errors.Is(err, assistant.ErrQuotaExceeded) {
		t.Fatalf("error = %v, want ErrQuotaExceeded", err)
	}
	msg := streamed[0].Content
	if len(streamed) != 1 || !strings.Contains(msg, "daily") || !strings.Contains(msg, "CET") {
		t.Errorf("refusal %q, want one error block naming the daily period and its reset in the user's zone", msg)
	}
	if p.Calls() != 0 {
		t.Error("the model was called despite the exhausted quota")
	}
	if ts, _ := h.store.ListThreads(context.Background(), "alice", store.ListOptions{IncludeArchived: true}); len(ts) != 0 {
		t.Errorf("a refused turn persisted %d threads", len(ts))
	}
	if !strings.Contains(msg, "100 of 100 tokens") {
		t.Errorf("refusal %q does not say how much of the allowance is used", msg)
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 100 || pu.Held != 0 {
		t.Errorf("usage after refusal = %+v, want nothing more used or held", pu)
	}
}

// A turn is admitted while the user has allowance left, even when its
// estimate is larger: with a 300-token daily limit and nothing used, the
// first message is answered (its hold capped at the 300 left), and the
// refusal that follows tells the truth about what was used.
func TestTurnIsAdmittedWhileAllowanceIsLeft(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("Hello."), fake.Usage(250, 100)})
	l := newLedger(t, 300)
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err != nil {
		t.Fatalf("a user with 300 of 300 tokens left was refused: %v", err)
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 350 || pu.Held != 0 {
		t.Errorf("usage %+v, want the 350 tokens the turn used charged", pu)
	}
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "again"})
	if !errors.Is(err, assistant.ErrQuotaExceeded) {
		t.Fatalf("err = %v, want ErrQuotaExceeded once the allowance is used", err)
	}
	if msg := streamed[len(streamed)-1].Content; !strings.Contains(msg, "You have used your daily assistant allowance (350 of 300 tokens)") {
		t.Errorf("refusal %q, want the true usage and limit", msg)
	}
}

// When the rest of the allowance is held by the user's own turns in
// progress, the refusal says so instead of claiming it is used up.
func TestRefusalWhileTurnsHoldTheRestSaysSo(t *testing.T) {
	l := newLedger(t, 2000)
	if _, err := l.Reserve(context.Background(), "alice", 2000, time.Now()); err != nil { // a turn in progress
		t.Fatal(err)
	}
	h := newHarness(t, fake.New(), func(c *assistant.Config) { c.Ledger = l })
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if !errors.Is(err, assistant.ErrQuotaExceeded) {
		t.Fatalf("err = %v, want ErrQuotaExceeded", err)
	}
	if msg := streamed[len(streamed)-1].Content; !strings.Contains(msg, "in progress") || !strings.Contains(msg, "0 of 2000 tokens used") {
		t.Errorf("refusal %q, want it to say the rest is held by answers in progress", msg)
	}
}

func TestTurnSettlesActualUsageOfEveryModelCall(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Paris"}`), fake.Usage(300, 20)},
		fake.Turn{fake.Text("Sunny."), fake.Usage(350, 5)},
	)
	l := newLedger(t, 1_000_000)
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "weather"}); err != nil {
		t.Fatal(err)
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 675 || pu.Held != 0 {
		t.Errorf("usage = %+v, want 675 used (both calls) and nothing held", pu)
	}
}

func TestUsageIsEstimatedWhenTheServerReportsNone(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text(strings.Repeat("word ", 40))}) // no Usage step
	l := newLedger(t, 1_000_000)
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	pu := usageOf(t, l, "alice")
	if pu.Used < 50 || reply.Usage.OutputTokens != 50 {
		t.Errorf("used %d, reply output %d: want the 200 characters counted as 50 output tokens plus the prompt", pu.Used, reply.Usage.OutputTokens)
	}
}

func TestFailedTurnSettlesWhatWasConsumed(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("partial"), fake.Usage(400, 7),
		fake.Fail(&providers.Error{Category: providers.CategoryConnection, Err: errors.New("drop")})})
	l := newLedger(t, 1_000_000)
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err == nil {
		t.Fatal("want the turn to fail")
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 407 || pu.Held != 0 {
		t.Errorf("usage = %+v, want the 407 tokens consumed before the failure and no hold left", pu)
	}
}

// holdRecorder records in log every hold its Ledger grants.
type holdRecorder struct {
	quota.Ledger
	log *holdLog
}

type holdLog struct {
	mu    sync.Mutex
	holds []quota.Hold
}

func (r holdRecorder) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	h, err := r.Ledger.Reserve(ctx, user, est, now)
	if err == nil {
		r.log.mu.Lock()
		r.log.holds = append(r.log.holds, h)
		r.log.mu.Unlock()
	}
	return h, err
}

// overshoot is the most the logged holds may add past a limit: what a turn
// using actual tokens charges beyond a hold capped below it.
func (l *holdLog) overshoot(actual int64) int64 {
	var n int64
	for _, h := range l.holds {
		n += max(0, actual-h.Estimate)
	}
	return n
}

// Concurrent turns of one user: the ledger's accounting stays exact, and
// usage passes the limit by no more than the overshoot of holds capped at
// the allowance left (actual - hold), never by a race.
func TestConcurrentTurnsNeverPushUsagePastTheLimit(t *testing.T) {
	const turns, actual = 100, 900 // each turn uses less than its full estimate (> 1024)
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok"), fake.Usage(800, 100)})
	const limit = 12_000
	holds := &holdLog{}
	l := holdRecorder{Ledger: newLedger(t, limit), log: holds}
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger, c.MaxTurnsPerUser = l, -1 })
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, refused := 0, 0
	for range turns {
		wg.Go(func() {
			_, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case errors.Is(err, assistant.ErrQuotaExceeded):
				refused++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	overshoot := holds.overshoot(actual)
	pu := usageOf(t, l, "alice")
	if pu.Used > limit+overshoot || pu.Held != 0 {
		t.Errorf("usage %+v passed the limit %d by more than the capped holds' overshoot %d", pu, limit, overshoot)
	}
	if pu.Used != int64(admitted*actual) || admitted+refused != turns || admitted == 0 || refused == 0 {
		t.Errorf("admitted %d, refused %d, used %d: want used = admitted x %d exactly", admitted, refused, pu.Used, actual)
	}
	if p.Calls() != admitted || len(holds.holds) != admitted {
		t.Errorf("model called %d times, %d holds, for %d admitted turns", p.Calls(), len(holds.holds), admitted)
	}
}

func TestSpendCapRefusesOnceTheWindowIsSpent(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("a"), fake.Usage(100, 50)})
	p.SetDefault(fake.Turn{fake.Text("for bob")})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.SpendLedger = &memquota.SpendLedger{}
		c.SpendCap = quota.SpendCap{Budget: 120, Window: time.Minute}
	})
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "1"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.collect(t, alice, assistant.Request{Message: "2"})
	if !errors.Is(err, assistant.ErrSpendCapExceeded) {
		t.Fatalf("second turn: %v, want ErrSpendCapExceeded", err)
	}
	if reply, _, err := h.collect(t, bob, assistant.Request{Message: "3"}); err != nil || reply.Text != "for bob" {
		t.Errorf("bob's turn: %q, %v; want it admitted: the cap is per principal", reply.Text, err)
	}
	if p.Calls() != 2 {
		t.Errorf("model called %d times, want 2: the refused turn must not reach it", p.Calls())
	}
}

func TestToolRateLimitIsARecoverableToolError(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"A"}`), fake.CallTool("c2", "get_weather", `{"city":"B"}`)},
		fake.Turn{fake.Text("One of them.")},
	)
	h := newHarness(t, p, func(c *assistant.Config) {
		c.RateLimiter = &memquota.RateLimiter{}
		c.ToolRate = quota.Rate{Calls: 1, Per: time.Minute}
	})
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.runs["get_weather"].Load(); n != 1 {
		t.Errorf("tool ran %d times, want 1 under a 1-per-minute rate", n)
	}
	res := find(streamed, blocks.ToolResult)
	if len(res) != 2 || !res[0].OK || res[1].ErrorCode != string(tools.CodeRateLimited) {
		t.Errorf("results %+v, want the second call RATE_LIMITED", res)
	}
	if reply.Text != "One of them." {
		t.Errorf("the turn did not go on after the refusal: %q", reply.Text)
	}
}

func TestConfigRequiresLimiterAndLedgerForTheirLimits(t *testing.T) {
	base := assistant.Config{Provider: fake.New(), Authorizer: assistant.RoleAuthorizer{}, Store: newHarness(t, fake.New()).store}
	c := base
	c.ToolRate = quota.Rate{Calls: 1, Per: time.Minute}
	if _, err := assistant.New(c); err == nil {
		t.Error("ToolRate without a RateLimiter was accepted")
	}
	c = base
	c.SpendCap = quota.SpendCap{Budget: 1, Window: time.Minute}
	if _, err := assistant.New(c); err == nil {
		t.Error("SpendCap without a SpendLedger was accepted")
	}
}
