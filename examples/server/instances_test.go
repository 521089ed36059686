package main

import (
	"bufio"
	"context"
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
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestTwoServerProcessesShareOnePostgres(t *testing.T) {
	t.Parallel()
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

func TestTwoServerProcessesKeepOneUsersQuotaExact(t *testing.T) {
	t.Parallel()
	dsn := sqltest.PostgresDSN(t)
	bin := buildServer(t)
	const limit = 20_000
	// Titles off: their tokens are charged but reported on no stream.
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_QUOTA_DAILY=20000", "PARLEY_TITLES=off"}
	a, _ := startServer(t, bin, "", env...)
	b, _ := startServer(t, bin, "", env...)
	type outcome struct {
		status int
		tokens int64
	}
	results := make(chan outcome, 64)
	for i := range 64 {
		base := a
		if i%2 == 1 {
			base = b
		}
		go func() {
			resp := demoRequest(t, "POST", base+"/api/chat/stream", `{"message":"what time is it"}`)
			defer resp.Body.Close()
			o := outcome{status: resp.StatusCode}
			lines := bufio.NewScanner(resp.Body)
			for lines.Scan() {
				if bl, err := blocks.ParseNDJSON(lines.Bytes()); err == nil && bl.Kind == blocks.Meta && bl.Meta.Finish != "" {
					o.tokens = bl.Meta.InputTokens + bl.Meta.OutputTokens
				}
			}
			results <- o
		}()
	}
	var admitted, refused int
	var spent int64
	for range 64 {
		o := <-results
		switch o.status {
		case http.StatusOK:
			admitted++
			spent += o.tokens
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Errorf("unexpected status %d", o.status)
		}
	}
	resp := demoRequest(t, "GET", a+"/api/chat/quota", "")
	defer resp.Body.Close()
	var u struct {
		Daily struct{ Used, Held, Limit int64 } `json:"daily"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != spent || u.Daily.Used > limit || u.Daily.Held != 0 || admitted == 0 || refused == 0 {
		t.Errorf("admitted %d, refused %d, tokens reported %d; ledger used %d held %d: want them equal, within %d, nothing held",
			admitted, refused, spent, u.Daily.Used, u.Daily.Held, limit)
	}
}

// A's demo model waits an hour before its first word, so A's turn is
// still running, deterministically, when B's message arrives: only the
// supersession can end it (the request's own deadline fails the test).
func TestANewerMessageOnOneServerProcessSupersedesTheOther(t *testing.T) {
	t.Parallel()
	dsn := sqltest.PostgresDSN(t)
	bin := buildServer(t)
	a, _ := startServer(t, bin, "", "PARLEY_DATABASE_URL="+dsn, "PARLEY_DEMO_DELAY=1h")
	b, _ := startServer(t, bin, "", "PARLEY_DATABASE_URL="+dsn)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", a+"/api/chat/stream", strings.NewReader(`{"message":"hello there"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Demo-User", "alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	var threadID string
	// The meta block comes once the user message and A's streaming
	// placeholder are stored.
	for threadID == "" && lines.Scan() {
		if bl, _ := blocks.ParseNDJSON(lines.Bytes()); bl.Kind == blocks.Meta {
			threadID = bl.Meta.ThreadID
		}
	}
	if threadID == "" {
		t.Fatalf("A's stream ended without a meta block: %v", lines.Err())
	}
	newer := demoRequest(t, "POST", b+"/api/chat/stream", `{"thread_id":"`+threadID+`","message":"what time is it"}`)
	io.Copy(io.Discard, newer.Body)
	newer.Body.Close()
	var last blocks.Block
	for lines.Scan() {
		last, _ = blocks.ParseNDJSON(lines.Bytes())
	}
	if last.Kind != blocks.Error || last.ErrorCode != "cancelled" || !strings.Contains(last.Content, "newer message") {
		t.Errorf("A's turn ended with %+v (read error %v), want it superseded by the message sent to B", last, lines.Err())
	}
}
