package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

const textDeltas = 200

func main() {
	serve := flag.Bool("serve", false, "run the mock server and print its address (used by the parent)")
	turns := flag.Int("turns", 300, "measured turns per side")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of both sides to this file, each sample labelled side=raw or side=engine")
	thread := flag.Int("thread", 0, "instead: measure a thread of this many turns, with and without compaction")
	window := flag.Int("window", assistant.DefaultContextWindow, "with -thread: the context window in tokens")
	corpus := flag.String("corpus", "../shared/guardcorpus/benign.jsonl", "with -thread: JSONL prose, one {\"text\"} per line")
	claims := flag.Bool("claims", true, "check the model's claims of changes (false: Config.DisableClaimCheck)")
	conc := flag.Int("c", 1, "turns in flight at once, on each side (with -parked: the parked turns)")
	parked := flag.Bool("parked", false, "instead: park -c turns on a slow model and measure what each costs while in flight")
	every := flag.Duration("every", 300*time.Millisecond, "with -parked: the slow model's time between deltas")
	hold := flag.Duration("hold", 20*time.Second, "with -parked: how long the parked turns are measured")
	margin := flag.Duration("margin", 15*time.Second, "with -parked: how much longer than -hold the slow answer lasts; it must outlast putting every turn in flight")
	pg := flag.String("pg", "", "with -parked: a PostgreSQL DSN; the Engine uses store/sqlstore on it (default memstore)")
	heapProfile := flag.String("heapprofile", "", "with -parked: write each side's heap profiles, every allocation sampled, to F.<side>.base (before the turns), F.<side> (all in flight) and F.<side>.end (after the hold)")
	parkedSideFlag := flag.String("parked-side", "", "run one side of -parked: raw or engine (used by the parent)")
	baseFlag := flag.String("base", "", "with -parked-side: the mock server's base URL (used by the parent)")
	flag.Parse()
	if *conc < 1 {
		log.Fatal("-c must be at least 1")
	}
	checkClaims = *claims
	if *parked || *parkedSideFlag != "" {
		o := parkedOpts{n: *conc, every: *every, hold: *hold, margin: *margin, pg: *pg, heapProfile: *heapProfile}
		do := func() error { return runParked(o) }
		if *parkedSideFlag != "" {
			do = func() error { return parkedSide(*parkedSideFlag, *baseFlag, o) }
		}
		if err := do(); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *thread > 0 {
		if err := runThread(*thread, *window, *corpus); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *serve {
		serveMock()
		return
	}
	base, stop, err := startChild()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(4, *conc)}}
	rawCtx := rawTurn(base, client)
	raw := func(int) { rawCtx(context.Background()) }
	engCtx, firstBlock := engineTurn(base, "", client, *conc, memstore.New())
	eng := func(w int) { engCtx(context.Background(), w) }

	for range 30 { // warm up both paths and the connection pool
		raw(0)
		eng(0)
	}
	if *conc > 1 { // open as many connections as turns in flight
		run(*conc, *conc, raw)
		run(*conc, *conc, eng)
	}
	_, _ = firstBlock() // forget the warm-up's latencies
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	// Alternate the two sides in batches so drift in machine load (other
	// processes, thermal, GC) falls on both equally.
	// Under concurrency a batch holds at least two turns per worker, so
	// most of it runs with -c turns in flight.
	batches := 10
	if *conc > 1 {
		batches = max(1, min(10, *turns/(2**conc)))
	}
	var rawM, engM result
	for range batches {
		// The profile's samples carry their side (go tool pprof -tagfocus
		// side=engine); the goroutines a side starts inherit the label.
		// Those started before, as the HTTP transport's connections of
		// the warm-up and the GC's workers, carry none.
		pprof.Do(context.Background(), pprof.Labels("side", "raw"), func(context.Context) {
			rawM = rawM.add(measure(*turns/batches, *conc, raw))
		})
		pprof.Do(context.Background(), pprof.Labels("side", "engine"), func(context.Context) {
			engM = engM.add(measure(*turns/batches, *conc, eng))
		})
	}
	rawM, engM = rawM.div(batches), engM.div(batches)
	lat, hand := firstBlock()

	fmt.Printf("turn: 2 tool rounds + %d text deltas; %d turns each in %d alternating batches; %d in flight; GOMAXPROCS=%d\n\n",
		textDeltas, *turns/batches*batches, batches, *conc, runtime.GOMAXPROCS(0))
	fmt.Println("| path | CPU per turn | allocs per turn | bytes per turn | wall per turn |")
	fmt.Println("|---|---|---|---|---|")
	rawM.row("raw openai-go")
	engM.row("Engine.Stream")
	fmt.Printf("\nCPU ratio engine/raw: %.2fx   alloc ratio: %.2fx\n", engM.cpu.Seconds()/rawM.cpu.Seconds(), engM.allocs/rawM.allocs)
	fmt.Printf("first block after first provider text delta: p50 %v, p99 %v, max %v (n=%d)\n",
		lat.pct(50), lat.pct(99), lat.pct(100), len(lat))
	fmt.Printf("first block after the delta that completed its text: p50 %v, p99 %v, max %v (n=%d)\n",
		hand.pct(50), hand.pct(99), hand.pct(100), len(hand))
}

