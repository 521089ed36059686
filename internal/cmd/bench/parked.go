package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for -pg

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/sqlstore"
)

// slowWords is the slow answer's text, a sentence at a time.
var slowWords = strings.Fields("The forecast for Paris is sunny with a light breeze and a high of twenty one degrees while Berlin stays cloudy.")

// serveSlow streams a text answer of n deltas, one every interval, as a
// slow model does, then finishes with usage.
func serveSlow(w http.ResponseWriter, r *http.Request, every time.Duration, n int) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}],\"usage\":null}\n\n", delta, finish)
		_ = rc.Flush()
	}
	chunk(`{"role":"assistant","content":""}`, "null")
	t := time.NewTicker(every)
	defer t.Stop()
	for i := range n {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		chunk(`{"content":`+strconv.Quote(slowWords[i%len(slowWords)]+" ")+`}`, "null")
	}
	chunk(`{}`, `"stop"`)
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"mock-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":380,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", n, 380+n)
	_ = rc.Flush()
}

// parkedOpts are the -parked settings.
type parkedOpts struct {
	n     int           // parked turns
	every time.Duration // between the slow model's deltas
	hold  time.Duration // the parked period measured
	// margin is how much longer than hold the slow answer lasts: it must
	// outlast putting every turn in flight.
	margin time.Duration
	pg     string // PostgreSQL DSN: the Engine's store, and pg_stat_database

	heapProfile string // a path prefix for the heap profiles, or ""
}

// parkedResult is one side's figures, passed from its child process as JSON.
type parkedResult struct {
	Side                      string
	N                         int
	InFlightAfter             time.Duration // from the first start until every turn had a text delta
	EndedEarly                int64         // turns that had ended by the in-flight snapshot or the one after the hold
	HeapBase, HeapIn, HeapEnd uint64        // live heap marked by a GC: before, when all are in flight, after the hold
	RSSBase, RSSIn, RSSEnd    int64         // VmRSS in bytes, after debug.FreeOSMemory, same points
	GBase, GIn, GEnd          int           // runtime.NumGoroutine, same points
	GAfter                    int           // once every turn ended and idle connections closed
	GAfterWait                time.Duration // how long until GAfter <= GBase (or the deadline)
	Hold                      time.Duration
	XactIdle                  float64 // pg: transactions per second before the turns (others' load)
	XactParked                float64 // pg: transactions per second over the hold
}

// runParked measures each side in its own process, so one side's freed
// memory does not hide the other's growth, and prints the table.
func runParked(o parkedOpts) error {
	base, stop, err := startChild()
	if err != nil {
		return err
	}
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var rs []parkedResult
	for _, side := range []string{"raw", "engine"} {
		cmd := exec.Command(exe, "-parked-side", side, "-base", base, "-c", fmt.Sprint(o.n),
			"-every", o.every.String(), "-hold", o.hold.String(), "-margin", o.margin.String(), "-pg", o.pg, fmt.Sprint("-claims=", checkClaims),
			"-heapprofile", o.heapProfile)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s side: %w", side, err)
		}
		var r parkedResult
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("%s side: %w: %q", side, err, out)
		}
		rs = append(rs, r)
	}
	storeName := "memstore"
	if o.pg != "" {
		storeName = "sqlstore on PostgreSQL"
	}
	fmt.Printf("parked: %d turns per side, each 2 tool rounds then a text delta every %v; held %v; Engine store: %s; GOMAXPROCS=%d\n\n",
		o.n, o.every, o.hold, storeName, runtime.GOMAXPROCS(0))
	fmt.Println("| path | heap per turn, in flight | heap per turn, after the hold | RSS per turn, in flight | RSS per turn, after the hold | goroutines per turn | goroutines: before / parked / after the turns ended | all in flight after |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		per := func(a, b int64) string { return fmt.Sprintf("%.1f KB", float64(a-b)/float64(r.N)/1000) }
		fmt.Printf("| %s | %s | %s | %s | %s | %.2f | %d / %d / %d (in %v) | %v |\n", r.Side,
			per(int64(r.HeapIn), int64(r.HeapBase)), per(int64(r.HeapEnd), int64(r.HeapBase)),
			per(r.RSSIn, r.RSSBase), per(r.RSSEnd, r.RSSBase),
			float64(r.GEnd-r.GBase)/float64(r.N), r.GBase, r.GEnd, r.GAfter, r.GAfterWait.Round(time.Millisecond),
			r.InFlightAfter.Round(time.Millisecond))
	}
	for _, r := range rs {
		if r.EndedEarly > 0 {
			fmt.Printf("\n%s: %d of %d turns had ended before the measurement after the hold, so its figures are not of parked turns: the slow answer lasts -hold plus -margin, and putting every turn in flight took %v; raise -margin\n",
				r.Side, r.EndedEarly, r.N, r.InFlightAfter.Round(time.Millisecond))
		}
	}
	if o.pg != "" {
		fmt.Println()
		for _, r := range rs {
			fmt.Printf("%s: database transactions %.1f/s before the turns, %.1f/s while parked: %.3f per parked turn per second above the idle rate (%.3f counting all)\n",
				r.Side, r.XactIdle, r.XactParked, (r.XactParked-r.XactIdle)/float64(r.N), r.XactParked/float64(r.N))
		}
	}
	return nil
}

