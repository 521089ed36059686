package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// sentTurn is one message a worker sent and what came back.
type sentTurn struct {
	user    string
	message string
	out     outcome
}

// streamBody is the JSON of POST /api/chat/stream, written here rather than
// taken from httpapi so that the command tests the wire, not the Go types.
type streamBody struct {
	ThreadID    string `json:"thread_id,omitempty"`
	Message     string `json:"message,omitempty"`
	PageContext string `json:"page_context,omitempty"`
}

// runTurns runs the turns scenario and adds its figures to t.
func runTurns(ctx context.Context, o options, c *client, srv *server, users []string, t *table) error {
	runID := randomHex(3)
	sent := make([][]sentTurn, o.Concurrency)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range o.Concurrency {
		wg.Go(func() {
			user := users[w%len(users)]
			thread := ""
			for r := range o.Rounds {
				if ctx.Err() != nil {
					return
				}
				// Plain small talk: the demo model answers with prose and a
				// code block echoing the message, and calls no tool.
				msg := fmt.Sprintf("Hello from load run %s, worker %d, round %d.", runID, w+1, r+1)
				body, _ := json.Marshal(streamBody{ThreadID: thread, Message: msg})
				out := c.stream(ctx, user, "/api/chat/stream", body, true)
				if out.Meta.ThreadID != "" {
					thread = out.Meta.ThreadID
				}
				sent[w] = append(sent[w], sentTurn{user: user, message: msg, out: out})
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	mem := srv.memory()

	var (
		requests           int
		answers, errBlocks = counts{}, counts{}
		ttfb, ttft, total  durations
		cut, badLines      int
		threads            = map[string]string{} // id → owner
		streamedBytes      int64
	)
	for _, ts := range sent {
		for i := range ts {
			out := &ts[i].out
			requests++
			answers[statusKey(out)]++
			streamedBytes += out.Bytes
			badLines += out.BadLines
			if out.Status != 200 {
				continue
			}
			ttfb = append(ttfb, out.TTFB)
			if out.TTFT > 0 {
				ttft = append(ttft, out.TTFT)
			}
			total = append(total, out.Total)
			if out.ErrBlock != "" {
				errBlocks[out.ErrBlock]++
			}
			if !out.ended() {
				cut++
			}
			if out.Meta.ThreadID != "" {
				threads[out.Meta.ThreadID] = ts[i].user
			}
		}
	}
	t.rowf("requests", "%d in %v (%.1f/s)", requests, round(wall), float64(requests)/wall.Seconds())
	t.row("answers", answers.String())
	if refused := answers["429 too_many_turns"]; refused > 0 && o.PerUserCap == "" {
		t.rowf("note", "%d turns refused as too_many_turns although the server ran with PARLEY_MAX_TURNS_PER_USER=-1: it does not read that setting, so its default cap applied", refused)
	}
	t.row("error blocks", errBlocks.String())
	t.rowf("streams cut", "%d (200 but no final meta or error block)", cut)
	if badLines > 0 {
		t.rowf("bad NDJSON lines", "%d", badLines)
	}
	t.row("time to first byte", ttfb.String())
	t.row("time to first text", ttft.String())
	t.row("turn duration", total.String())
	t.rowf("bytes streamed", "%s", mib(streamedBytes))
	t.rowf("server peak RSS", "%s (RSS at end %s)", mem.peakString(), mem.rssString())
	if ctx.Err() != nil {
		return ctx.Err()
	}

	v := verifyTurns(ctx, c, sent, threads)
	v.report(t)
	return ctx.Err()
}

// verification is what reading the threads back found.
type verification struct {
	threads, unreadable     int
	firstUnreadable         string
	userChecked, lostUser   int
	alteredUser             int
	replyChecked, lostReply int
	streaming               int
	wrongText               int
	wrongStatusSeen         counts // "complete→failed"
	unseen                  counts // stored replies no client saw, by status
	refusedButStored        int    // user messages stored for a request answered with an HTTP error
	example                 string // one mismatch, for the report
	readTime                time.Duration
}

// verifyTurns reads every thread back and checks each answered turn
// against what its client saw.
func verifyTurns(ctx context.Context, c *client, sent [][]sentTurn, threads map[string]string) *verification {
	v := &verification{threads: len(threads), wrongStatusSeen: counts{}, unseen: counts{}}
	start := time.Now()
	stored := make(map[string]storedThread, len(threads))
	var mu sync.Mutex
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for id, owner := range threads {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st, err := c.thread(ctx, owner, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				v.unreadable++
				if v.firstUnreadable == "" {
					v.firstUnreadable = err.Error()
				}
				return
			}
			stored[id] = st
		})
	}
	wg.Wait()
	v.readTime = time.Since(start)

	seenReplies := map[string]bool{}
	for _, ts := range sent {
		// A worker's thread is the one its last answered turn named; a
		// refused first round leaves the next to start one.
		thread := ""
		for i := range ts {
			st := &ts[i]
			out := &st.out
			if out.Meta.ThreadID != "" {
				thread = out.Meta.ThreadID
			}
			th, ok := stored[thread]
			if !ok {
				continue // unreadable, or no thread yet
			}
			if out.Status != 200 {
				if out.Status != 0 && findUser(th, "", st.message) != nil {
					v.refusedButStored++
				}
				continue
			}
			v.userChecked++
			switch m := findUser(th, out.Meta.UserMessageID, st.message); {
			case m == nil:
				v.lostUser++
				v.note("user message %q not stored", st.message)
			case m.Content != st.message:
				v.alteredUser++
				v.note("user message stored as %q, sent %q", truncate(m.Content, 60), st.message)
			}
			if !out.ended() || out.Meta.MessageID == "" {
				continue // cut: the client cannot say what the reply should be
			}
			v.replyChecked++
			seenReplies[out.Meta.MessageID] = true
			want := "complete"
			switch out.ErrBlock {
			case "":
			case "cancelled":
				want = "cancelled"
			default:
				want = "failed"
			}
			m := findID(th, out.Meta.MessageID)
			switch {
			case m == nil:
				v.lostReply++
				v.note("reply %s not stored (the client saw %d bytes of text)", out.Meta.MessageID, len(out.Text))
			case m.Status == "streaming":
				v.streaming++
				v.note("reply %s still streaming after the client saw it end", m.ID)
			case m.Status != want:
				v.wrongStatusSeen[want+"→"+m.Status]++
			case replyText(m.Blocks) != out.Text:
				v.wrongText++
				v.note("reply %s stored %d bytes of text, the client saw %d", m.ID, len(replyText(m.Blocks)), len(out.Text))
			}
		}
	}
	for _, th := range stored {
		for _, m := range th.Messages {
			if m.Role == "assistant" && !seenReplies[m.ID] {
				v.unseen[m.Status]++
			}
		}
	}
	return v
}

func (v *verification) note(format string, args ...any) {
	if v.example == "" {
		v.example = fmt.Sprintf(format, args...)
	}
}

func findID(th storedThread, id string) *storedMessage {
	for i := range th.Messages {
		if th.Messages[i].ID == id {
			return &th.Messages[i]
		}
	}
	return nil
}

// findUser finds a user message by id, or by its text when the id is not known.
func findUser(th storedThread, id, text string) *storedMessage {
	if id != "" {
		return findID(th, id)
	}
	for i := range th.Messages {
		if m := &th.Messages[i]; m.Role == "user" && m.Content == text {
			return m
		}
	}
	return nil
}

func (v *verification) report(t *table) {
	t.rowf("threads read back", "%d in %v (%d unreadable)", v.threads, round(v.readTime), v.unreadable)
	if v.firstUnreadable != "" {
		t.row("first unreadable", truncate(v.firstUnreadable, 200))
	}
	t.rowf("lost user messages", "%d of %d answered with a stream", v.lostUser, v.userChecked)
	if v.alteredUser > 0 {
		t.rowf("altered user messages", "%d", v.alteredUser)
	}
	t.rowf("lost replies", "%d of %d streams that ended", v.lostReply, v.replyChecked)
	t.rowf("replies still streaming", "%d", v.streaming)
	t.rowf("replies wrong status", "%s", v.wrongStatusSeen)
	t.rowf("replies wrong text", "%d", v.wrongText)
	t.rowf("stored replies no client saw", "%s", v.unseen)
	if v.refusedButStored > 0 {
		t.rowf("refused but stored", "%d user messages stored for a request answered with an HTTP error", v.refusedButStored)
	}
	if v.example != "" {
		t.row("first mismatch", v.example)
	}
}