type result struct {
	cpu, wall     time.Duration
	allocs, bytes float64
}

func (r result) add(o result) result {
	return result{r.cpu + o.cpu, r.wall + o.wall, r.allocs + o.allocs, r.bytes + o.bytes}
}

func (r result) div(n int) result {
	return result{r.cpu / time.Duration(n), r.wall / time.Duration(n), r.allocs / float64(n), r.bytes / float64(n)}
}

func (r result) row(name string) {
	fmt.Printf("| %s | %v | %.0f | %.0f | %v |\n", name, r.cpu.Round(time.Microsecond), r.allocs, r.bytes, r.wall.Round(time.Microsecond))
}

// measure runs fn n times, c at once, and returns per-run CPU (user+system
// of this process), wall time and allocations. Wall time is the batch's
// divided by n: under concurrency, the inverse of throughput.
func measure(n, c int, fn func(worker int)) result {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0, t0 := cpuTime(), time.Now()
	run(n, c, fn)
	wall, cpu := time.Since(t0), cpuTime()-c0
	runtime.ReadMemStats(&m1)
	return result{
		cpu:    cpu / time.Duration(n),
		wall:   wall / time.Duration(n),
		allocs: float64(m1.Mallocs-m0.Mallocs) / float64(n),
		bytes:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n),
	}
}

// run runs fn n times on c workers (at most n); worker w calls fn(w).
func run(n, c int, fn func(worker int)) {
	if c <= 1 {
		for range n {
			fn(0)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(c, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				fn(w)
			}
		})
	}
	wg.Wait()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// script is the three responses of one turn, served in rotation.
func script() []openaimock.Response {
	text := make([]string, textDeltas)
	// Twenty words to a sentence, as prose has them: the claim check
	// (Config.DisableClaimCheck) lets text through a sentence at a time.
	words := strings.Fields("The forecast for Paris is sunny with a light breeze and a high of twenty one degrees while Berlin stays cloudy.")
	for i := range text {
		text[i] = words[i%len(words)] + " "
	}
	return []openaimock.Response{
		{ToolCalls: []openaimock.ToolCall{{ID: "call_1", Name: "get_weather", Args: []string{`{"city":`, `"Paris"}`}}},
			Usage: openaimock.Usage{PromptTokens: 300, CompletionTokens: 12}},
		{ToolCalls: []openaimock.ToolCall{{ID: "call_2", Name: "get_weather", Args: []string{`{"city":`, `"Berlin"}`}}},
			Usage: openaimock.Usage{PromptTokens: 340, CompletionTokens: 12}},
		{Text: text, Usage: openaimock.Usage{PromptTokens: 380, CompletionTokens: textDeltas}},
	}
}

// serveMock serves the script on a loopback port. A request gets the
// response after as many as it carries tool results, so turns may overlap.
func serveMock() {
	var servers []*openaimock.Server
	for _, r := range script() {
		s := openaimock.New()
		s.SetFallback(r)
		servers = append(servers, s)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		round := min(bytes.Count(body, []byte(`"role":"tool"`)), len(servers)-1)
		var every, n int // /slow/{every ms}/{deltas}/v1: the answer is slow (-parked)
		if _, err := fmt.Sscanf(r.URL.Path, "/slow/%d/%d/", &every, &n); err == nil && round == len(servers)-1 {
			serveSlow(w, r, time.Duration(every)*time.Millisecond, n)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		servers[round].ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("http://" + ln.Addr().String() + "/v1")
	go func() { // exit when the parent closes our stdin
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	log.Fatal(http.Serve(ln, h))
}

func startChild() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "-serve")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return "", nil, fmt.Errorf("mock server did not start: %w", err)
	}
	return strings.TrimSpace(line), func() { _ = stdin.Close(); _ = cmd.Wait() }, nil
}

