package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/quota"
)

//go:embed web
var webFS embed.FS

func main() {
	var level slog.Level // PARLEY_LOG_LEVEL: debug, info (default), warn or error
	if err := level.UnmarshalText([]byte(envOr("PARLEY_LOG_LEVEL", "info"))); err != nil {
		fmt.Fprintf(os.Stderr, "parley example: PARLEY_LOG_LEVEL=%q: want debug, info, warn or error\n", os.Getenv("PARLEY_LOG_LEVEL"))
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	warnUnknownVariables(log, os.Environ())
	set, err := settingsFromEnv()
	if err != nil {
		log.Error("parley example: bad configuration", "err", err)
		os.Exit(2)
	}
	stopTelemetry, err := startTelemetry(context.Background(), os.Getenv, os.Stdout) // OTEL_* (telemetry.go)
	if err != nil {
		log.Error("parley example: bad telemetry configuration", "err", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal stops the process at once
	err = run(ctx, set, log)
	flush, cancel := context.WithTimeout(context.Background(), telemetryStopTimeout)
	defer cancel()
	if err := stopTelemetry(flush); err != nil {
		log.Warn("telemetry: the last spans or metrics were not exported", "err", err)
	}
	if err != nil {
		log.Error("parley example failed", "err", err)
		os.Exit(1)
	}
}

// shutdownGrace is how long a stop waits for open requests, and then
// again for turns still running, before it gives up on them. A turn cut
// off here is marked interrupted by the next process's sweep. The
// server's timeouts are defaultTimeouts.
const shutdownGrace = 10 * time.Second

// run serves the example on s.Addr until ctx ends, then shuts down: it
// stops accepting, waits for open requests and for turns still running
// (their replies persist even when the client has left), and returns.
// It binds before it logs where it listens, so the log names the real
// address (PARLEY_ADDR=127.0.0.1:0 picks a free port) and a taken port is
// an error, not a "listening" line.
func run(ctx context.Context, s settings, log *slog.Logger) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return err
	}
	h, err := newHandler(s, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer h.close()
	srv := newServer(h, defaultTimeouts, log)
	sweepCtx, stopSweeps := context.WithCancel(context.Background())
	var sweeps sync.WaitGroup
	defer sweeps.Wait() // before the database closes
	defer stopSweeps()
	sweeps.Go(func() { sweepHolds(sweepCtx, h.ledger, log) })
	sweeps.Go(func() { sweepInterrupted(sweepCtx, h.engine, log) })
	sweeps.Go(func() { sweepRetention(sweepCtx, h.store, s.RetentionDays, log) })
	sweeps.Go(func() { sweepProposals(sweepCtx, h.engine, log) })

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("parley example listening", "addr", ln.Addr().String(), "url", urlOf(ln.Addr()))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "cause", context.Cause(ctx), "grace", shutdownGrace)
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		log.Warn("requests still open at the deadline; closing them", "err", err)
		_ = srv.Close()
	}
	log.Info("waiting for running turns to finish")
	turns, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := h.engine.Wait(turns); err != nil {
		log.Warn("turns still running at the deadline; their replies will be marked interrupted", "err", err)
	}
	log.Info("parley example stopped")
	return nil
}

