package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logBuffer collects a logger's output for a test to read while the
// server runs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor returns the first logged line holding s, failing the test if
// none comes within 10s.
func (l *logBuffer) waitFor(t *testing.T, s string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for line := range strings.Lines(l.String()) {
			if strings.Contains(line, s) {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", s, l.String())
		}
	}
}

func testLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var (
	addrAttr = regexp.MustCompile(`\baddr=(\S+)`)
	urlAttr  = regexp.MustCompile(`\burl=(\S+)`)
)

func TestRunLogsTheBoundAddressServesAndShutsDown(t *testing.T) {
	var logs logBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	s := settings{Addr: "127.0.0.1:0", DatabasePath: filepath.Join(t.TempDir(), "parley.db")}
	go func() { done <- run(ctx, s, testLogger(&logs)) }()

	line := logs.waitFor(t, "parley example listening")
	addr, url := addrAttr.FindStringSubmatch(line), urlAttr.FindStringSubmatch(line)
	if addr == nil || url == nil || strings.HasSuffix(addr[1], ":0") || url[1] != "http://"+addr[1]+"/" {
		t.Fatalf("listening line %q: want the bound addr=127.0.0.1:PORT and url=http://127.0.0.1:PORT/", line)
	}
	resp, err := http.Get(url[1])
	if err != nil {
		t.Fatalf("GET the logged url: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d", url[1], resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after a stop: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	out := logs.String()
	last := -1
	for _, step := range []string{"parley example listening", "shutting down", "waiting for running turns", "parley example stopped"} {
		i := strings.Index(out, step)
		if i <= last {
			t.Fatalf("log lacks %q after the previous step:\n%s", step, out)
		}
		last = i
	}
	if _, err := net.Dial("tcp", addr[1]); err == nil {
		t.Errorf("%s still accepts connections after run returned", addr[1])
	}
}

// A taken port is a plain error before anything else happens: no
// "listening" line, and the database is not even opened.
func TestRunReturnsABindErrorWithoutListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var logs logBuffer
	db := filepath.Join(t.TempDir(), "parley.db")
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), settings{Addr: ln.Addr().String(), DatabasePath: db}, testLogger(&logs))
	}()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("run on a taken port did not return")
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("run on a taken port: %v, want the bind error naming %s", err, ln.Addr())
	}
	if out := logs.String(); strings.Contains(out, "listening") {
		t.Errorf("logged listening on a taken port:\n%s", out)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database was opened before the bind: %v", err)
	}
}

func TestURLOfAWildcardListenerIsLocalhost(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}:   "http://localhost:8080/",
		&net.TCPAddr{IP: net.IPv4zero, Port: 8080}:          "http://localhost:8080/",
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 123}: "http://127.0.0.1:123/",
		&net.TCPAddr{IP: net.IPv6loopback, Port: 123}:       "http://[::1]:123/",
	} {
		if got := urlOf(addr); got != want {
			t.Errorf("urlOf(%v) = %q, want %q", addr, got, want)
		}
	}
}

