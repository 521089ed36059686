package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	Scenario       string
	Concurrency    int
	Rounds         int
	Users          []string
	Postgres       string // DSN of a server to create a fresh database on; "" = SQLite
	MaxConns       string // PARLEY_DATABASE_MAX_CONNS; "" = unset
	PerUserCap     string // PARLEY_MAX_TURNS_PER_USER; "" = the scenario's default
	Field          string // bigbody: page_context or args
	BodyBytes      int
	EndlessFor     time.Duration
	EndlessBytes   int64
	RequestTimeout time.Duration
	Timeout        time.Duration
	Keep           bool
	Race           bool // build the server with the race detector
}

// Exit statuses.
const (
	exitSetup      = 1 // the run could not be set up
	exitIncomplete = 2 // cut short by -timeout or a signal
)

// defaultBodySize is bigbody's default -body-bytes: a body just under 1 MiB.
const defaultBodySize = 1<<20 - 512

// errIncomplete marks a run cut short; its figures were printed but are partial.
var errIncomplete = errors.New("run cut short")

func main() {
	opts, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(exitSetup)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, opts, os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errIncomplete):
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(exitIncomplete)
	default:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(exitSetup)
	}
}

func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	var users string
	var maxConns, perUserCap int
	fs.StringVar(&o.Scenario, "scenario", "turns", "turns, bigbody or endless")
	fs.IntVar(&o.Concurrency, "concurrency", 0, "parallel workers (default 200 for turns, 100 for bigbody)")
	fs.IntVar(&o.Rounds, "rounds", 5, "messages per worker (turns)")
	fs.StringVar(&users, "users", "alice,bob,sam", "demo users, comma-separated")
	fs.StringVar(&o.Postgres, "postgres", "", "PostgreSQL DSN on 127.0.0.1 to create a fresh database on (default: SQLite)")
	fs.IntVar(&maxConns, "max-conns", 0, "PARLEY_DATABASE_MAX_CONNS for the server (default: unset)")
	fs.IntVar(&perUserCap, "per-user-cap", 0, "PARLEY_MAX_TURNS_PER_USER for the server (default: -1 for turns, unset otherwise)")
	fs.StringVar(&o.Field, "field", "page_context", "bigbody: page_context or args")
	fs.IntVar(&o.BodyBytes, "body-bytes", defaultBodySize, "bigbody: size of the large field")
	fs.DurationVar(&o.EndlessFor, "endless-for", 30*time.Second, "endless: how long the model streams at most")
	fs.Int64Var(&o.EndlessBytes, "endless-bytes", 256<<20, "endless: how much content the model streams at most")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 2*time.Minute, "bound on each request")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "bound on the whole run")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary directory and database")
	fs.BoolVar(&o.Race, "race", false, "build the server with the race detector")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["max-conns"] {
		o.MaxConns = strconv.Itoa(maxConns)
	}
	if set["per-user-cap"] {
		o.PerUserCap = strconv.Itoa(perUserCap)
	}
	for u := range strings.SplitSeq(users, ",") {
		if u = strings.TrimSpace(u); u != "" {
			o.Users = append(o.Users, u)
		}
	}
	if o.Concurrency == 0 {
		o.Concurrency = 200
		if o.Scenario == "bigbody" {
			o.Concurrency = 100
		}
	}
	return o, o.validate()
}

func (o *options) validate() error {
	switch {
	case o.Scenario != "turns" && o.Scenario != "bigbody" && o.Scenario != "endless":
		return fmt.Errorf("-scenario %q: want turns, bigbody or endless", o.Scenario)
	case o.Concurrency < 1 || o.Concurrency > 10000:
		return fmt.Errorf("-concurrency %d: want 1 to 10000", o.Concurrency)
	case o.Rounds < 1 || o.Rounds > 1000:
		return fmt.Errorf("-rounds %d: want 1 to 1000", o.Rounds)
	case len(o.Users) == 0:
		return errors.New("-users names no user")
	case o.Field != "page_context" && o.Field != "args":
		return fmt.Errorf("-field %q: want page_context or args", o.Field)
	case o.BodyBytes < 0 || o.BodyBytes > 64<<20:
		return fmt.Errorf("-body-bytes %d: want 0 to 64 MiB", o.BodyBytes)
	case o.EndlessFor <= 0 || o.EndlessBytes <= 0:
		return errors.New("-endless-for and -endless-bytes must be positive")
	case o.RequestTimeout <= 0 || o.Timeout <= 0:
		return errors.New("-request-timeout and -timeout must be positive")
	}
	if o.Postgres != "" {
		if _, err := loopbackDSN(o.Postgres); err != nil {
			return fmt.Errorf("-postgres: %w", err)
		}
	}
	return nil
}

