package sqlmigrate

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type codeErr int

func (e codeErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codeErr) Code() int     { return int(e) }

type stateErr string

func (e stateErr) Error() string    { return "pg error " + string(e) }
func (e stateErr) SQLState() string { return string(e) }

func TestSettlingAcceptsTheSetupRacesOnly(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{codeErr(5), true},
		{codeErr(517), true}, // SQLITE_BUSY_SNAPSHOT
		{fmt.Errorf("setup: %w", codeErr(261)), true},
		{codeErr(6), false}, // SQLITE_LOCKED
		{errors.New("database is locked"), false},
		{stateErr("42P07"), true},
		{fmt.Errorf("migration 1 (init): %w", stateErr("23505")), true},
		{stateErr("40P01"), true},
		{stateErr("42601"), false}, // syntax_error
		{nil, false},
	} {
		if got := settling(c.err); got != c.want {
			t.Errorf("settling(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestSettleFreshTriesFiveTimesWhileSettling(t *testing.T) {
	ctx := context.Background()
	errOther := errors.New("other")
	calls := 0
	err := settleFresh(ctx, func() error {
		if calls++; calls < 3 {
			return codeErr(5)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("busy twice, then done: %v after %d calls", err, calls)
	}
	calls = 0
	err = settleFresh(ctx, func() error { calls++; return codeErr(5) })
	if !busy(err) || calls != 5 {
		t.Errorf("always busy: %v after %d calls, want SQLITE_BUSY after 5", err, calls)
	}
	calls = 0
	err = settleFresh(ctx, func() error { calls++; return errOther })
	if !errors.Is(err, errOther) || calls != 1 {
		t.Errorf("another error: %v after %d calls, want it after 1", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = settleFresh(cctx, func() error { calls++; cancel(); return codeErr(5) })
	if !busy(err) || calls != 1 {
		t.Errorf("context done: %v after %d calls, want SQLITE_BUSY after 1", err, calls)
	}
}
