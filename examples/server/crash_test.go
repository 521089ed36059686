package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/blocks"
)

// buildServer returns the example server binary, built once per test
// binary (a link takes seconds, more under load) and removed by TestMain.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the server in processes of its own")
	}
	server.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			server.err = err
			return
		}
		if server.dir, server.err = os.MkdirTemp("", "parley-server-"); server.err != nil {
			return
		}
		bin := filepath.Join(server.dir, serverName)
		if server.err = os.Symlink(self, bin); server.err == nil {
			server.bin = bin
		}
	})
	if server.err != nil {
		t.Fatal(server.err)
	}
	return server.bin
}

// serverName is the name under which this test binary is the example
// server: buildServer links it so, and TestMain runs main when started by
// that name. The tests' server processes are this binary, not one more
// built with go build, and under -race they run under the race detector.
const serverName = "parley-example-server"

// server is the link of buildServer.
var server struct {
	once     sync.Once
	dir, bin string
	err      error
}

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == serverName {
		main()
		return
	}
	code := m.Run()
	if server.dir != "" {
		os.RemoveAll(server.dir)
	}
	os.Exit(code)
}

// startServer runs the example server binary on a free loopback port and
// returns its base URL and process.
func startServer(t *testing.T, bin, db string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	base, cmd, _ := startServerLogged(t, bin, db, env...)
	return base, cmd
}

// startServerLogged is startServer that also returns the server's log. The
// server picks its own port (PARLEY_ADDR=127.0.0.1:0) and the base URL is
// the one its "listening" line names.
func startServerLogged(t *testing.T, bin, db string, env ...string) (string, *exec.Cmd, *logBuffer) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PARLEY_ADDR=127.0.0.1:0", "PARLEY_DATABASE_PATH="+db, "PARLEY_HEARTBEAT=100ms",
		"PARLEY_LLM_BASE_URL=", "PARLEY_LLM_PRESET=", "PARLEY_ANTHROPIC_API_KEY=", "PARLEY_ANTHROPIC_API_KEY_FILE=",
		"PARLEY_ANTHROPIC_BASE_URL=", "PARLEY_DATABASE_URL=")
	cmd.Env = append(cmd.Env, env...)
	logs := &logBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		// Under -race the server process runs under the race detector,
		// whose reports go to its stderr and would be lost there.
		if out := logs.String(); strings.Contains(out, "WARNING: DATA RACE") {
			t.Errorf("the server process reported a data race:\n%s", out)
		}
	})
	url := urlAttr.FindStringSubmatch(logs.waitFor(t, "parley example listening"))
	if url == nil {
		t.Fatalf("the listening line names no url:\n%s", logs.String())
	}
	return strings.TrimSuffix(url[1], "/"), cmd, logs
}

func TestKilledServerLeavesAnInterruptedReplyWithItsPartialText(t *testing.T) {
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "parley.db")
	base, cmd := startServer(t, bin, db)

	// The demo model streams its small talk word by word for about 2s.
	req, _ := http.NewRequest("POST", base+"/api/chat/stream", strings.NewReader(`{"message":"hello there"}`))
	req.Header.Set("X-Demo-User", "alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(resp.Body)
	var threadID string
	words := 0
	for lines.Scan() && words < 2 {
		b, err := blocks.ParseNDJSON(lines.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if b.Kind == blocks.Meta && threadID == "" {
			threadID = b.Meta.ThreadID
		}
		if b.Kind == blocks.Markdown {
			words++
		}
	}
	time.Sleep(250 * time.Millisecond) // at least one heartbeat with text
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	resp.Body.Close()
	time.Sleep(400 * time.Millisecond) // older than three heartbeats

	base, _ = startServer(t, bin, db)
	var got struct {
		Messages []struct {
			Role   string         `json:"role"`
			Status string         `json:"status"`
			Blocks []blocks.Block `json:"blocks"`
		} `json:"messages"`
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, _ := http.NewRequest("GET", base+"/api/chat/threads/"+threadID, nil)
		r.Header.Set("X-Demo-User", "alice")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err == nil && len(got.Messages) == 2 && got.Messages[1].Status != "streaming" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the reply is still %+v", got.Messages)
		}
	}
	reply := got.Messages[1]
	if reply.Status != "interrupted" || len(reply.Blocks) == 0 || !strings.HasPrefix(reply.Blocks[0].Content, "Hello!") {
		t.Errorf("reply after the crash: %s %+v, want interrupted with the partial answer", reply.Status, reply.Blocks)
	}
}

// A PARLEY_LOG_LEVEL that does not parse stops the server at once with a
// message naming the variable.
func TestBadLogLevelStopsTheServer(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PARLEY_ADDR=127.0.0.1:0", "PARLEY_DATABASE_PATH=", "PARLEY_LOG_LEVEL=loud")
	out, err := cmd.CombinedOutput()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit status 2", err)
	}
	if !strings.Contains(string(out), "PARLEY_LOG_LEVEL") {
		t.Errorf("output %q does not name the variable", out)
	}
}
