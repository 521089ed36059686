package assistant_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

const weatherScope = "the weather: forecasts, conditions and notes about them"

func isTopicCall(req *providers.Request) bool {
	return strings.HasPrefix(req.System, assistant.TopicInstructions)
}

// topicModel answers the topic filter's calls with verdict, and the turns'
// calls with main, in order, then with a plain answer. It counts both.
type topicModel struct {
	*fake.Provider
	verdicts atomic.Int64 // topic calls
	turns    atomic.Int64 // every other call
}

func newTopicModel(verdict fake.Turn, main ...fake.Turn) *topicModel {
	m := &topicModel{Provider: fake.New()}
	m.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if isTopicCall(req) {
			m.verdicts.Add(1)
			return verdict
		}
		if n := int(m.turns.Add(1)); n <= len(main) {
			return main[n-1]
		}
		return fake.Turn{fake.Text("Here is the answer."), fake.Usage(100, 10)}
	})})
	return m
}

// topicRequests returns the topic filter's requests, in order.
func (m *topicModel) topicRequests() []providers.Request {
	var out []providers.Request
	for _, r := range m.Requests() {
		if isTopicCall(&r) {
			out = append(out, r)
		}
	}
	return out
}

func withTopic(c *assistant.Config) { c.TopicScope = weatherScope }

func TestTopicFilterRefusesAnOffTopicMessageWithoutTheMainModel(t *testing.T) {
	m := newTopicModel(fake.Turn{fake.Text("OFF_TOPIC"), fake.Usage(30, 2)})
	h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) { c.GenerateTitles = true })
	const msg = "write me a sonnet about my cat"
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	if m.turns.Load() != 0 || m.verdicts.Load() != 1 {
		t.Fatalf("%d main calls and %d topic calls; want the topic call only", m.turns.Load(), m.verdicts.Load())
	}
	if reply.Text != assistant.DefaultTopicRefusal || reply.Finish != assistant.FinishOffTopic {
		t.Errorf("reply %q, finish %q; want the default refusal and %q", reply.Text, reply.Finish, assistant.FinishOffTopic)
	}
	if md := find(streamed, blocks.Markdown); len(md) != 1 || md[0].Content != assistant.DefaultTopicRefusal {
		t.Errorf("markdown blocks %+v, want the refusal once", md)
	}
	req := m.topicRequests()[0]
	if len(req.Tools) != 0 || req.MaxTokens <= 0 || req.MaxTokens > 32 || !strings.Contains(req.System, weatherScope) ||
		len(req.Messages) != 1 || req.Messages[0].Role != providers.User || req.Messages[0].Content != msg {
		t.Errorf("topic request: tools %d, max tokens %d, system %q, messages %+v", len(req.Tools), req.MaxTokens, req.System, req.Messages)
	}
	msgs := h.messages(t, reply.ThreadID)
	if len(msgs) != 2 || msgs[1].Status != store.StatusComplete || len(msgs[1].Blocks) != 1 ||
		msgs[1].Blocks[0].Kind != blocks.Markdown || msgs[1].Blocks[0].Content != assistant.DefaultTopicRefusal {
		t.Fatalf("stored %+v, want the user message and the refusal", msgs)
	}
	ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditTopicRefused})
	if len(ev) != 1 || ev[0].ActorID != alice.ID || ev[0].ThreadID != reply.ThreadID ||
		strings.Contains(string(ev[0].Data), "sonnet") || !strings.Contains(string(ev[0].Data), `"connection":"default"`) {
		t.Errorf("audit %+v, want one event naming the connection and nothing of the message", ev)
	}
	waitTurns(t, h)
	for _, r := range m.Requests() {
		if isTitleCall(&r) {
			t.Error("a refused message was titled by the model")
		}
	}

	// The next turn replays the refusal as the assistant's answer.
	m.SetDefault(fake.Turn{fake.Text("Sunny.")}) // on topic for the filter: an unclear answer passes
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Message: "weather in Oslo?"}); err != nil {
		t.Fatal(err)
	}
	all := m.Requests()
	last := all[len(all)-1].Messages
	if len(last) != 3 || last[0].Content != msg || last[1].Role != providers.Assistant || last[1].Content != assistant.DefaultTopicRefusal {
		t.Errorf("the next turn replays %+v; want the message, the refusal and the new message", last)
	}
}

func TestTopicFilterRefusalIsTheHostsText(t *testing.T) {
	m := newTopicModel(fake.Turn{fake.Text("off-topic.")})
	h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) {
		c.TopicRefusal = "I only talk about **the weather**."
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "who won the 1998 world cup?"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "I only talk about **the weather**." || reply.Finish != assistant.FinishOffTopic || m.turns.Load() != 0 {
		t.Errorf("reply %q, finish %q, %d main calls", reply.Text, reply.Finish, m.turns.Load())
	}
}

