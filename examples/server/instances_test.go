package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
)

func demoRequest(t *testing.T, method, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Demo-User", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestTwoServerProcessesShareOnePostgres(t *testing.T) {
	dsn := sqltest.PostgresDSN(t) // skips without PARLEY_TEST_POSTGRES_DSN
	bin := buildServer(t)
	a, _ := startServer(t, bin, "", "PARLEY_DATABASE_URL="+dsn)
	b, _ := startServer(t, bin, "", "PARLEY_DATABASE_URL="+dsn)

	resp := demoRequest(t, "POST", a+"/api/chat/stream", `{"message":"hello there"}`)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	var threadID string
	for lines.Scan() {
		bl, err := blocks.ParseNDJSON(lines.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if bl.Kind == blocks.Meta {
			threadID = bl.Meta.ThreadID
		}
		if bl.Kind == blocks.Markdown {
			break
		}
	}
	start := time.Now()
	if r := demoRequest(t, "POST", b+"/api/chat/threads/"+threadID+"/cancel", ""); r.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel on B: %d", r.StatusCode)
	}
	var last blocks.Block
	for lines.Scan() {
		last, _ = blocks.ParseNDJSON(lines.Bytes())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("A's stream ended %v after the cancel on B, want < 1s", d)
	}
	if last.Kind != blocks.Error || last.ErrorCode != "cancelled" {
		t.Errorf("A's stream ended with %+v, want a cancelled block", last)
	}

	read := func(base string) []byte {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			r := demoRequest(t, "GET", base+"/api/chat/threads/"+threadID, "")
			raw, _ := io.ReadAll(r.Body)
			r.Body.Close()
			var got struct {
				Messages []struct{ Status string } `json:"messages"`
			}
			if json.Unmarshal(raw, &got) == nil && len(got.Messages) == 2 && got.Messages[1].Status == "cancelled" {
				return raw
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread on %s never showed the cancelled reply: %s", base, raw)
			}
		}
	}
	if ra, rb := read(a), read(b); string(ra) != string(rb) {
		t.Errorf("the two instances read the thread differently:\nA %s\nB %s", ra, rb)
	}
}
