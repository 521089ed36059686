package mutanttest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Mutant names a broken implementation and the case it must fail.
type Mutant struct {
	Name     string
	WantFail string // the subtest path under the child test, e.g. "Holds/HeldTokensCount"
}

// Check runs every mutant in a child process: the test binary again, with
// env set to the mutant's name and only the test named child, narrowed to
// WantFail: a mutant that breaks other cases too (one that hangs until a
// case's timeout, say) costs only its own case. It fails t unless
// WantFail failed there.
// It skips in -short mode and inside a child.
func Check(t *testing.T, env, child string, mutants []Mutant) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	if os.Getenv(env) != "" {
		t.Skip("inside a mutant run")
	}
	for _, m := range mutants {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			run := "^" + regexp.QuoteMeta(child) + "$"
			for _, name := range strings.Split(m.WantFail, "/") {
				run += "/^" + regexp.QuoteMeta(name) + "$"
			}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), env+"="+m.Name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an implementation that breaks %s", m.WantFail)
			}
			if want := "--- FAIL: " + child + "/" + m.WantFail + " "; !strings.Contains(string(out), want) {
				t.Errorf("the suite did not fail %s; output:\n%s", m.WantFail, out)
			}
		})
	}
}

// Current returns the name of the mutant this process runs as a child of
// Check, and skips t when it is not such a child.
func Current(t *testing.T, env string) string {
	t.Helper()
	name := os.Getenv(env)
	if name == "" {
		t.Skip("only run as a child of mutanttest.Check")
	}
	return name
}
