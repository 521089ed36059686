package sqltx

import (
	"errors"
	"fmt"
	"testing"
)

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
		{errors.New("undefined_table"), ""},
		{nil, ""},
	} {
		if got := SQLState(c.err); got != c.want {
			t.Errorf("SQLState(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