// urlOf is the address a browser on this machine opens for addr: a
// wildcard listener (":8080") is reached at localhost.
func urlOf(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// settings is everything the server reads from the environment.
type settings struct {
	Addr                      string            // listen address
	LLM                       llmSettings       // PARLEY_LLM_*: an OpenAI-compatible connection
	Anthropic                 anthropicSettings // PARLEY_ANTHROPIC_*
	DemoDelay                 time.Duration
	Quota                     quota.Limits  // system defaults
	DatabasePath, DatabaseURL string        // SQLite file; PostgreSQL URL (wins); neither: memory
	MaxConns                  int           // the database pool's bound; 0: the database's default
	Heartbeat                 time.Duration // 0: the Engine's default
	RetentionDays             int           // < 0: keep threads forever
	MaxTurnsPerUser           int           // 0: the Engine's default; < 0: no cap
	ContextWindow             int           // the model's context in tokens; 0: the Engine's default
	OperatorAddendum          string        // site rules added to every system prompt
	ModelFamily               string        // assistant.ModelFamily*: "" (generic), anthropic or openai
	NoTitles                  bool          // no model call names new threads
	MCPTools                  string        // an MCP server whose tools the assistant may use; "": none
}

func settingsFromEnv() (settings, error) {
	s := settings{
		Addr:          envOr("PARLEY_ADDR", "127.0.0.1:8080"), // loopback: the demo trusts a header for who you are
		DemoDelay:     25 * time.Millisecond,
		DatabaseURL:   os.Getenv("PARLEY_DATABASE_URL"),
		DatabasePath:  "parley.db",
		RetentionDays: -1,
	}
	if err := checkAddr(s.Addr); err != nil {
		return s, err
	}
	var err error
	if s.LLM, err = readLLMSettings(); err != nil {
		return s, err
	}
	if s.Anthropic, err = readAnthropicSettings(); err != nil {
		return s, err
	}
	if s.MCPTools, err = readMCPToolsURL(); err != nil {
		return s, err
	}
	if v, ok := os.LookupEnv("PARLEY_DATABASE_PATH"); ok {
		s.DatabasePath = v
	}
	if v := os.Getenv("PARLEY_DATABASE_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("PARLEY_DATABASE_MAX_CONNS=%q: want a number of database connections, 1 or more", v)
		}
		s.MaxConns = n
	}
	if v := os.Getenv("PARLEY_MAX_TURNS_PER_USER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return s, fmt.Errorf("PARLEY_MAX_TURNS_PER_USER=%q: want a number of turns, 0 for the default (%d) or -1 for no cap", v, assistant.DefaultMaxTurnsPerUser)
		}
		s.MaxTurnsPerUser = n
	}
	if v := os.Getenv("PARLEY_LLM_CONTEXT_WINDOW"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("PARLEY_LLM_CONTEXT_WINDOW=%q: want the model's context window in tokens, 1 or more (default %d)", v, assistant.DefaultContextWindow)
		}
		s.ContextWindow = n
	}
	s.OperatorAddendum = os.Getenv("PARLEY_OPERATOR_ADDENDUM")
	switch v := os.Getenv("PARLEY_TITLES"); v {
	case "", "on":
	case "off":
		s.NoTitles = true
	default:
		return s, fmt.Errorf("PARLEY_TITLES=%q: want on (the default) or off", v)
	}
	switch v := os.Getenv("PARLEY_MODEL_FAMILY"); v {
	case "", "generic":
	case assistant.ModelFamilyAnthropic, assistant.ModelFamilyOpenAI:
		s.ModelFamily = v
	default:
		return s, fmt.Errorf("PARLEY_MODEL_FAMILY=%q: want anthropic, openai or generic (the default)", v)
	}
	if err := readDurations(&s); err != nil {
		return s, err
	}
	if v := os.Getenv("PARLEY_RETENTION_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return s, fmt.Errorf("PARLEY_RETENTION_DAYS=%q: want a number of days, or -1 to keep threads", v)
		}
		s.RetentionDays = n
	}
	for key, field := range map[string]**int64{
		"PARLEY_QUOTA_DAILY": &s.Quota.Daily, "PARLEY_QUOTA_WEEKLY": &s.Quota.Weekly, "PARLEY_QUOTA_MONTHLY": &s.Quota.Monthly,
	} {
		if v := os.Getenv(key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < quota.Unlimited {
				return s, fmt.Errorf("%s=%q: want a number of tokens, or -1 for unlimited", key, v)
			}
			*field = quota.Limit(n)
		}
	}
	return s, nil
}

// readDurations reads PARLEY_HEARTBEAT and PARLEY_DEMO_DELAY into s.
func readDurations(s *settings) error {
	if v := os.Getenv("PARLEY_HEARTBEAT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("PARLEY_HEARTBEAT=%q: want a duration such as 5s", v)
		}
		s.Heartbeat = d
	}
	if v := os.Getenv("PARLEY_DEMO_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("PARLEY_DEMO_DELAY=%q: want a duration such as 25ms, or 0", v)
		}
		s.DemoDelay = d
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// demoUsers is the demo's whole user directory.
var demoUsers = map[string]parley.User{
	"alice": {ID: "alice", Name: "Alice", Roles: []string{"user"}},
	"bob":   {ID: "bob", Name: "Bob", Roles: []string{"user"}},
	"sam":   {ID: "sam", Name: "Sam", Roles: []string{"user", "staff"}},
}

func authenticate(r *http.Request) (parley.User, error) {
	u, ok := demoUsers[r.Header.Get("X-Demo-User")]
	if !ok {
		return parley.User{}, errors.New("unknown or missing X-Demo-User")
	}
	return u, nil
}

// app is the example's HTTP handler, the Engine behind it and what the
// Engine and the notes keep in the database.
type app struct {
	http.Handler
	engine *assistant.Engine
	database
	closeMCP func() // closes the PARLEY_MCP_TOOLS session
}

// sweepEvery calls sweep every interval until ctx ends, and first at
// start if atStart. sweep logs what it did; it is passed the tick's time.
func sweepEvery(ctx context.Context, interval time.Duration, atStart bool, sweep func(now time.Time)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	if atStart {
		sweep(time.Now())
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			sweep(now)
		}
	}
}

