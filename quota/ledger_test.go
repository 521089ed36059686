package quota_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

func TestCheckFitsEveryPeriod(t *testing.T) {
	at := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	u := quota.Usage{
		UserID:  "u",
		Daily:   quota.PeriodUsage{Period: quota.Daily, Used: 50, Held: 10, Limit: 100, ResetsAt: at.AddDate(0, 0, 1)},
		Weekly:  quota.PeriodUsage{Period: quota.Weekly, Used: 50, Held: 10, Limit: quota.Unlimited, ResetsAt: at.AddDate(0, 0, 6)},
		Monthly: quota.PeriodUsage{Period: quota.Monthly, Used: 1 << 62, Held: 1 << 62, Limit: 1 << 62, ResetsAt: at.AddDate(0, 1, 0)},
	}
	if err := u.Check(0); err == nil {
		t.Fatal("Check(0) admitted a request to an overfull month")
	}
	u.Monthly.Used, u.Monthly.Held = 0, 0
	if err := u.Check(40); err != nil {
		t.Errorf("Check(40) = %v, want nil (50 + 10 + 40 = 100)", err)
	}
	err := u.Check(41)
	var ee *quota.ExceededError
	if !errors.As(err, &ee) || !errors.Is(err, quota.ErrExceeded) {
		t.Fatalf("Check(41) = %v, want an *ExceededError", err)
	}
	want := quota.ExceededError{UserID: "u", Period: quota.Daily, Limit: 100, Used: 50, Held: 10, Estimate: 41, ResetsAt: u.Daily.ResetsAt}
	if *ee != want {
		t.Errorf("Check(41) = %+v, want %+v", *ee, want)
	}
	if r := u.Daily.Remaining(); r != 40 {
		t.Errorf("Remaining() = %d, want 40", r)
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
