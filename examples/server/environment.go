package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// serverVariables are the PARLEY_* variables the server reads: the one
// list, which README.md's configuration table and doc.go follow. A variable
// added to settingsFromEnv belongs here too (a test checks).
var serverVariables = []string{
	"PARLEY_ADDR",
	"PARLEY_LOG_LEVEL",
	"PARLEY_LLM_PRESET", "PARLEY_LLM_BASE_URL", "PARLEY_LLM_API_KEY", "PARLEY_LLM_MODEL", "PARLEY_LLM_MODELS",
	"PARLEY_LLM_CONTEXT_WINDOW",
	"PARLEY_ANTHROPIC_API_KEY", "PARLEY_ANTHROPIC_API_KEY_FILE", "PARLEY_ANTHROPIC_BASE_URL",
	"PARLEY_ANTHROPIC_MODEL", "PARLEY_ANTHROPIC_MODELS",
	"PARLEY_MODEL_FAMILY", "PARLEY_OPERATOR_ADDENDUM", "PARLEY_TITLES",
	"PARLEY_DATABASE_PATH", "PARLEY_DATABASE_URL", "PARLEY_DATABASE_MAX_CONNS",
	"PARLEY_MAX_TURNS_PER_USER", "PARLEY_RETENTION_DAYS", "PARLEY_HEARTBEAT", "PARLEY_DEMO_DELAY",
	"PARLEY_QUOTA_DAILY", "PARLEY_QUOTA_WEEKLY", "PARLEY_QUOTA_MONTHLY",
	"PARLEY_MCP_TOOLS",
}

// telemetryVariables are the standard OpenTelemetry variables the server
// reads itself (telemetry.go); the SDK and its exporters read more of the
// OTEL_* ones. They are not PARLEY_* variables, so warnUnknownVariables
// never flags them, nor any other OTEL_* variable.
var telemetryVariables = []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// testVariables are PARLEY_* variables the repository's tests and tools
// read; set in a shell that also starts the server, they are not typos.
var testVariables = []string{
	"PARLEY_TEST_POSTGRES_DSN", "PARLEY_TEST_RACE_SPLIT", "PARLEY_REQUIRE_NODE", "PARLEY_REQUIRE_BROWSER", "PARLEY_REQUIRE_DICT",
	"PARLEY_SCREENSHOTS", "PARLEY_CHROMIUM", "PARLEY_SOAK", "PARLEY_DICT", "PARLEY_GUARD_CORPUS", "PARLEY_TEST_QUIET",
	"PARLEY_GUARD_LAZY_CHILD",
}

// warnUnknownVariables logs, at Warn, each PARLEY_* variable in environ
// (os.Environ's form) that nobody reads, with the known name closest to
// it: a typo'd variable is otherwise silently ignored.
func warnUnknownVariables(log *slog.Logger, environ []string) {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PARLEY_") || slices.Contains(serverVariables, name) || slices.Contains(testVariables, name) {
			continue
		}
		if near := closestVariable(name); near != "" {
			log.Warn("unknown environment variable, ignored; did you mean "+near+"?", "name", name, "closest", near)
		} else {
			log.Warn("unknown environment variable, ignored", "name", name, "known", strings.Join(serverVariables, " "))
		}
	}
}

// closestVariable is the server variable nearest to name in edit
// distance, if it is near enough to be a typo: at most a third of its
// length, and 4, away. "" if none is.
func closestVariable(name string) string {
	best, bestD := "", 0
	for _, v := range serverVariables {
		d := editDistance(name, v)
		if best == "" || d < bestD {
			best, bestD = v, d
		}
	}
	if bestD > min(4, len(best)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (the names are ASCII).
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkAddr refuses a PARLEY_ADDR net.Listen would refuse, saying what to
// write instead. A bare port ("8080") is refused rather than read as
// 127.0.0.1:8080: whoever wrote it may have meant every interface (:8080),
// and which one to listen on is not for the server to guess.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if n, perr := strconv.Atoi(addr); perr == nil && n >= 0 && n <= 65535 {
			return fmt.Errorf("PARLEY_ADDR=%q is a port alone: want host:port, 127.0.0.1:%s for this machine only or :%s for every interface", addr, addr, addr)
		}
		return fmt.Errorf("PARLEY_ADDR=%q: want host:port, such as 127.0.0.1:8080 (this machine only) or :8080 (every interface)", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("PARLEY_ADDR=%q: the port %q is not a number from 0 to 65535 (0 picks a free one)", addr, port)
	}
	return nil
}

// checkBaseURL refuses a model endpoint that is not an absolute http or
// https URL. Without the check, "localhost:11434/v1" parses as the scheme
// "localhost", every call fails to connect, and the user is told to try
// again later.
func checkBaseURL(name, raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	example := "http://" + strings.TrimPrefix(raw, "//")
	if err != nil || strings.Contains(raw, "://") {
		example = "http://localhost:11434/v1"
	}
	return fmt.Errorf("%s=%q: want an http:// or https:// URL, such as %s", name, raw, example)
}

// checkDatabaseDir refuses a SQLite file whose directory does not exist,
// before the driver's "unable to open database file (14)".
func checkDatabaseDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("PARLEY_DATABASE_PATH=%s: the directory %s does not exist or cannot be read (%v): create it (mkdir -p %s), or set PARLEY_DATABASE_PATH to a file in an existing directory (\"\" keeps everything in memory)", path, dir, err, dir)
	case !fi.IsDir():
		return fmt.Errorf("PARLEY_DATABASE_PATH=%s: %s is not a directory: want a file in an existing directory", path, dir)
	}
	return nil
}
