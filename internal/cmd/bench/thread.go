package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// runThread measures what a long thread sends the model, with compaction at
// the given context window and without it (an unbounded window), on real
// prose: each user message is a prompt from a benign corpus, each turn calls
// a Read tool whose result is about 6 KB of corpus text, and the answer
// quotes another prompt. It prints the prompt's input tokens at a few turns,
// the largest prompt, and what the summary calls cost.
func runThread(turns, window int, corpus string) error {
	texts, err := readCorpus(corpus)
	if err != nil {
		return err
	}
	fmt.Printf("%d-turn thread, %d corpus texts; tokens estimated at 4 bytes each, as the Engine does\n\n", turns, len(texts))
	fmt.Println("| window | turn 1 | turn 12 | turn 30 | turn 60 | largest prompt | over the window | summary calls | summary tokens | all tokens |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range []int{1 << 30, window} {
		r, err := threadRun(turns, w, texts)
		if err != nil {
			return err
		}
		label := fmt.Sprint(w)
		if w == 1<<30 {
			label = "none (no compaction)"
		}
		at := func(i int) string {
			if i > len(r.inputs) {
				return "-"
			}
			return fmt.Sprint(r.inputs[i-1])
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %d | %d | %d | %d | %d |\n", label, at(1), at(12), at(30), at(60),
			r.largest, r.over, r.summaries, r.summaryTokens, r.total)
	}
	return nil
}

type threadResult struct {
	inputs                   []int // first call of each turn: input tokens
	largest, over, summaries int
	summaryTokens, total     int
}

func threadRun(turns, window int, texts []string) (threadResult, error) {
	var res threadResult
	var mu sync.Mutex
	next := 0
	text := func() string { next++; return texts[next%len(texts)] }
	search := tools.Must(tools.New(tools.Spec{Name: "search_docs", Description: "Searches the documentation."},
		func(_ context.Context, _ tools.Call, in struct {
			Query string `json:"query"`
		}) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			var hits []map[string]string
			for n := 0; n < 6<<10; {
				t := text()
				hits = append(hits, map[string]string{"title": strings.Join(strings.Fields(t)[:min(5, len(strings.Fields(t)))], " "), "body": t})
				n += len(t) + 40
			}
			return tools.OK(fmt.Sprintf("%d documents", len(hits)), map[string]any{"hits": hits}), nil
		}))
	set, err := tools.NewSet(search)
	if err != nil {
		return res, err
	}
	calls := 0
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		mu.Lock()
		defer mu.Unlock()
		in := estimate(req)
		res.largest = max(res.largest, in)
		if in > window {
			res.over++
		}
		if req.System == assistant.SummaryInstructions {
			res.summaries++
			out := text()
			res.summaryTokens += in + len(out)/4
			res.total += in + len(out)/4
			return fake.Turn{fake.Text(out), fake.Usage(int64(in), int64(len(out)/4))}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == providers.User {
			res.inputs = append(res.inputs, in)
			calls++
			res.total += in + 20
			return fake.Turn{fake.CallTool(fmt.Sprint("call_", calls), "search_docs", `{"query":"docs"}`), fake.Usage(int64(in), 20)}
		}
		out := text()
		res.total += in + len(out)/4
		return fake.Turn{fake.Text(out), fake.Usage(int64(in), int64(len(out)/4))}
	})})
	eng, err := assistant.New(assistant.Config{
		Provider: model, Store: memstore.New(), Tools: set, ContextWindow: window, DisableGuard: true,
		KnowledgeMaxAge: -1, MaxMessageBytes: 1 << 20,
		Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
	})
	if err != nil {
		return res, err
	}
	u := parley.User{ID: "bench"}
	threadID := ""
	for range turns {
		mu.Lock()
		msg := text()
		mu.Unlock()
		reply, err := assistant.Collect(eng.Stream(context.Background(), u, assistant.Request{ThreadID: threadID, Message: msg}))
		if err != nil {
			return res, err
		}
		threadID = reply.ThreadID
	}
	return res, nil
}

// estimate is a request's size in tokens at four bytes each.
func estimate(req *providers.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
	}
	for _, d := range req.Tools {
		n += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	return n / 4
}

// readCorpus reads the "text" of each line of a JSONL corpus.
func readCorpus(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the long-thread run needs a corpus of real prose (-corpus): %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &row) == nil && strings.TrimSpace(row.Text) != "" && len(row.Text) <= 4<<10 {
			out = append(out, row.Text)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the corpus has no texts")
	}
	return out, sc.Err()
}
