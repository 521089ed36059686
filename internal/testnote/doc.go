// Package testnote lets a test that skips for want of a service say so
// where a developer sees it. `go test ./...` prints only "ok" for a
// package whose tests pass or skip, so a suite skipped because
// PostgreSQL, chromium, node or the guard corpus is missing would pass
// silently. Skip writes the reason, once per reason and test binary, to
// the terminal (/dev/tty) as well as to the test log; where there is no
// terminal (CI, a pipe, -v already shows the log) it writes nothing more.
package testnote
