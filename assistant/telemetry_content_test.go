package assistant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

// With RecordContent and the guard off, the user's message on the turn span
// is scrubbed of credentials as the answer is.
func TestRecordedInputIsScrubbedWithoutTheGuard(t *testing.T) {
	key := "sk-" + "proj-" + strings.Repeat("Zq8Wx2Lm4Np6", 4)
	var o *observed
	p := fake.New(fake.Turn{fake.Text("noted")})
	h := newHarness(t, p, func(c *assistant.Config) { c.RecordContent = true; c.DisableGuard = true; o = observe(c) })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "my key is " + key}); err != nil {
		t.Fatal(err)
	}
	in, ok := attrOf(o.span(t, "invoke_agent Assistant"), "gen_ai.input.messages")
	if !ok || strings.Contains(in.Emit(), key) {
		t.Errorf("gen_ai.input.messages = %q (set %v): holds the credential", in.Emit(), ok)
	}
}

// With RecordContent, a tool's JSON arguments on the span are scrubbed by
// key too ({"authorization": "Basic ..."}), with the guard on or off.
func TestRecordedToolArgumentsAreScrubbedByKey(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprint("DisableGuard=", off), func(t *testing.T) {
			var o *observed
			h := newHarness(t, fake.New(), func(c *assistant.Config) { c.RecordContent = true; c.DisableGuard = off; o = observe(c) })
			args := `{"city":"Oslo","authorization":"Basic dXNlcjpwYXNzd29yZDEyMw=="}`
			if _, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "get_weather", Args: []byte(args)}); err != nil {
				t.Fatal(err)
			}
			for _, s := range o.spans.Ended() {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "dXNlcjpwYXNzd29yZDEyMw") {
						t.Errorf("span %q %s holds the credential: %s", s.Name(), kv.Key, kv.Value.Emit())
					}
				}
			}
		})
	}
}

// ExecuteTool takes the tool rate before the guard's judge reads the
// arguments: a caller over the rate costs no judge call.
func TestExecuteToolOverTheRateAsksNoJudge(t *testing.T) {
	judge := judgeModel("BENIGN")
	l := newLedger(t, 100)
	h := newHarness(t, fake.New(), func(c *assistant.Config) {
		c.Ledger = l
		c.Guard = judgedGuard(t, judge)
		c.RateLimiter = &memquota.RateLimiter{}
		c.ToolRate = quota.Rate{Calls: 1, Per: time.Hour}
	})
	for i := range 3 {
		args, err := json.Marshal(map[string]string{"city": string(rune('A'+i)) + ": " + uncertain})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "get_weather", Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	if n := judge.Calls(); n != 1 {
		t.Errorf("judge asked %d times; the tool rate allows 1 call", n)
	}
}

// With RecordContent, the judge the span's redaction asks is charged with
// the turn.
func TestRecordedContentJudgeIsCharged(t *testing.T) {
	judge := judgeModel("BENIGN")
	l := newLedger(t, 1_000_000)
	p := fake.New(fake.Turn{fake.Text(uncertain), fake.Usage(100, 10)})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Ledger = l
		c.Guard = judgedGuard(t, judge)
		c.RecordContent = true
		observe(c)
	})
	r, _, err := h.collect(t, alice, assistant.Request{Message: "hello there"})
	if err != nil {
		t.Fatal(err)
	}
	wantJudgeCharged(t, l, judge, r)
}
