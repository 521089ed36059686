package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// moduleRoot returns the directory of the go.mod that holds the working
// directory, where ./examples/server is built from.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run this inside the parley module (no go.mod found)")
	}
	return filepath.Dir(gomod), nil
}

// buildServer builds ./examples/server into dir, with the race detector if
// race, and returns the binary.
func buildServer(ctx context.Context, root, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "server")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./examples/server")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/server: %w\n%s", err, out)
	}
	return bin, nil
}

// serverRevision names the commit the server was built from, and says so
// when the working tree had changes on top of it.
func serverRevision(ctx context.Context, root string) string {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	rev, err := git("log", "-1", "--format=%h %s")
	if err != nil {
		return "unknown (git log failed)"
	}
	if st, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
		rev += " (+ uncommitted changes)"
	}
	return rev
}

// server is the example server running as a child process.
type server struct {
	base    string // http://127.0.0.1:PORT
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	exited  chan struct{} // closed when the process has been waited for
	waitErr error         // set before exited is closed
}

// startServer runs bin on a free 127.0.0.1 port with the PARLEY_* settings
// in env (and none inherited), and waits until it answers HTTP.
func startServer(ctx context.Context, bin, dir string, env []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin) // not CommandContext: stop ends it gracefully
	cmd.Dir = dir
	cmd.Env = append(withoutParleyEnv(os.Environ()), "PARLEY_ADDR="+addr)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start the server: %w", err)
	}
	s := &server{base: "http://" + addr, cmd: cmd, logPath: logPath, logFile: logFile, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("%w\nserver log (%s), last lines:\n%s", err, logPath, s.logTail(20))
	}
	return s, nil
}

// withoutParleyEnv drops the caller's PARLEY_* settings, so that the
// server never talks to a model or database the caller configured.
func withoutParleyEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "PARLEY_") })
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls GET /api/chat/threads until the server answers, for up
// to a minute (migrations on a fresh database take a moment).
func (s *server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: loopbackTransport(1)}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/chat/threads", nil)
		req.Header.Set("X-Demo-User", "alice")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited before it was ready: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("the server was not ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// exitCode is the server's exit status once it has exited, and -1 before
// or when a signal ended it.
func (s *server) exitCode() int {
	select {
	case <-s.exited:
		if s.cmd.ProcessState != nil {
			return s.cmd.ProcessState.ExitCode()
		}
	default:
	}
	return -1
}

// stop ends the server: SIGTERM, which lets it shut down and persist
// running turns, then SIGKILL after 15 seconds. It is safe to call twice.
func (s *server) stop() error {
	defer s.logFile.Close()
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("the server did not stop within 15s of SIGTERM and was killed")
	}
}

// memory is a process's resident set size, now and at its peak, in bytes;
// ok is false where /proc is not available.
type memory struct {
	rss, peak int64
	ok        bool
}

// memory reads VmRSS and VmHWM from /proc/<pid>/status.
func (s *server) memory() memory {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid()))
	if err != nil {
		return memory{}
	}
	var m memory
	for line := range strings.Lines(string(data)) {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.rss
		case "VmHWM":
			dst = &m.peak
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err == nil {
			*dst = kb << 10
			m.ok = true
		}
	}
	return m
}

func (m memory) peakString() string {
	if !m.ok {
		return "n/a"
	}
	return mib(m.peak)
}

func (m memory) rssString() string {
	if !m.ok {
		return "n/a"
	}
	return mib(m.rss)
}

// logTail returns the last n lines of the server's log.
func (s *server) logTail(n int) string {
	data, _ := os.ReadFile(s.logPath)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

var (
	levelRe = regexp.MustCompile(`\blevel=(ERROR|WARN)\b`)
	msgRe   = regexp.MustCompile(`\bmsg=("(?:[^"\\]|\\.)*"|\S+)`)
	errRe   = regexp.MustCompile(`\berr=("(?:[^"\\]|\\.)*"|\S+)`)
)

// raceReport is the line that starts each report of the race detector,
// and raceExit the exit status of a process that printed one (GORACE's
// exitcode, by default).
const (
	raceReport = "WARNING: DATA RACE"
	raceExit   = 66
)

// races is the "data races" row: n reports read, cut if the log was not
// read to its end, and the server's exit with the race detector's status.
func (s *server) races(n int, cut bool) string {
	v := strconv.Itoa(n)
	if cut {
		v = "at least " + v + " (the log was not read to its end)"
	}
	if s.exitCode() == raceExit {
		v += fmt.Sprintf(" (the server exited with status %d, the race detector's)", raceExit)
	}
	return v
}

// reportLog adds the server log's ERROR and WARN lines to t, counted by
// message, with the first error text of the most frequent one, and with
// race (a server built with -race) the race detector's reports. It reads
// the log to its end: call it once the server has stopped.
func (s *server) reportLog(t *table, race bool) {
	f, err := os.Open(s.logPath)
	if err != nil {
		t.row("server log", "unreadable: "+err.Error())
		return
	}
	defer f.Close()
	type entry struct {
		level, msg, firstErr string
		n                    int
	}
	seen := map[string]*entry{}
	races := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if string(line) == raceReport {
			races++
			continue
		}
		m := levelRe.FindSubmatch(line)
		if m == nil {
			continue
		}
		level := string(m[1])
		msg := ""
		if mm := msgRe.FindSubmatch(line); mm != nil {
			msg = strings.Trim(string(mm[1]), `"`)
		}
		key := level + " " + msg
		e := seen[key]
		if e == nil {
			e = &entry{level: level, msg: msg}
			if em := errRe.FindSubmatch(line); em != nil {
				e.firstErr = string(bytes.Trim(em[1], `"`))
			}
			seen[key] = e
		}
		e.n++
	}
	readErr := sc.Err()
	if readErr != nil {
		t.row("server log", "read stopped: "+readErr.Error())
	}
	if race {
		t.row("data races", s.races(races, readErr != nil))
	}
	if len(seen) == 0 {
		t.row("server log", "no ERROR or WARN lines")
		return
	}
	entries := make([]*entry, 0, len(seen))
	for _, e := range seen {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(b.n, a.n), cmp.Compare(a.msg, b.msg))
	})
	for _, e := range entries {
		v := fmt.Sprintf("%d x %q", e.n, e.msg)
		if e.firstErr != "" {
			v += " (first err: " + truncate(e.firstErr, 160) + ")"
		}
		t.row("server log "+e.level, v)
	}
}

// truncate cuts s to at most n bytes, at a rune boundary, marking the cut
// with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