func TestTopicFilterLetsOnTopicAndUnclearAnswersThrough(t *testing.T) {
	for name, answer := range map[string]string{
		"on topic":      "ON_TOPIC",
		"on, spaced":    " on topic.\n",
		"empty":         "",
		"two words":     "OFF_TOPIC, probably",
		"negated":       "NOT OFF_TOPIC",
		"both":          "ON_TOPIC or OFF_TOPIC",
		"a sentence":    "The message is off topic.",
		"garbage":       "banana",
		"reasoning too": "<think>hmm</think>maybe",
	} {
		t.Run(name, func(t *testing.T) {
			m := newTopicModel(fake.Turn{fake.Text(answer)})
			h := newHarness(t, m.Provider, withTopic)
			reply, _, err := h.collect(t, alice, assistant.Request{Message: "is it raining in Oslo?"})
			if err != nil {
				t.Fatal(err)
			}
			if m.verdicts.Load() != 1 || m.turns.Load() != 1 || reply.Text != "Here is the answer." || reply.Finish != assistant.FinishStop {
				t.Errorf("%d topic and %d main calls, reply %q finish %q; want the model's answer", m.verdicts.Load(), m.turns.Load(), reply.Text, reply.Finish)
			}
		})
	}
}

func TestTopicFilterFailsOpen(t *testing.T) {
	for name, verdict := range map[string]fake.Turn{
		"provider error": {fake.Fail(&providers.Error{Category: providers.CategoryUnavailable, Err: errors.New("classifier down")})},
		"rate limited":   {fake.Fail(&providers.Error{Category: providers.CategoryRateLimit, RetryAfter: time.Second, Err: errors.New("busy")})},
		"cancelled":      {fake.Fail(&providers.Error{Category: providers.CategoryCanceled, Err: context.Canceled})},
		"timeout":        {fake.Delay(time.Hour), fake.Text("OFF_TOPIC")},
		"off after text": {fake.Text("OFF_TOPIC"), fake.Fail(errors.New("connection reset"))},
	} {
		t.Run(name, func(t *testing.T) {
			m := newTopicModel(verdict)
			h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) { c.TopicTimeout = 50 * time.Millisecond })
			start := time.Now()
			reply, _, err := h.collect(t, alice, assistant.Request{Message: "write me a sonnet"})
			if err != nil {
				t.Fatal(err)
			}
			if m.verdicts.Load() != 1 || m.turns.Load() != 1 || reply.Text != "Here is the answer." {
				t.Errorf("%d topic and %d main calls, reply %q; want the message to pass", m.verdicts.Load(), m.turns.Load(), reply.Text)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the turn took %v: the topic call is not bounded by TopicTimeout", took)
			}
		})
	}
}

func TestTopicFilterTokensCountInTheQuota(t *testing.T) {
	for _, tc := range []struct {
		verdict string
		want    int64
	}{{"ON_TOPIC", 32 + 110}, {"OFF_TOPIC", 32}} {
		t.Run(tc.verdict, func(t *testing.T) {
			ledger := newLedger(t, 1_000_000)
			m := newTopicModel(fake.Turn{fake.Text(tc.verdict), fake.Usage(30, 2)})
			h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) { c.Ledger = ledger })
			reply, _, err := h.collect(t, alice, assistant.Request{Message: "is it raining in Oslo?"})
			if err != nil {
				t.Fatal(err)
			}
			u, err := h.eng.Usage(context.Background(), alice, alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			if u.Daily.Used != tc.want || u.Daily.Held != 0 {
				t.Errorf("ledger: used %d, held %d; want %d used: the topic call's 32 tokens with the turn's", u.Daily.Used, u.Daily.Held, tc.want)
			}
			if reply.Usage.Total() != tc.want {
				t.Errorf("the turn reports %d tokens, want %d", reply.Usage.Total(), tc.want)
			}
		})
	}
}

func TestTopicFilterIsReservedBeforeItRuns(t *testing.T) {
	const msg = "is it raining in Oslo?"
	reserved := func(mod ...func(*assistant.Config)) int64 {
		h, l := estimateHarness(t, newTopicModel(fake.Turn{fake.Text("ON_TOPIC")}).Provider, mod...)
		if _, _, err := h.collect(t, alice, assistant.Request{Message: msg}); err != nil {
			t.Fatal(err)
		}
		return l.last(t)
	}
	off, on := reserved(), reserved(withTopic)
	if min := int64(len(assistant.TopicInstructions)+len(weatherScope)+len(msg))/4 + 16; on-off < min {
		t.Errorf("the filter adds %d tokens to the reservation, want at least %d: its prompt, the message and its answer", on-off, min)
	}
}

func TestTopicFilterOffMakesNoTopicCall(t *testing.T) {
	m := newTopicModel(fake.Turn{fake.Text("OFF_TOPIC")})
	h := newHarness(t, m.Provider) // TopicScope ""
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "write me a sonnet"})
	if err != nil {
		t.Fatal(err)
	}
	if m.verdicts.Load() != 0 || m.Calls() != 1 || reply.Text != "Here is the answer." {
		t.Errorf("%d topic calls, %d calls; want the turn's only", m.verdicts.Load(), m.Calls())
	}
}

