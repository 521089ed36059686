package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTurnsAtTinyScale runs the whole command (build, child server on
// SQLite, load, read-back) with 4 workers x 2 rounds, so it cannot rot. It
// pins what the tool itself must get right: every turn is counted, every
// stream is parsed to its end, and a server that keeps its replies is
// reported as losing none. It asserts no timings.
func TestTurnsAtTinyScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example server")
	}
	o, err := parseFlags(flag.NewFlagSet("load", flag.ContinueOnError),
		[]string{"-concurrency", "4", "-rounds", "2", "-users", "alice,sam", "-timeout", "2m", "-request-timeout", "30s"})
	if err != nil {
		t.Fatal(err)
	}
	var out, progress bytes.Buffer
	if err := run(context.Background(), o, &out, &progress); err != nil {
		t.Fatalf("run: %v\nprogress:\n%s\nreport:\n%s", err, &progress, &out)
	}
	report := out.String()
	t.Log("\n" + report)
	for name, want := range map[string]string{
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
	} {
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
