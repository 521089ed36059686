package testnote

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	said = map[string]bool{}
)

// Skip skips t with reason, telling the terminal the first time this
// binary skips for it. what names the suite ("PostgreSQL suites").
func Skip(t testing.TB, what, reason string) {
	t.Helper()
	tell(what, "skipped", reason)
	t.Skip(what + " skipped: " + reason)
}

func tell(what, done, reason string) {
	if testing.Verbose() || os.Getenv("PARLEY_TEST_QUIET") != "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	key := what + "\x00" + done + "\x00" + reason
	if said[key] {
		return
	}
	said[key] = true
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return // no terminal: CI or a pipe
	}
	defer tty.Close()
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		pkg = wd
	}
	fmt.Fprintf(tty, "go test: %s %s in %s: %s\n", what, done, pkg, reason)
}

// Note logs that part of a test did not run, and tells the terminal as
// Skip does; the test goes on.
func Note(t testing.TB, what, reason string) {
	t.Helper()
	tell(what, "not checked", reason)
	t.Log(what + " not checked: " + reason)
}
