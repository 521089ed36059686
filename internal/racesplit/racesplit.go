package racesplit

import (
	"os"
	"testing"
)

// Env, set, moves the suites that call Skip out of a -race run.
const Env = "PARLEY_TEST_RACE_SPLIT"

// Packages are the packages with suites that call Skip: .ci/run's pass
// without -race runs these (TestCIRunsTheSplitPackages holds the two
// lists equal).
var Packages = []string{"./guard", "./internal/guardlab", "./internal/guardmodel", "./quota/sqlquota", "./store/sqlstore"}

// Skip skips t in a -race build when Env is set: t runs in .ci/run's
// pass without -race instead.
func Skip(t testing.TB) {
	t.Helper()
	if Race && os.Getenv(Env) != "" {
		t.Skipf("skipped under -race with %s set: .ci/run runs it in its pass without -race", Env)
	}
}