// sweepInterrupted marks replies whose turn died with a previous process
// as interrupted, at start and then every minute, until ctx ends.
func sweepInterrupted(ctx context.Context, eng *assistant.Engine, log *slog.Logger) {
	sweepEvery(ctx, time.Minute, true, func(time.Time) {
		if n, err := eng.SweepInterrupted(ctx); err != nil {
			if ctx.Err() == nil {
				log.Error("interrupted-turn sweep", "err", err)
			}
		} else if n > 0 {
			log.Info("marked the replies of dead turns interrupted", "messages", n)
		} else {
			log.Debug("interrupted-turn sweep found nothing to mark")
		}
	})
}

// sweepProposals marks confirm cards left undecided past their expiry
// expired, at start and then every minute, until ctx ends. A late decision
// is refused either way; the sweep keeps the stored status honest for
// reloaded threads and reports.
func sweepProposals(ctx context.Context, eng *assistant.Engine, log *slog.Logger) {
	sweepEvery(ctx, time.Minute, true, func(time.Time) {
		if n, err := eng.ExpireProposals(ctx); err != nil {
			if ctx.Err() == nil {
				log.Error("proposal sweep", "err", err)
			}
		} else if n > 0 {
			log.Info("proposal sweep expired undecided approvals", "proposals", n)
		} else {
			log.Debug("proposal sweep found nothing to expire")
		}
	})
}

// sweepHolds voids quota holds left by turns that died (a crashed worker)
// every 15 seconds, until ctx ends: a dead turn's hold lapses three
// heartbeats (15 s by default) after its last renewal, so its user has the
// allowance back within about half a minute. The sweep reads an index of
// expiries and costs little.
func sweepHolds(ctx context.Context, l quota.Ledger, log *slog.Logger) {
	sweepEvery(ctx, 15*time.Second, false, func(now time.Time) {
		if n, err := l.Sweep(ctx, now); err != nil {
			if ctx.Err() == nil {
				log.Error("quota sweep", "err", err)
			}
		} else if n > 0 {
			log.Info("quota sweep voided stale holds", "holds", n)
		} else {
			log.Debug("quota sweep found no stale holds")
		}
	})
}

// newHandler wires the notes app, the Engine and the HTTP API, with the
// models the settings name.
func newHandler(s settings, log *slog.Logger) (*app, error) {
	return newApp(s, newModels(s, log), log)
}

// newApp wires the notes app, the Engine on m and the HTTP API. Tests
// pass models of their own.
func newApp(s settings, m models, log *slog.Logger) (*app, error) {
	db, err := openDatabase(context.Background(), s, log)
	if err != nil {
		return nil, err
	}
	reg, err := demoTools(db.notes)
	if err != nil {
		_ = db.close()
		return nil, err
	}
	registry, closeMCP, err := attachMCPTools(context.Background(), s.MCPTools, reg, log)
	if err != nil {
		_ = db.close()
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			closeMCP()
		}
	}()
	eng, err := assistant.New(assistant.Config{
		Ledger:            db.ledger,
		HeartbeatInterval: s.Heartbeat,
		MaxTurnsPerUser:   s.MaxTurnsPerUser,
		Provider:          m.provider,
		Connections:       m.connections,
		ContextWindow:     s.ContextWindow,
		Store:             db.store,
		Tools:             registry,
		Authorizer: assistant.RoleAuthorizer{
			Tools: map[string][]string{"user": append([]string{"category:notes", "category:general"}, mcpGrants(s.MCPTools)...), "staff": {"*"}},
			Staff: []string{"staff"},
		},
		AssistantName: "Notes Assistant",
		Organization:  "Parley Notes",
		PageInstructions: map[string]string{
			"notes": "The user is looking at their notes list.",
		},
		OperatorAddendum: s.OperatorAddendum,
		ModelFamily:      s.ModelFamily,
		// A short model call names each new thread after its first answer;
		// the demo model answers it too.
		GenerateTitles: !s.NoTitles,
		Logger:         log,
	})
	if err != nil {
		_ = db.close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/chat/", httpapi.New(eng, httpapi.Config{Authenticate: authenticate, Logger: log}))
	mcpH, err := mcpHandler(eng, log)
	if err != nil {
		_ = db.close()
		return nil, err
	}
	mux.Handle("/mcp", mcpH)
	web, err := fs.Sub(webFS, "web")
	if err != nil {
		_ = db.close()
		return nil, err
	}
	mux.Handle("/", http.FileServerFS(web))
	csp, err := embeddedPagePolicy()
	if err != nil {
		_ = db.close()
		return nil, err
	}
	ok = true
	return &app{Handler: securityHeaders(csp, mux), engine: eng, database: db, closeMCP: closeMCP}, nil
}