const systemPrompt = "You are the assistant built into the host's application. Use the tools to look things up instead of guessing."

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)

// rawTurn is the baseline: the same three calls made with openai-go
// directly. If ctx carries a firstDeltaKey, the first text delta's time is
// stored there.
func rawTurn(base string, hc *http.Client) func(ctx context.Context) {
	svc := oai.NewChatCompletionService(option.WithBaseURL(base), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	var schema map[string]any
	_ = json.Unmarshal(weatherSchema, &schema)
	toolsParam := []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(oai.FunctionDefinitionParam{
		Name: "get_weather", Description: oai.String("Weather for a city."), Parameters: schema,
	})}
	return func(ctx context.Context) {
		first, _ := ctx.Value(firstDeltaKey{}).(*atomic.Int64)
		msgs := []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(systemPrompt), oai.UserMessage("What is the weather in Paris and Berlin?")}
		for round := 0; ; round++ {
			stream := svc.NewStreaming(ctx, oai.ChatCompletionNewParams{
				Model: "mock-model", Messages: msgs, Tools: toolsParam,
				StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
			})
			var text strings.Builder
			type call struct{ id, name, args string }
			var calls []call
			for stream.Next() {
				ch := stream.Current()
				for _, c := range ch.Choices {
					text.WriteString(c.Delta.Content)
					if first != nil && c.Delta.Content != "" {
						first.CompareAndSwap(0, time.Now().UnixNano())
					}
					for _, tc := range c.Delta.ToolCalls {
						for int(tc.Index) >= len(calls) {
							calls = append(calls, call{})
						}
						k := &calls[tc.Index]
						k.id += tc.ID
						k.name += tc.Function.Name
						k.args += tc.Function.Arguments
					}
				}
			}
			if err := stream.Err(); err != nil {
				log.Fatal(err)
			}
			_ = stream.Close()
			if len(calls) == 0 {
				return
			}
			asst := oai.ChatCompletionAssistantMessageParam{}
			for _, c := range calls {
				asst.ToolCalls = append(asst.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{ID: c.id,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.name, Arguments: c.args}}})
			}
			msgs = append(msgs, oai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
			for _, c := range calls {
				msgs = append(msgs, oai.ToolMessage(`{"ok":true,"summary":"sunny","data":{"sky":"sunny"}}`, c.id))
			}
		}
	}
}

// timedProvider records when the wrapped provider yields the first text
// delta of a turn, in the *atomic.Int64 (unix nanos) its context carries
// (-parked waits on it), and when it yields each, in the *textTimes it
// carries. A context
// carrying slowKey is served by slow instead (-parked).
type timedProvider struct {
	providers.Provider
	slow providers.Provider
}

type firstDeltaKey struct{}

type textTimesKey struct{}

// textTimes records when each text delta of a turn was yielded, by the
// length of the turn's text so far. The claim check holds prose back a
// sentence at a time, so the first block leaves when a later delta ends
// its sentence; covering finds that delta, and ends the recording (a
// parked turn's deltas would grow it). Reused from turn to turn, it
// allocates nothing once grown.
type textTimes struct {
	mu   sync.Mutex
	ends []int   // the text's length after each delta
	at   []int64 // unix nanos
	done bool    // covering was called
}

func (t *textTimes) reset() {
	t.mu.Lock()
	t.ends, t.at, t.done = t.ends[:0], t.at[:0], false
	t.mu.Unlock()
}

func (t *textTimes) add(n int, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	end := n
	if len(t.ends) > 0 {
		end += t.ends[len(t.ends)-1]
	}
	t.ends, t.at = append(t.ends, end), append(t.at, at)
}

// covering returns when the first text delta came and when the text first
// reached n bytes (0: not yet).
func (t *textTimes) covering(n int) (first, reached int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if len(t.at) == 0 {
		return 0, 0
	}
	if i, _ := slices.BinarySearch(t.ends, n); i < len(t.ends) {
		reached = t.at[i]
	}
	return t.at[0], reached
}

type slowKey struct{}