// parkedSide is one side's process: it parks o.n turns on the slow model
// and prints a parkedResult as JSON.
func parkedSide(side, base string, o parkedOpts) error {
	if o.heapProfile != "" {
		runtime.MemProfileRate = 1 // every allocation, so the per-turn difference is exact
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(4, o.n)}}
	var db *sql.DB
	var st store.Store = memstore.New()
	if o.pg != "" {
		var err error
		if db, err = sql.Open("pgx", o.pg); err != nil {
			return err
		}
		defer db.Close()
		if side == "engine" {
			// The store's tables go in a schema of their own, dropped at
			// the end, as the tests' are (internal/sqltest).
			schema := fmt.Sprintf("parley_bench_%d", os.Getpid())
			if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
				return err
			}
			defer func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") }()
			sdb, err := sql.Open("pgx", withSearchPath(o.pg, schema))
			if err != nil {
				return err
			}
			defer sdb.Close()
			// As a host would: beneath the server's max_connections (100
			// by default), which 100 turns starting at once reach.
			sdb.SetMaxOpenConns(20)
			s, err := sqlstore.New(sdb, sqlstore.Options{})
			if err != nil {
				return err
			}
			if err := s.Migrate(context.Background()); err != nil {
				return err
			}
			st = s
		}
	}
	// The slow answer lasts the wait for every turn to be in flight, the
	// hold, and a margin.
	deltas := int((o.hold + o.margin) / o.every)
	slow := strings.Replace(base, "/v1", fmt.Sprintf("/slow/%d/%d/v1", o.every.Milliseconds(), deltas), 1)
	var turn, warm func(ctx context.Context, w int)
	switch side {
	case "raw":
		r, rw := rawTurn(slow, hc), rawTurn(base, hc)
		turn = func(ctx context.Context, _ int) { r(ctx) }
		warm = func(ctx context.Context, _ int) { rw(ctx) }
	case "engine":
		eng, _ := engineTurn(base, slow, hc, o.n, st)
		turn = func(ctx context.Context, w int) { eng(context.WithValue(ctx, slowKey{}, true), w) }
		warm = eng
	default:
		return fmt.Errorf("unknown side %q", side)
	}
	for range 3 { // warm up: code paths, the guard's tables, the store's statements
		warm(context.Background(), 0)
	}
	hc.CloseIdleConnections()

	res := parkedResult{Side: side, N: o.n, Hold: o.hold}
	xacts := func() (float64, time.Time) {
		if db == nil {
			return 0, time.Now()
		}
		var x float64
		if err := db.QueryRow(`SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&x); err != nil {
			log.Fatal(err)
		}
		return x, time.Now()
	}
	if db != nil { // the database's rate with no turns: other clients', and the stats' lag
		x0, t0 := xacts()
		time.Sleep(5 * time.Second)
		x1, t1 := xacts()
		res.XactIdle = (x1 - x0) / t1.Sub(t0).Seconds()
	}
	snap := func() (uint64, int64, int) {
		// The pool's idle connections belong to no parked turn: how many
		// a side has left over from the tool rounds varies from run to run.
		hc.CloseIdleConnections()
		time.Sleep(200 * time.Millisecond) // for their goroutines to end
		// The live heap the last collection marked, not HeapAlloc read
		// after it: the parked turns keep streaming, and what they
		// allocate between the collection and the read is garbage,
		// counted as heap. With 10,000 turns that is 33,000 deltas a
		// second, and HeapAlloc read after debug.FreeOSMemory had 5-30
		// KB a turn of it, more the bigger the heap the scavenger walks.
		// What they allocate while the collection marks is still counted
		// live. Two collections, so that sync.Pools' victims are gone.
		runtime.GC()
		debug.FreeOSMemory() // a collection, then memory returned for the RSS
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		return live[0].Value.Uint64(), vmRSS(), runtime.NumGoroutine()
	}
	res.HeapBase, res.RSSBase, res.GBase = snap()
	if err := writeHeapProfile(o.heapProfile, side+".base"); err != nil {
		return err
	}

	firsts := make([]atomic.Int64, o.n)
	var ended atomic.Int64 // turns over before the measurements end: they would not be parked
	var wg sync.WaitGroup
	start := time.Now()
	for i := range o.n {
		wg.Go(func() {
			turn(context.WithValue(context.Background(), firstDeltaKey{}, &firsts[i]), i)
			ended.Add(1)
		})
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		all := true
		for i := range firsts {
			if firsts[i].Load() == 0 {
				all = false
				break
			}
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not every turn was in flight after a minute", side)
		}
	}
	res.InFlightAfter = time.Since(start)
	res.HeapIn, res.RSSIn, res.GIn = snap()
	if err := writeHeapProfile(o.heapProfile, side); err != nil {
		return err
	}
	x1, t1 := xacts()
	time.Sleep(o.hold)
	x2, t2 := xacts()
	res.HeapEnd, res.RSSEnd, res.GEnd = snap()
	res.EndedEarly = ended.Load()
	if err := writeHeapProfile(o.heapProfile, side+".end"); err != nil {
		return err
	}
	if db != nil {
		res.XactParked = (x2 - x1) / t2.Sub(t1).Seconds()
	}
	wg.Wait()
	t := time.Now()
	for deadline := t.Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		hc.CloseIdleConnections() // a connection's two goroutines are the pool's, not a turn's
		res.GAfter = runtime.NumGoroutine()
		if res.GAfter <= res.GBase || time.Now().After(deadline) {
			break
		}
	}
	res.GAfterWait = time.Since(t)
	return json.NewEncoder(os.Stdout).Encode(res)
}

// withSearchPath adds search_path to a DSN in URL or keyword/value form;
// pgx sends it to the server as a run-time parameter.
func withSearchPath(dsn, schema string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// vmRSS is the process's resident set from /proc/self/status, in bytes.
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// writeHeapProfile writes the heap profile as of the last GC to
// prefix.suffix; with no prefix it does nothing. Read the parked turns'
// share with go tool pprof -sample_index=inuse_space -diff_base
// F.engine.base F.engine.
func writeHeapProfile(prefix, suffix string) error {
	if prefix == "" {
		return nil
	}
	f, err := os.Create(prefix + "." + suffix)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
