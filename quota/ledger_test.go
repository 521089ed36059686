package quota_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

func TestAdmitCapsTheHoldAtTheTightestRoom(t *testing.T) {
	at := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	u := quota.Usage{
		UserID:  "u",
		Daily:   quota.PeriodUsage{Period: quota.Daily, Used: 50, Held: 10, Limit: 100, ResetsAt: at.AddDate(0, 0, 1)},
		Weekly:  quota.PeriodUsage{Period: quota.Weekly, Used: 50, Held: 10, Limit: quota.Unlimited, ResetsAt: at.AddDate(0, 0, 6)},
		Monthly: quota.PeriodUsage{Period: quota.Monthly, Used: 1 << 62, Held: 1 << 62, Limit: 1 << 62, ResetsAt: at.AddDate(0, 1, 0)},
	}
	if err := u.Check(1); err == nil {
		t.Fatal("Check(1) admitted a request to an overfull month")
	}
	if n, err := u.Admit(0); n != 0 || err != nil {
		t.Errorf("Admit(0) over the limit = %d, %v; want 0, nil (a zero estimate is always admitted)", n, err)
	}
	u.Monthly.Used, u.Monthly.Held = 0, 0
	u.Monthly.Limit = 1000
	for _, c := range []struct{ est, want int64 }{{0, 0}, {39, 39}, {40, 40}, {41, 40}, {1 << 40, 40}} {
		if n, err := u.Admit(c.est); n != c.want || err != nil {
			t.Errorf("Admit(%d) = %d, %v; want %d, nil (50 + 10 of 100 daily)", c.est, n, err, c.want)
		}
	}
	u.Monthly.Used = 970 // now the month is the tightest: 30 left
	if n, err := u.Admit(1 << 40); n != 30 || err != nil {
		t.Errorf("Admit with 30 left in the month = %d, %v; want 30, nil", n, err)
	}
	u.Monthly.Used = 0
	u.Daily.Held = 50 // used + held == limit
	_, err := u.Admit(1)
	var ee *quota.ExceededError
	if !errors.As(err, &ee) || !errors.Is(err, quota.ErrExceeded) || u.Check(1) == nil {
		t.Fatalf("Admit(1) at the limit = %v, want an *ExceededError", err)
	}
	want := quota.ExceededError{UserID: "u", Period: quota.Daily, Limit: 100, Used: 50, Held: 50, Estimate: 1, ResetsAt: u.Daily.ResetsAt}
	if *ee != want {
		t.Errorf("Admit(1) = %+v, want %+v", *ee, want)
	}
	if r := u.Daily.Remaining(); r != 0 {
		t.Errorf("Remaining() = %d, want 0", r)
	}
	if u.Daily.Fits(1) || !u.Daily.Fits(0) {
		t.Error("Fits at the limit: want false for 1, true for 0")
	}
}

func TestAdmitZeroLimit(t *testing.T) {
	u := quota.Usage{UserID: "u",
		Daily:   quota.PeriodUsage{Period: quota.Daily, Limit: 0},
		Weekly:  quota.PeriodUsage{Period: quota.Weekly, Limit: quota.Unlimited},
		Monthly: quota.PeriodUsage{Period: quota.Monthly, Limit: quota.Unlimited},
	}
	if _, err := u.Admit(1); !errors.Is(err, quota.ErrExceeded) {
		t.Errorf("Admit(1) under a zero limit = %v, want ErrExceeded", err)
	}
	if n, err := u.Admit(0); n != 0 || err != nil {
		t.Errorf("Admit(0) under a zero limit = %d, %v; want 0, nil", n, err)
	}
	u.Daily.Limit = quota.Unlimited
	if n, err := u.Admit(1 << 50); n != 1<<50 || err != nil {
		t.Errorf("Admit(2^50) with no limits = %d, %v; want the whole estimate", n, err)
	}
}

func TestLimitsAndPolicy(t *testing.T) {
	if err := (quota.Limits{Daily: quota.Limit(-2)}).Validate(); !errors.Is(err, quota.ErrInvalid) {
		t.Errorf("Validate(-2) = %v, want ErrInvalid", err)
	}
	if err := (quota.Limits{Daily: quota.Limit(0), Weekly: quota.Limit(-1)}).Validate(); err != nil {
		t.Errorf("Validate(0, -1) = %v, want nil", err)
	}
	if err := (quota.Policy{HoldTTL: -time.Second}).Validate(); !errors.Is(err, quota.ErrInvalid) {
		t.Errorf("negative HoldTTL: %v, want ErrInvalid", err)
	}
	var p quota.Policy
	if p.Loc() != time.UTC || p.TTL() != quota.DefaultHoldTTL {
		t.Errorf("zero Policy: location %v, TTL %v", p.Loc(), p.TTL())
	}
	p.Defaults = quota.Limits{Daily: quota.Limit(100), Weekly: quota.Limit(500)}
	o := quota.Limits{Daily: quota.Limit(quota.Unlimited), Monthly: quota.Limit(7)}
	for _, c := range []struct {
		per  quota.Period
		want int64
	}{{quota.Daily, -1}, {quota.Weekly, 500}, {quota.Monthly, 7}} {
		if got := p.Limit(c.per, o); got != c.want {
			t.Errorf("Limit(%s) = %d, want %d", c.per, got, c.want)
		}
	}
	if got := (quota.Policy{}).Limit(quota.Daily, quota.Limits{}); got != quota.Unlimited {
		t.Errorf("Limit with neither override nor default = %d, want Unlimited", got)
	}
	c := o.Clone()
	*c.Monthly = 1
	if *o.Monthly != 7 {
		t.Error("Clone shares pointers")
	}
}

func TestTypedErrorsMatchTheirSentinels(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{&quota.ExceededError{}, quota.ErrExceeded},
		{&quota.SpendCapError{}, quota.ErrSpendCapExceeded},
		{&quota.RateLimitError{}, quota.ErrRateLimited},
	} {
		if !errors.Is(c.err, c.want) || c.err.Error() == "" {
			t.Errorf("%T: errors.Is %v = false or empty message", c.err, c.want)
		}
		for _, other := range []error{quota.ErrExceeded, quota.ErrSpendCapExceeded, quota.ErrRateLimited, quota.ErrInvalid} {
			if other != c.want && errors.Is(c.err, other) {
				t.Errorf("%T matches %v", c.err, other)
			}
		}
	}
}
