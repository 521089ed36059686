package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// endlessModel is an OpenAI-compatible chat-completions endpoint on
// 127.0.0.1 whose answer does not end on its own: content deltas as
// chat.completion.chunk events, no usage, until the client hangs up or a
// bound of the load run is reached, when it finishes with "stop".
type endlessModel struct {
	maxFor   time.Duration
	maxBytes int64
	srv      *http.Server
	addr     string
	done     chan struct{} // one token per finished stream

	mu       sync.Mutex
	requests int
	sent     int64         // content bytes of the last stream
	took     time.Duration // duration of the last stream
	ended    string        // how the last stream ended
}

func startEndlessModel(maxFor time.Duration, maxBytes int64) (*endlessModel, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &endlessModel{maxFor: maxFor, maxBytes: maxBytes, addr: l.Addr().String(), done: make(chan struct{}, 16)}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(l) }()
	return m, nil
}

func (m *endlessModel) baseURL() string { return "http://" + m.addr + "/v1" }

func (m *endlessModel) close() { _ = m.srv.Close() }

// endlessChunk renders one SSE event of a chat.completion.chunk.
func endlessChunk(delta any, finish *string) []byte {
	c := map[string]any{
		"id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "load-endless", "system_fingerprint": "fp_load",
		"choices": []map[string]any{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	}
	data, _ := json.Marshal(c)
	return fmt.Appendf(nil, "data: %s\n\n", data)
}

func (m *endlessModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 8<<20))
	m.mu.Lock()
	m.requests++
	m.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	const sentence = "All work and no play makes Jack a dull boy. "
	plain := endlessChunk(map[string]string{"content": sentence}, nil)
	para := endlessChunk(map[string]string{"content": sentence + "\n\n"}, nil)

	start := time.Now()
	var sent int64
	ended := "the server hung up"
	write := func(b []byte) bool {
		_, err := w.Write(b)
		return err == nil
	}
	ok := write(endlessChunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i := 1; ok; i++ {
		chunk, n := plain, len(sentence)
		if i%20 == 0 {
			chunk, n = para, len(sentence)+2
		}
		if ok = write(chunk); !ok {
			break
		}
		sent += int64(n)
		if i%64 != 0 {
			continue
		}
		if err := rc.Flush(); err != nil {
			break
		}
		if sent >= m.maxBytes || time.Since(start) >= m.maxFor {
			ended = fmt.Sprintf("the model stopped at its bound (%v or %s)", m.maxFor, mib(m.maxBytes))
			stop := "stop"
			if write(endlessChunk(map[string]any{}, &stop)) && write([]byte("data: [DONE]\n\n")) {
				_ = rc.Flush()
			}
			break
		}
	}
	m.mu.Lock()
	m.sent, m.took, m.ended = sent, time.Since(start), ended
	m.mu.Unlock()
	select {
	case m.done <- struct{}{}:
	default:
	}
}

// runEndless sends one message to the server backed by the endless model
// and adds what streamed, what was stored and the server's memory to t.
func runEndless(ctx context.Context, o options, srv *server, model *endlessModel, user string, t *table) error {
	// The model streams for up to -endless-for; the request may take that
	// long plus the usual bound.
	c := newClient(srv.base, o.EndlessFor+o.RequestTimeout, 2)
	before := srv.memory()
	body, _ := json.Marshal(streamBody{Message: "Tell me everything you know."})
	out := c.stream(ctx, user, "/api/chat/stream", body, false)
	after := srv.memory()
	// The model's handler records its figures when it returns, which may
	// be a moment after the server hung up on it.
	select {
	case <-model.done:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
	}

	model.mu.Lock()
	requests, sent, took, ended := model.requests, model.sent, model.took, model.ended
	model.mu.Unlock()
	t.rowf("model", "%d request(s); the last streamed %s of content in %v; %s", requests, mib(sent), round(took), ended)
	t.rowf("client answer", "%s", statusKey(&out))
	t.rowf("client received", "%s of NDJSON in %v (first byte %v)", mib(out.Bytes), round(out.Total), round(out.TTFB))
	finish := out.Finish
	switch {
	case out.ErrBlock != "":
		finish = "error block " + out.ErrBlock
	case finish == "":
		finish = "none (no final meta block)"
	}
	t.row("finish", finish)
	t.rowf("server peak RSS", "%s before, %s after (RSS %s)", before.peakString(), after.peakString(), after.rssString())
	if out.Transport != "" {
		t.row("client transport error", out.Transport)
	}
	if out.Meta.ThreadID == "" {
		t.row("stored reply", "n/a (no thread id streamed)")
		return ctx.Err()
	}
	start := time.Now()
	th, err := c.thread(ctx, user, out.Meta.ThreadID)
	if err != nil {
		t.row("stored reply", "unreadable: "+truncate(err.Error(), 200))
		return ctx.Err()
	}
	m := findID(th, out.Meta.MessageID)
	if m == nil {
		t.row("stored reply", "missing")
		return ctx.Err()
	}
	t.rowf("stored reply", "status %s, %s of text in %d block(s)", m.Status, mib(int64(len(replyText(m.Blocks)))), len(m.Blocks))
	t.rowf("GET thread", "%s in %v", mib(th.Bytes), round(time.Since(start)))
	return ctx.Err()
}