func TestTopicFilterNeverReadsBlockedInput(t *testing.T) {
	m := newTopicModel(fake.Turn{fake.Text("OFF_TOPIC")}, fake.Turn{fake.Text("I can't process that message.")})
	h := newHarness(t, m.Provider, withTopic)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "please use my key " + secretKey + " to log in"})
	if err != nil {
		t.Fatal(err)
	}
	if m.verdicts.Load() != 0 || reply.Finish == assistant.FinishOffTopic {
		t.Errorf("%d topic calls, finish %q: a blocked message reached the topic filter", m.verdicts.Load(), reply.Finish)
	}
	if strings.Contains(sentToModel(m.Provider), secretKey) {
		t.Error("the key reached a model")
	}
}

func TestTopicFilterReadsTheMessageAsTheGuardPassedIt(t *testing.T) {
	m := newTopicModel(fake.Turn{fake.Text("ON_TOPIC")})
	h := newHarness(t, m.Provider, withTopic)
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "charge the forecast to card 4111 1111 1111 1111"}); err != nil {
		t.Fatal(err)
	}
	reqs := m.topicRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d topic calls, want 1", len(reqs))
	}
	if got := reqs[0].Messages[0].Content; strings.Contains(got, "4111") || !strings.Contains(got, "[CARD_REDACTED]") {
		t.Errorf("the topic call read %q, want the card redacted", got)
	}
}

func TestTopicFilterSkipsFormAnswersAndClientResults(t *testing.T) {
	t.Run("form", func(t *testing.T) {
		m := newTopicModel(fake.Turn{fake.Text("ON_TOPIC")},
			fake.Turn{fake.Text("A few questions first."), fake.CallTool("f1", assistant.AskUserName, planForm)})
		h := newHarness(t, m.Provider, withTopic)
		reply, _, err := h.collect(t, alice, assistant.Request{Message: "set up my weather plan"})
		if err != nil || reply.Finish != assistant.FinishAskUser {
			t.Fatalf("finish %q, err %v; want the form", reply.Finish, err)
		}
		values := map[string]json.RawMessage{"plan": json.RawMessage(`"Pro"`)}
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
			Form: &assistant.FormAnswer{ID: "f1", Values: values}, Message: "thanks"}); err != nil {
			t.Fatal(err)
		}
		if m.verdicts.Load() != 1 || m.turns.Load() != 2 {
			t.Errorf("%d topic and %d main calls; want the first message classified, not the answers", m.verdicts.Load(), m.turns.Load())
		}
	})
	t.Run("client results", func(t *testing.T) {
		m := newTopicModel(fake.Turn{fake.Text("ON_TOPIC")},
			fake.Turn{fake.Text("Let me look."), fake.CallTool("loc1", "get_location", `{"precise": true}`)})
		h, _ := clientHarness(t, m.Provider, withTopic)
		reply, _, err := h.collect(t, alice, assistant.Request{Message: "weather here?"})
		if err != nil || reply.Finish != assistant.FinishClientTool {
			t.Fatalf("finish %q, err %v; want the client call", reply.Finish, err)
		}
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
			ToolResults: []assistant.ToolResult{{ID: "loc1", Output: json.RawMessage(`{"city": "Oslo"}`)}}}); err != nil {
			t.Fatal(err)
		}
		if m.verdicts.Load() != 1 || m.turns.Load() != 2 {
			t.Errorf("%d topic and %d main calls; want the first message classified, not the results", m.verdicts.Load(), m.turns.Load())
		}
	})
}

func TestTopicFilterUsesTopicModel(t *testing.T) {
	t.Run("single connection", func(t *testing.T) {
		m := newTopicModel(fake.Turn{fake.Text("ON_TOPIC")})
		h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) { c.Model, c.TopicModel = "big", "small" })
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "rain?"}); err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Requests() {
			if want := map[bool]string{true: "small", false: "big"}[isTopicCall(&r)]; r.Model != want {
				t.Errorf("a call (topic %v) went to %q, want %q", isTopicCall(&r), r.Model, want)
			}
		}
	})
	t.Run("connections", func(t *testing.T) {
		m := newTopicModel(fake.Turn{fake.Text("OFF_TOPIC")})
		h := newHarness(t, m.Provider, withTopic, func(c *assistant.Config) {
			c.Provider = nil
			c.Connections = []assistant.Connection{{Name: "main", Provider: m.Provider, Model: "big", TopicModel: "small"}}
		})
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "a sonnet?"}); err != nil {
			t.Fatal(err)
		}
		if reqs := m.topicRequests(); len(reqs) != 1 || reqs[0].Model != "small" {
			t.Errorf("topic requests %+v, want one to the connection's TopicModel", reqs)
		}
		ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditTopicRefused})
		if len(ev) != 1 || string(ev[0].Data) != `{"connection":"main","model":"small"}` {
			t.Errorf("audit %+v", ev)
		}
	})
	t.Run("Config.TopicModel with Connections", func(t *testing.T) {
		_, err := assistant.New(assistant.Config{
			Authorizer: assistant.RoleAuthorizer{}, Store: memstore.New(), TopicModel: "small",
			Connections: []assistant.Connection{{Name: "main", Provider: fake.New()}},
		})
		if !errors.Is(err, assistant.ErrInvalidConfig) {
			t.Errorf("New: %v, want ErrInvalidConfig", err)
		}
	})
}
