package assistant_test

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// One huge delta is cut at the token cap as well as the byte cap: the turn
// keeps, and is charged for, no more than MaxTurnOutputTokens (issue 25.4:
// a 20 MB delta kept 256 KiB and charged 65,536 tokens, four times the cap).
func TestOneHugeDeltaIsCutAtTheTokenCap(t *testing.T) {
	const tokens = 1000
	h := newHarness(t, fake.New(fake.Turn{fake.Text(strings.Repeat("word ", 4<<20))}), func(c *assistant.Config) {
		c.MaxTurnOutputTokens = tokens
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "write"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Finish != assistant.FinishLength {
		t.Errorf("finish %q, want length", reply.Finish)
	}
	if len(reply.Text) > 4*tokens+3 {
		t.Errorf("kept %d bytes under a %d-token cap", len(reply.Text), tokens)
	}
	if reply.Usage.OutputTokens > tokens+1 {
		t.Errorf("charged %d output tokens under a %d-token cap", reply.Usage.OutputTokens, tokens)
	}
}

// A summary whose model ignores its token limit is cut at that limit
// locally, and it never takes from the answer's allowance: the answer after
// it is not cut (issue 25.4: 11 of 12 answers were cut on a long thread).
func TestSummaryThatRunsOnIsCutAndSparesTheAnswer(t *testing.T) {
	var summaries []int
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if isSummaryCall(req) {
			summaries = append(summaries, req.MaxTokens)
			return fake.Turn{fake.Text(strings.Repeat("summary ", 64<<10))} // 512 KiB, no usage reported
		}
		return fake.Turn{fake.Text("Noted. " + strings.Repeat("filler ", 40)), fake.Usage(int64(requestTokens(*req)), 60)}
	})})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.ContextWindow = 2048
		c.MaxTurnOutputTokens = 200 // under the summary's own limit (256 at this window)
	})
	var threadID string
	for i := range 20 {
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: strings.Repeat("words ", 150)})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
		if reply.Finish != assistant.FinishStop {
			t.Errorf("turn %d: finish %q after %d summaries, want the answer whole", i, reply.Finish, len(summaries))
		}
		if len(summaries) > 0 && summaries[0] <= 0 {
			t.Fatalf("the summary call has no token limit (%d)", summaries[0])
		}
		if len(summaries) > 0 && reply.Usage.OutputTokens > int64(summaries[0])+60+2 {
			t.Errorf("turn %d: %d output tokens, more than the summary's limit %d and the answer", i, reply.Usage.OutputTokens, summaries[0])
		}
	}
	if len(summaries) == 0 {
		t.Fatal("no summary was asked for")
	}
}

// stallingModel says one sentence, then nothing, until its context ends.
type stallingModel struct{}

func (stallingModel) Stream(ctx context.Context, _ *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		if !yield(providers.Event{Kind: providers.TextDelta, Text: "Let me think. "}, nil) {
			return
		}
		<-ctx.Done()
		yield(providers.Event{}, ctx.Err())
	}
}

// A model that goes silent is ended after ModelIdleTimeout with a
// model_timeout error; what it said is kept (issue 25.4: a stalled model held
// the user for TurnTimeout, 300 s).
func TestASilentModelIsEndedAfterTheIdleTimeout(t *testing.T) {
	h := newHarness(t, stallingModel{}, func(c *assistant.Config) {
		c.ModelIdleTimeout = 100 * time.Millisecond
		c.TurnTimeout = time.Hour
	})
	reply, bs, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if assistant.Code(err) != assistant.CodeModelTimeout {
		t.Fatalf("err %v, want %s", err, assistant.CodeModelTimeout)
	}
	if e := find(bs, blocks.Error); len(e) != 1 || e[0].ErrorCode != string(assistant.CodeModelTimeout) {
		t.Errorf("error blocks %+v", e)
	}
	m := h.waitStatus(t, reply.MessageID)
	if m.Status != store.StatusFailed || !strings.Contains(shown(m.Blocks), "Let me think.") {
		t.Errorf("stored %s %q, want failed with what was said", m.Status, shown(m.Blocks))
	}
}
