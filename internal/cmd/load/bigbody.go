package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// runBigBody sends -concurrency requests at once, each with one field of
// -body-bytes, and adds the answers and the server's memory to t.
func runBigBody(ctx context.Context, o options, c *client, srv *server, users []string, t *table) error {
	var path string
	var body []byte
	pad := filler(o.BodyBytes)
	if o.Field == "args" {
		path = "/api/chat/tools/list_notes/execute"
		body, _ = json.Marshal(map[string]any{"args": map[string]string{"query": pad}})
	} else {
		path = "/api/chat/stream"
		body, _ = json.Marshal(streamBody{Message: "Hello, what is on this page?", PageContext: pad})
	}
	before := srv.memory()
	outs := make([]outcome, o.Concurrency)
	// All requests start together, as a burst from many clients would.
	gate := make(chan struct{})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range o.Concurrency {
		wg.Go(func() {
			<-gate
			outs[i] = c.stream(ctx, users[i%len(users)], path, body, false)
		})
	}
	close(gate)
	wg.Wait()
	wall := time.Since(start)
	after := srv.memory()

	answers, errBlocks := counts{}, counts{}
	var total durations
	for i := range outs {
		answers[statusKey(&outs[i])]++
		if outs[i].ErrBlock != "" {
			errBlocks[outs[i].ErrBlock]++
		}
		total = append(total, outs[i].Total)
	}
	t.rowf("request body", "%s each", mib(int64(len(body))))
	t.rowf("requests", "%d in %v", len(outs), round(wall))
	t.row("answers", answers.String())
	if o.Field != "args" {
		t.row("error blocks", errBlocks.String())
	}
	t.row("request duration", total.String())
	t.rowf("server peak RSS before", "%s (RSS %s)", before.peakString(), before.rssString())
	t.rowf("server peak RSS after", "%s (RSS %s)", after.peakString(), after.rssString())
	return ctx.Err()
}

// filler returns n bytes of plain prose, the kind of page text a host
// would send, so the guard sees words rather than one long run of a byte.
func filler(n int) string {
	const words = "The quarterly report lists 42 open items, 7 of them overdue; see section 3.1 for owners and dates. "
	var sb strings.Builder
	sb.Grow(n)
	for sb.Len() < n {
		sb.WriteString(words[:min(len(words), n-sb.Len())])
	}
	return sb.String()
}
