package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// table is the report: one "name  value" row per figure.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (t *table) row(name, value string) {
	fmt.Fprintf(t.tw, "%s\t%s\n", name, strings.ReplaceAll(value, "\n", " "))
}

func (t *table) rowf(name, format string, args ...any) { t.row(name, fmt.Sprintf(format, args...)) }

func (t *table) flush() { _ = t.tw.Flush() }

// counts tallies outcomes by a key such as "500 internal".
type counts map[string]int

func (c counts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String lists the keys, most frequent first: "500 internal: 12, 429: 3".
func (c counts) String() string {
	if len(c) == 0 {
		return "0"
	}
	keys := slices.SortedFunc(maps.Keys(c), func(a, b string) int { return cmp.Or(cmp.Compare(c[b], c[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, c[k])
	}
	return fmt.Sprintf("%d (%s)", c.total(), strings.Join(parts, ", "))
}

// durations summarises a sample as p50, p99 and max (nearest rank).
type durations []time.Duration

func (d durations) String() string {
	if len(d) == 0 {
		return "n/a (no samples)"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	pct := func(p int) time.Duration {
		i := (len(s)*p + 99) / 100 // nearest rank, 1-based
		return s[max(0, i-1)]
	}
	return fmt.Sprintf("p50 %v  p99 %v  max %v  (n=%d)", round(pct(50)), round(pct(99)), round(s[len(s)-1]), len(s))
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// mib formats a byte count for people: "3.2 MiB", "512 B".
func mib(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// statusKey names an answer for counts: "500 internal", "timeout".
func statusKey(o *outcome) string {
	switch {
	case o.Status == 0:
		return "transport: " + o.Transport
	case o.ErrCode != "":
		return fmt.Sprintf("%d %s", o.Status, o.ErrCode)
	default:
		return fmt.Sprint(o.Status)
	}
}
