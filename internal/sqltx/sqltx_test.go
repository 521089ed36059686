package sqltx

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type codeErr int

func (e codeErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codeErr) Code() int     { return int(e) }

func TestBusy(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{codeErr(5), true},
		{codeErr(517), true}, // SQLITE_BUSY_SNAPSHOT
		{fmt.Errorf("setup: %w", codeErr(261)), true},
		{codeErr(6), false}, // SQLITE_LOCKED
		{errors.New("database is locked"), false},
		{nil, false},
	} {
		if got := Busy(c.err); got != c.want {
			t.Errorf("Busy(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestSettleFresh(t *testing.T) {
	ctx := context.Background()
	errOther := errors.New("other")
	calls := 0
	err := SettleFresh(ctx, Busy, func() error {
		if calls++; calls < 3 {
			return codeErr(5)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("busy twice, then done: %v after %d calls", err, calls)
	}
	calls = 0
	err = SettleFresh(ctx, Busy, func() error { calls++; return codeErr(5) })
	if !Busy(err) || calls != 5 {
		t.Errorf("always busy: %v after %d calls, want SQLITE_BUSY after 5", err, calls)
	}
	calls = 0
	err = SettleFresh(ctx, Busy, func() error { calls++; return errOther })
	if !errors.Is(err, errOther) || calls != 1 {
		t.Errorf("another error: %v after %d calls, want it after 1", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = SettleFresh(cctx, Busy, func() error { calls++; cancel(); return codeErr(5) })
	if !Busy(err) || calls != 1 {
		t.Errorf("context done: %v after %d calls, want SQLITE_BUSY after 1", err, calls)
	}
}

type stateErr string

func (e stateErr) Error() string    { return "pg error " + string(e) }
func (e stateErr) SQLState() string { return string(e) }

func TestSQLStateReadsWrappedDriverErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{stateErr("40001"), "40001"},
		{fmt.Errorf("commit: %w", stateErr("42P01")), "42P01"},
		{codeErr(5), ""},
		{errors.New("undefined_table"), ""},
		{nil, ""},
	} {
		if got := SQLState(c.err); got != c.want {
			t.Errorf("SQLState(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