// run sets up the server, runs the scenario and prints the report to out.
// Progress goes to logw.
func run(ctx context.Context, o options, out, logw io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	progress := func(format string, args ...any) { fmt.Fprintf(logw, "load: "+format+"\n", args...) }

	dir, err := os.MkdirTemp("", "parley-load-")
	if err != nil {
		return fmt.Errorf("setup failed: %w", err)
	}
	defer func() {
		if o.Keep {
			progress("kept %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	// setupErr reports a failure: a setup error unless the run's own
	// context ended it.
	setupErr := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w (%w)", errIncomplete, context.Cause(ctx), err)
		}
		return fmt.Errorf("setup failed: %w", err)
	}

	root, err := moduleRoot(ctx)
	if err != nil {
		return setupErr(err)
	}
	progress("building ./examples/server in %s", root)
	bin, err := buildServer(ctx, root, dir, o.Race)
	if err != nil {
		return setupErr(err)
	}

	env := []string{}
	storeDesc := "sqlite (fresh file)"
	if o.Postgres != "" {
		db, err := createDatabase(ctx, o.Postgres)
		if err != nil {
			return setupErr(err)
		}
		defer func() {
			if o.Keep {
				progress("kept database %s", db.name)
				return
			}
			// A fresh context: the run's may have ended.
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer dcancel()
			if derr := db.drop(dctx); derr != nil {
				progress("could not drop database %s: %v", db.name, derr)
			}
		}()
		env = append(env, "PARLEY_DATABASE_URL="+db.url)
		storeDesc = "postgres (fresh database " + db.name + ")"
	} else {
		env = append(env, "PARLEY_DATABASE_PATH="+filepath.Join(dir, "parley.db"))
	}
	if o.MaxConns != "" {
		env = append(env, "PARLEY_DATABASE_MAX_CONNS="+o.MaxConns)
		storeDesc += ", max conns " + o.MaxConns
	}
	perUserCap := o.PerUserCap
	if perUserCap == "" && o.Scenario == "turns" {
		perUserCap = "-1"
	}
	if perUserCap != "" {
		env = append(env, "PARLEY_MAX_TURNS_PER_USER="+perUserCap)
	}
	var model *endlessModel
	if o.Scenario == "endless" {
		model, err = startEndlessModel(o.EndlessFor, o.EndlessBytes)
		if err != nil {
			return setupErr(err)
		}
		defer model.close()
		env = append(env, "PARLEY_LLM_BASE_URL="+model.baseURL(), "PARLEY_LLM_API_KEY=x")
	}

	srv, err := startServer(ctx, bin, dir, env)
	if err != nil {
		return setupErr(err)
	}
	defer func() {
		if serr := srv.stop(); serr != nil {
			progress("stopping the server: %v", serr)
		}
	}()
	progress("server pid %d on %s", srv.pid(), srv.base)

	c := newClient(srv.base, o.RequestTimeout, o.Concurrency)
	users, skipped, err := c.knownUsers(ctx, o.Users)
	if err != nil {
		return setupErr(err)
	}

	t := newTable(out)
	t.row("scenario", describeScenario(o))
	t.row("server", serverRevision(ctx, root))
	t.row("store", storeDesc)
	if perUserCap != "" {
		t.row("per-user cap", perUserCap)
	}
	userDesc := strings.Join(users, ",")
	if len(skipped) > 0 {
		userDesc += " (not known to the server, skipped: " + strings.Join(skipped, ",") + ")"
	}
	t.row("users", userDesc)

	progress("running %s", o.Scenario)
	switch o.Scenario {
	case "turns":
		err = runTurns(ctx, o, c, srv, users, t)
	case "bigbody":
		err = runBigBody(ctx, o, c, srv, users, t)
	case "endless":
		err = runEndless(ctx, o, srv, model, users[0], t)
	}
	// The log is read once the server has stopped, so that it holds what
	// the shutdown wrote too (and a race detector's last reports).
	if serr := srv.stop(); serr != nil {
		progress("stopping the server: %v", serr)
	}
	srv.reportLog(t, o.Race)
	t.flush()
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errIncomplete, err)
	}
	return nil
}

func describeScenario(o options) string {
	switch o.Scenario {
	case "turns":
		return fmt.Sprintf("turns: %d workers x %d rounds, POST /api/chat/stream", o.Concurrency, o.Rounds)
	case "bigbody":
		path := "POST /api/chat/stream with a page_context"
		if o.Field == "args" {
			path = "POST /api/chat/tools/list_notes/execute with tool arguments"
		}
		return fmt.Sprintf("bigbody: %d concurrent %s of %s", o.Concurrency, path, mib(int64(o.BodyBytes)))
	default:
		return fmt.Sprintf("endless: one message, a model that streams for up to %v or %s", o.EndlessFor, mib(o.EndlessBytes))
	}
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
