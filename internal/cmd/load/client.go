package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/parleyhq/parley/blocks"
)

// loopbackTransport is an HTTP transport that dials 127.0.0.1 only, so no
// request of a load run can reach another machine, whatever URL it names.
func loopbackTransport(conns int) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil || host != "127.0.0.1" {
				return nil, fmt.Errorf("load: refusing to dial %s: only 127.0.0.1", addr)
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
}

// client speaks the chat API as the demo users.
type client struct {
	base string
	http *http.Client
}

func newClient(base string, timeout time.Duration, conns int) *client {
	return &client{base: base, http: &http.Client{Timeout: timeout, Transport: loopbackTransport(conns)}}
}

func (c *client) do(ctx context.Context, method, path, user string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Demo-User", user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.http.Do(req)
}

// knownUsers returns the users the server accepts, and those it answers
// 401 for. An unknown user is a note, not a failure; none known is.
func (c *client) knownUsers(ctx context.Context, users []string) (known, skipped []string, err error) {
	for _, u := range users {
		resp, err := c.do(ctx, http.MethodGet, "/api/chat/threads", u, nil)
		if err != nil {
			return nil, nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			known = append(known, u)
		case http.StatusUnauthorized:
			skipped = append(skipped, u)
		default:
			return nil, nil, fmt.Errorf("GET /api/chat/threads as %s: HTTP %d", u, resp.StatusCode)
		}
	}
	if len(known) == 0 {
		return nil, nil, fmt.Errorf("the server knows none of the users %v", users)
	}
	return known, skipped, nil
}

// outcome is what one POST /api/chat/stream came to, as the client saw it.
type outcome struct {
	Status    int    // HTTP status; 0 when the request failed in transport
	ErrCode   string // the code of a non-200 answer's JSON error
	Transport string // a transport failure, in short; "" when none
	TTFB      time.Duration
	TTFT      time.Duration // to the first markdown, code or mermaid block; 0 if none
	Total     time.Duration
	Meta      blocks.MetaInfo // the first meta block: thread, reply and user message ids
	Finish    string          // the final meta block's finish; "" if none came
	ErrBlock  string          // the error block's code; "" if none came
	Text      string          // the reply's text, if asked to keep it
	Bytes     int64           // NDJSON bytes received
	BadLines  int             // lines that were not blocks
}

// ended reports whether the stream reached its end: a final meta block or
// an error block.
func (o *outcome) ended() bool { return o.Finish != "" || o.ErrBlock != "" }

// stream posts body to path, reads the whole answer, and returns what the
// client saw. keepText keeps the reply's text (not for endless replies).
func (c *client) stream(ctx context.Context, user, path string, body []byte, keepText bool) (o outcome) {
	start := time.Now()
	defer func() { o.Total = time.Since(start) }()
	resp, err := c.do(ctx, http.MethodPost, path, user, body)
	if err != nil {
		o.Transport = transportError(err)
		return o
	}
	defer resp.Body.Close()
	o.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		o.Bytes = int64(len(data))
		if err != nil {
			o.Transport = transportError(err)
		}
		if json.Unmarshal(data, &e) == nil {
			o.ErrCode = e.Error.Code
		}
		return o
	}
	var text strings.Builder
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if first {
				o.TTFB, first = time.Since(start), false
			}
			o.Bytes += int64(len(line))
			o.absorb(line, &text, keepText, start)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			o.Transport = transportError(err)
			break
		}
	}
	o.Text = text.String()
	return o
}

// absorb records one NDJSON line in o.
func (o *outcome) absorb(line []byte, text *strings.Builder, keepText bool, start time.Time) {
	b, err := blocks.ParseNDJSON(line)
	if err != nil {
		o.BadLines++
		return
	}
	switch b.Kind {
	case blocks.Meta:
		switch {
		case b.Meta == nil:
		case o.Meta.ThreadID == "":
			o.Meta = *b.Meta
		case b.Meta.Finish != "":
			o.Finish = b.Meta.Finish
		}
	case blocks.Error:
		o.ErrBlock = b.ErrorCode
		if o.ErrBlock == "" {
			o.ErrBlock = "(no code)"
		}
	case blocks.Markdown, blocks.Code, blocks.Mermaid:
		if o.TTFT == 0 {
			o.TTFT = time.Since(start)
		}
		if keepText {
			text.WriteString(b.Content)
		}
	}
}

// replyText is the text of a reply: the content of its markdown, code and
// mermaid blocks, in order. It is the same for a stream and for the
// transcript stored from it (blocks.Absorb only merges markdown).
func replyText(bs []blocks.Block) string {
	var sb strings.Builder
	for _, b := range bs {
		switch b.Kind {
		case blocks.Markdown, blocks.Code, blocks.Mermaid:
			sb.WriteString(b.Content)
		}
	}
	return sb.String()
}

// transportError names a transport failure in a few words, for counting.
func transportError(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return truncate(err.Error(), 80)
}

// storedMessage is a message as GET /api/chat/threads/{id} shows it.
type storedMessage struct {
	ID      string         `json:"id"`
	Role    string         `json:"role"`
	Status  string         `json:"status"`
	Content string         `json:"content"`
	Blocks  []blocks.Block `json:"blocks"`
}

// storedThread is what GET /api/chat/threads/{id} answers, with how many
// bytes the answer took.
type storedThread struct {
	Messages []storedMessage `json:"messages"`
	Bytes    int64           `json:"-"`
}

// thread reads a thread back, retrying a failed read twice.
func (c *client) thread(ctx context.Context, user, id string) (storedThread, error) {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return storedThread{}, ctx.Err()
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			}
		}
		var t storedThread
		if t, err = c.threadOnce(ctx, user, id); err == nil {
			return t, nil
		}
	}
	return storedThread{}, err
}

func (c *client) threadOnce(ctx context.Context, user, id string) (storedThread, error) {
	var t storedThread
	resp, err := c.do(ctx, http.MethodGet, "/api/chat/threads/"+url.PathEscape(id), user, nil)
	if err != nil {
		return t, err
	}
	defer resp.Body.Close()
	cr := &countingReader{r: resp.Body}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(cr, 4<<10))
		return t, fmt.Errorf("GET thread %s: HTTP %d: %s", id, resp.StatusCode, bytes.TrimSpace(data))
	}
	if err := json.NewDecoder(cr).Decode(&t); err != nil {
		return t, fmt.Errorf("GET thread %s: %w", id, err)
	}
	_, _ = io.Copy(io.Discard, cr)
	t.Bytes = cr.n
	return t, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
