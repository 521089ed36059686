// Package racesplit moves test suites out of a -race run when the race
// detector slows them most and they have no concurrency of their own to
// watch: .ci/run sets Env for its -race pass, where such a suite skips,
// and runs its packages again in a pass without -race (Packages). A plain
// go test, with or without -race, runs everything as before.
//
// modernc.org/sqlite is C translated to Go, and the guard's corpus checks
// scan megabytes byte by byte: under -race they ran about ten times
// slower (sqlstore's SQLite suites 70 CPU seconds against 5.4; the
// guard's package 56 s against 8.5 s; the guard model's training check
// in internal/guardlab 9.6 s against 0.75 s), most of CI's time. The race
// detector still watches the same Go code where it runs concurrently: the
// stores on PostgreSQL, the SQLite multi-instance tests, the guard's
// concurrency tests.
package racesplit
