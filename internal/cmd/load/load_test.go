package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/racesplit"
)

// TestTurnsAtTinyScale runs the whole command (build, child server on
// SQLite, load, read-back) with 4 workers x 2 rounds, so it cannot rot. It
// pins what the tool itself must get right: every turn is counted, every
// stream is parsed to its end, and a server that keeps its replies is
// reported as losing none. It asserts no timings.
//
// Under -race the server is built with -race too: the race detector then
// watches the server under concurrent turns, and the build may reuse the
// packages the -race test run compiled, where a build without it compiled
// the server's whole tree a second time.
func TestTurnsAtTinyScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example server")
	}
	args := []string{"-concurrency", "4", "-rounds", "2", "-users", "alice,sam", "-timeout", "2m", "-request-timeout", "30s"}
	if racesplit.Race {
		args = append(args, "-race")
	}
	o, err := parseFlags(flag.NewFlagSet("load", flag.ContinueOnError), args)
	if err != nil {
		t.Fatal(err)
	}
	var out, progress bytes.Buffer
	if err := run(context.Background(), o, &out, &progress); err != nil {
		t.Fatalf("run: %v\nprogress:\n%s\nreport:\n%s", err, &progress, &out)
	}
	report := out.String()
	t.Log("\n" + report)
	rows := map[string]string{
		"requests":                `^8 in `,
		"answers":                 `^8 \(200: 8\)$`,
		"error blocks":            `^0$`,
		"streams cut":             `^0 `,
		"time to first byte":      `\(n=8\)$`,
		"lost user messages":      `^0 of 8 `,
		"lost replies":            `^0 of 8 `,
		"replies still streaming": `^0$`,
		"replies wrong status":    `^0$`,
		"replies wrong text":      `^0$`,
		"threads read back":       `^4 in .*\(0 unreadable\)$`,
	}
	if racesplit.Race {
		rows["data races"] = `^0$`
	}
	for name, want := range rows {
		got, ok := field(report, name)
		if !ok {
			t.Errorf("no %q row in the report", name)
			continue
		}
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("%s = %q, want a match for %s", name, got, want)
		}
	}
}

// field returns the value of the report row named name.
func field(report, name string) (string, bool) {
	for line := range strings.Lines(report) {
		if rest, ok := strings.CutPrefix(line, name+"  "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

func TestFlagsRefuseADatabaseOffThisMachine(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u@db.example.com:5432/x",
		"postgres://u@10.0.0.5/x",
		"host=127.0.0.1 dbname=x",
		"mysql://u@127.0.0.1/x",
	} {
		if _, err := parseFlags(flag.NewFlagSet("load", flag.ContinueOnError), []string{"-postgres", dsn}); err == nil {
			t.Errorf("-postgres %q accepted", dsn)
		}
	}
	for _, dsn := range []string{
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		"postgresql://u:p@localhost/x",
		"postgres://u@[::1]:5432/x",
	} {
		if _, err := parseFlags(flag.NewFlagSet("load", flag.ContinueOnError), []string{"-postgres", dsn}); err != nil {
			t.Errorf("-postgres %q refused: %v", dsn, err)
		}
	}
}

func TestFlagsScenarioDefaults(t *testing.T) {
	parse := func(args ...string) options {
		t.Helper()
		fs := flag.NewFlagSet("load", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o, err := parseFlags(fs, args)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := parse(); o.Scenario != "turns" || o.Concurrency != 200 || o.Rounds != 5 || o.PerUserCap != "" || o.Timeout != 5*time.Minute {
		t.Errorf("defaults = %+v", o)
	}
	if o := parse("-scenario", "bigbody"); o.Concurrency != 100 {
		t.Errorf("bigbody concurrency = %d, want 100", o.Concurrency)
	}
	if o := parse("-per-user-cap", "0", "-max-conns", "20"); o.PerUserCap != "0" || o.MaxConns != "20" {
		t.Errorf("-per-user-cap 0 -max-conns 20 gave %q, %q", o.PerUserCap, o.MaxConns)
	}
}

func TestDurationsPercentiles(t *testing.T) {
	var d durations
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got, want := d.String(), "p50 50ms  p99 99ms  max 100ms  (n=100)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The report counts the server log's ERROR and WARN lines by message, and
// the race detector's reports when the server was built with -race.
func TestReportLogCountsLevelsAndRaces(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	lines := []string{
		`time=2026-11-28T10:00:00Z level=INFO msg=listening`,
		`time=2026-11-28T10:00:01Z level=WARN msg="slow store" err="context deadline exceeded"`,
		`==================`,
		raceReport,
		`Write at 0x00c000123456 by goroutine 7:`,
		`==================`,
		`time=2026-11-28T10:00:02Z level=WARN msg="slow store" err=other`,
		raceReport,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	close(exited)
	racy := exec.Command("sh", "-c", "exit 66")
	if err := racy.Run(); racy.ProcessState == nil {
		t.Skipf("sh: %v", err)
	}
	s := &server{logPath: log, cmd: racy, exited: exited}
	for _, race := range []bool{false, true} {
		var out bytes.Buffer
		tab := newTable(&out)
		s.reportLog(tab, race)
		tab.flush()
		report := out.String()
		if got, _ := field(report, "server log WARN"); got != `2 x "slow store" (first err: context deadline exceeded)` {
			t.Errorf("race=%v: server log WARN = %q", race, got)
		}
		got, ok := field(report, "data races")
		if want := "2 (the server exited with status 66, the race detector's)"; race && got != want || !race && ok {
			t.Errorf("race=%v: data races = %q, %v; want %q only with race", race, got, ok, want)
		}
	}

	// A line longer than the scanner takes stops the read: the count is a
	// lower bound, and says so.
	long := strings.Join(lines[:4], "\n") + "\n" + strings.Repeat("x", 5<<20) + "\n" + raceReport + "\n"
	if err := os.WriteFile(log, []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	s = &server{logPath: log}
	var out bytes.Buffer
	tab := newTable(&out)
	s.reportLog(tab, true)
	tab.flush()
	if got, _ := field(out.String(), "data races"); got != "at least 1 (the log was not read to its end)" {
		t.Errorf("data races after a cut read = %q", got)
	}
	if got, _ := field(out.String(), "server log"); !strings.HasPrefix(got, "read stopped: ") {
		t.Errorf("server log after a cut read = %q", got)
	}
}