func (p *timedProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	first, _ := ctx.Value(firstDeltaKey{}).(*atomic.Int64)
	times, _ := ctx.Value(textTimesKey{}).(*textTimes)
	prov := p.Provider
	if p.slow != nil && ctx.Value(slowKey{}) != nil {
		prov = p.slow
	}
	return func(yield func(providers.Event, error) bool) {
		for ev, err := range prov.Stream(ctx, req) {
			if ev.Kind == providers.TextDelta {
				now := time.Now().UnixNano()
				if first != nil {
					first.CompareAndSwap(0, now)
				}
				if times != nil {
					times.add(len(ev.Text), now)
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// checkClaims is the -claims flag.
var checkClaims = true

// engineTurn is a whole Parley turn over the same server. Each of the
// workers is its own user, as MaxTurnsPerUser caps one user's turns.
// A turn whose context carries slowKey calls the model at slowBase.
//
// It records two latencies of each turn's first text block: from the
// first text delta the provider yielded, and from the delta that completed
// the block's text (the claim check holds a sentence until it ends), the
// Engine's own hand-off.
func engineTurn(base, slowBase string, hc *http.Client, workers int, st store.Store) (func(ctx context.Context, worker int), func() (fromFirst, handOff latencies)) {
	weather := tools.Must(tools.New(tools.Spec{Name: "get_weather", Description: "Weather for a city.", InputSchema: weatherSchema},
		func(_ context.Context, _ tools.Call, in struct {
			City string `json:"city"`
		}) (tools.Result, error) {
			return tools.OK("sunny", map[string]string{"sky": "sunny"}), nil
		}))
	reg, err := tools.NewSet(weather)
	if err != nil {
		log.Fatal(err)
	}
	tp := &timedProvider{Provider: openai.New(openai.Config{BaseURL: base, Model: "mock-model", HTTPClient: hc})}
	if slowBase != "" {
		tp.slow = openai.New(openai.Config{BaseURL: slowBase, Model: "mock-model", HTTPClient: hc})
	}
	cfg := assistant.Config{
		Provider: tp, Store: st, Tools: reg, Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
		DisableClaimCheck: !checkClaims,
	}
	if slowBase != "" {
		// Parked turns are not timed, and a turn that fails there (a
		// database out of connections) should say why. Elsewhere the
		// Logger stays nil, which costs nothing, as in the earlier runs.
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	eng, err := assistant.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	type worker struct {
		u         parley.User
		lat, hand latencies
		times     textTimes
		buf       []byte
	}
	ws := make([]worker, workers)
	for i := range ws {
		ws[i] = worker{u: parley.User{ID: "bench", Roles: []string{"user"}}, buf: make([]byte, 0, 4096)}
		// Sized before any baseline, so a parked turn's heap does not
		// count the recorder's growth.
		ws[i].times.ends, ws[i].times.at = make([]int, 0, 256), make([]int64, 0, 256)
		if workers > 1 {
			ws[i].u.ID = fmt.Sprint("bench-", i)
		}
	}
	turn := func(ctx context.Context, w int) {
		wk := &ws[w]
		wk.times.reset()
		ctx = context.WithValue(ctx, textTimesKey{}, &wk.times)
		var firstBlock, firstDelta, completed int64
		for b := range eng.Stream(ctx, wk.u, assistant.Request{Message: "What is the weather in Paris and Berlin?"}) {
			if b.Kind == blocks.Markdown && firstBlock == 0 {
				firstBlock = time.Now().UnixNano()
				firstDelta, completed = wk.times.covering(len(b.Content))
			}
			if b.Kind == blocks.Error {
				log.Fatalf("turn failed: %s: %s", b.ErrorCode, b.Content)
			}
			wk.buf = blocks.AppendNDJSON(wk.buf[:0], &b)
		}
		if firstDelta != 0 {
			wk.lat = append(wk.lat, time.Duration(firstBlock-firstDelta))
		}
		if completed != 0 {
			wk.hand = append(wk.hand, time.Duration(firstBlock-completed))
		}
	}
	// latencies returns those recorded since the last call (call it
	// between runs).
	return turn, func() (fromFirst, handOff latencies) {
		for i := range ws {
			fromFirst, handOff = append(fromFirst, ws[i].lat...), append(handOff, ws[i].hand...)
			ws[i].lat, ws[i].hand = ws[i].lat[:0], ws[i].hand[:0]
		}
		return fromFirst, handOff
	}
}

type latencies []time.Duration

func (l latencies) pct(p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i].Round(time.Microsecond)
}