// The built binary stops cleanly on SIGTERM and says so.
func TestServerProcessShutsDownOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	_, cmd, logs := startServerLogged(t, bin, filepath.Join(t.TempDir(), "parley.db"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	line := logs.waitFor(t, "shutting down")
	if !strings.Contains(line, "terminated") {
		t.Errorf("shutdown line %q does not name the signal", line)
	}
	logs.waitFor(t, "parley example stopped")
}

func TestSettingsFromEnvReadsThePoolAndTurnBounds(t *testing.T) {
	t.Setenv("PARLEY_DATABASE_MAX_CONNS", "")
	t.Setenv("PARLEY_MAX_TURNS_PER_USER", "")
	s, err := settingsFromEnv()
	if err != nil || s.MaxConns != 0 || s.MaxTurnsPerUser != 0 {
		t.Errorf("unset: %+v %v, want zeros: the defaults", s, err)
	}
	t.Setenv("PARLEY_DATABASE_MAX_CONNS", "3")
	t.Setenv("PARLEY_MAX_TURNS_PER_USER", "-1")
	if s, err := settingsFromEnv(); err != nil || s.MaxConns != 3 || s.MaxTurnsPerUser != -1 {
		t.Errorf("set: max conns %d, turns %d, %v; want 3 and -1", s.MaxConns, s.MaxTurnsPerUser, err)
	}
	for key, bad := range map[string][]string{
		"PARLEY_DATABASE_MAX_CONNS": {"0", "-1", "many", "8 ", "1.5"},
		"PARLEY_MAX_TURNS_PER_USER": {"none", "2.5", "four"},
	} {
		for _, v := range bad {
			t.Run(key+"="+v, func(t *testing.T) {
				t.Setenv(key, v)
				_, err := settingsFromEnv()
				if err == nil || !strings.Contains(err.Error(), key+"=") || !strings.Contains(err.Error(), "want") {
					t.Errorf("%s=%q: %v, want an error naming the variable and what it takes", key, v, err)
				}
			})
		}
	}
}

func TestSettingsFromEnvReadsTheModelSettings(t *testing.T) {
	for _, key := range []string{"PARLEY_LLM_CONTEXT_WINDOW", "PARLEY_OPERATOR_ADDENDUM", "PARLEY_MODEL_FAMILY", "PARLEY_TITLES"} {
		t.Setenv(key, "")
	}
	s, err := settingsFromEnv()
	if err != nil || s.ContextWindow != 0 || s.OperatorAddendum != "" || s.ModelFamily != "" || s.NoTitles {
		t.Errorf("unset: %+v %v, want zeros: the Engine's defaults", s, err)
	}
	t.Setenv("PARLEY_LLM_CONTEXT_WINDOW", "8192")
	t.Setenv("PARLEY_OPERATOR_ADDENDUM", "Answer in French.")
	t.Setenv("PARLEY_MODEL_FAMILY", "anthropic")
	if s, err := settingsFromEnv(); err != nil || s.ContextWindow != 8192 || s.OperatorAddendum != "Answer in French." || s.ModelFamily != "anthropic" {
		t.Errorf("set: window %d, addendum %q, family %q, %v", s.ContextWindow, s.OperatorAddendum, s.ModelFamily, err)
	}
	t.Setenv("PARLEY_MODEL_FAMILY", "generic")
	if s, err := settingsFromEnv(); err != nil || s.ModelFamily != "" {
		t.Errorf("generic: family %q, %v; want \"\"", s.ModelFamily, err)
	}
	t.Setenv("PARLEY_TITLES", "off")
	if s, err := settingsFromEnv(); err != nil || !s.NoTitles {
		t.Errorf("PARLEY_TITLES=off: %+v %v", s, err)
	}
	for key, bad := range map[string][]string{
		"PARLEY_LLM_CONTEXT_WINDOW": {"0", "-4096", "32k", "4096 ", "1.5"},
		"PARLEY_MODEL_FAMILY":       {"Anthropic", "claude", "gpt", " openai"},
		"PARLEY_TITLES":             {"0", "no", "On", "false"},
	} {
		for _, v := range bad {
			t.Run(key+"="+v, func(t *testing.T) {
				t.Setenv(key, v)
				_, err := settingsFromEnv()
				if err == nil || !strings.Contains(err.Error(), key+"=") || !strings.Contains(err.Error(), "want") {
					t.Errorf("%s=%q: %v, want an error naming the variable and what it takes", key, v, err)
				}
			})
		}
	}
}

func TestSettingsFromEnvReadsTheDemoDelay(t *testing.T) {
	t.Setenv("PARLEY_DEMO_DELAY", "")
	if s, err := settingsFromEnv(); err != nil || s.DemoDelay != 25*time.Millisecond {
		t.Errorf("unset: %v %v, want the default 25ms", s.DemoDelay, err)
	}
	t.Setenv("PARLEY_DEMO_DELAY", "0")
	if s, err := settingsFromEnv(); err != nil || s.DemoDelay != 0 {
		t.Errorf("0: %v %v, want no pause", s.DemoDelay, err)
	}
	for _, bad := range []string{"-1s", "soon"} {
		t.Setenv("PARLEY_DEMO_DELAY", bad)
		if _, err := settingsFromEnv(); err == nil || !strings.Contains(err.Error(), "PARLEY_DEMO_DELAY") {
			t.Errorf("%q: err %v, want one naming the variable", bad, err)
		}
	}
}
