package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
)

// sent streams req through a fresh mock and returns the body it received.
func sent(t *testing.T, cfg anthropic.Config, req *providers.Request) wireRequest {
	t.Helper()
	p, mock := start(t, cfg, mockResponse{Text: []string{"ok"}})
	if o := run(t, p, req); o.err != nil {
		t.Fatal(o.err)
	}
	r := mock.requests()[0]
	if r.Err != nil {
		t.Fatalf("body is not JSON: %v", r.Err)
	}
	return r.Body
}

// shape describes messages as role[type,type] lists, for comparison.
func shape(ms []wireMessage) string {
	var parts []string
	for _, m := range ms {
		var types []string
		for _, b := range m.Content {
			types = append(types, b.Type)
		}
		parts = append(parts, m.Role+"["+strings.Join(types, ",")+"]")
	}
	return strings.Join(parts, " ")
}

func TestSystemPromptGetsACacheBreakpointAtTheEndOfItsStablePart(t *testing.T) {
	stable := "You are Parley.\n\n## Rules\nBe terse.\n\n"
	volatile := "## Now\nCurrent time: 2025-03-01T12:00:00Z"
	body := sent(t, anthropic.Config{}, &providers.Request{
		System: stable + volatile, SystemStable: len(stable), Messages: hello().Messages,
		Tools: []providers.ToolDef{
			{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)},
			{Name: "b", Parameters: json.RawMessage(`{"type":"object"}`)},
		},
	})
	if len(body.System) != 2 {
		t.Fatalf("system = %+v, want two blocks", body.System)
	}
	if s := body.System[0]; s.Text != stable || s.CacheControl == nil || s.CacheControl.Type != "ephemeral" {
		t.Errorf("stable block = %+v, want the stable part with an ephemeral breakpoint", s)
	}
	if s := body.System[1]; s.Text != volatile || s.CacheControl != nil {
		t.Errorf("volatile block = %+v, want the rest without a breakpoint", s)
	}
	if body.Tools[0].CacheControl != nil || body.Tools[1].CacheControl == nil || body.Tools[1].CacheControl.Type != "ephemeral" {
		t.Errorf("tool breakpoints = %v, %v; want one, on the last tool", body.Tools[0].CacheControl, body.Tools[1].CacheControl)
	}
	for _, m := range body.Messages {
		for _, b := range m.Content {
			if b.CacheControl != nil {
				t.Errorf("message block %+v has a breakpoint", b)
			}
		}
	}
}

func TestSystemPromptWithoutAUsableSplitIsOneCachedBlock(t *testing.T) {
	for name, tc := range map[string]struct {
		system string
		stable int
	}{
		"Unknown":          {"Whole prompt.", 0},
		"All":              {"Whole prompt.", len("Whole prompt.")},
		"PastTheEnd":       {"Whole prompt.", 99},
		"Negative":         {"Whole prompt.", -3},
		"BlankVolatile":    {"Whole prompt.\n\n", len("Whole prompt.")},
		"BlankStablePart":  {"\n\nWhole prompt.", 2},
		"SplitInsideARune": {"é", 1}, // moves back to 0: no split
	} {
		t.Run(name, func(t *testing.T) {
			body := sent(t, anthropic.Config{}, &providers.Request{System: tc.system, SystemStable: tc.stable, Messages: hello().Messages})
			if len(body.System) != 1 || body.System[0].Text != tc.system || body.System[0].CacheControl == nil {
				t.Errorf("system = %+v, want one cached block of the whole prompt", body.System)
			}
		})
	}
}

func TestSystemSplitInsideARuneMovesBackToItsStart(t *testing.T) {
	system := "Stable: café. Volatile."
	cut := strings.Index(system, "é") + 1 // inside é
	body := sent(t, anthropic.Config{}, &providers.Request{System: system, SystemStable: cut, Messages: hello().Messages})
	if len(body.System) != 2 || body.System[0].Text != "Stable: caf" || body.System[1].Text != "é. Volatile." {
		t.Errorf("system = %+v", body.System)
	}
}

func TestBlankSystemPromptSendsNoSystem(t *testing.T) {
	if body := sent(t, anthropic.Config{}, &providers.Request{System: " \n", Messages: hello().Messages}); len(body.System) != 0 {
		t.Errorf("system = %+v", body.System)
	}
}

func TestMessagesBecomeAlternatingContentBlocks(t *testing.T) {
	body := sent(t, anthropic.Config{}, &providers.Request{
		System: "Base.",
		Messages: []providers.Message{
			{Role: providers.User, Content: "first"},
			{Role: providers.User, Content: "second"},
			{Role: providers.System, Content: "Mid-conversation note."},
			{Role: providers.Assistant, Content: "Checking.", ToolCalls: []providers.ToolCall{
				{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_2", Name: "get_time", Args: json.RawMessage(`{}`)},
			}},
			{Role: providers.Tool, ToolCallID: "call_1", Content: `{"ok":true}`},
			{Role: providers.Tool, ToolCallID: "call_2", Content: ""},
			{Role: providers.User, Content: "and tomorrow?"},
			{Role: providers.Assistant, Content: "Sunny."},
			{Role: providers.Assistant, Content: "   "},
			{Role: providers.User, Content: "thanks"},
		},
	})
	want := "user[text,text] assistant[text,tool_use,tool_use] user[tool_result,tool_result,text] assistant[text] user[text]"
	if got := shape(body.Messages); got != want {
		t.Fatalf("messages = %s\nwant       %s", got, want)
	}
	if len(body.System) != 2 || body.System[1].Text != "Mid-conversation note." || body.System[1].CacheControl != nil {
		t.Errorf("system = %+v, want the system message after the prompt, uncached", body.System)
	}
	results := body.Messages[2].Content
	if results[0].ToolUseID != "call_1" || joinText(results[0].Content) != `{"ok":true}` {
		t.Errorf("first result = %+v", results[0])
	}
	if results[1].ToolUseID != "call_2" || len(results[1].Content) != 0 {
		t.Errorf("empty result = %+v, want no content", results[1])
	}
	if c := body.Messages[1].Content[1]; c.ID != "call_1" || c.Name != "get_weather" || string(c.Input) != `{"city":"Paris"}` {
		t.Errorf("tool_use = %+v", c)
	}
}

// Tool results must open the user message after the calls, even when the
// history put the user's words first.
func TestToolResultsComeFirstInTheirUserMessage(t *testing.T) {
	body := sent(t, anthropic.Config{}, &providers.Request{Messages: []providers.Message{
		{Role: providers.User, Content: "go"},
		{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "f", Args: json.RawMessage(`{}`)}}},
		{Role: providers.User, Content: "also this"},
		{Role: providers.Tool, ToolCallID: "c1", Content: "done"},
	}})
	if got, want := shape(body.Messages), "user[text] assistant[tool_use] user[tool_result,text]"; got != want {
		t.Errorf("messages = %s, want %s", got, want)
	}
}

// History can hold arguments a model garbled; replaying them must not make
// the request fail, since the API takes only an object as input.
func TestInvalidToolArgumentsFromHistoryAreWrapped(t *testing.T) {
	for args, want := range map[string]string{
		`{"city":"Paris"}`: `{"city":"Paris"}`,
		``:                 `{}`,
		"  \n":             `{}`,
		`{"city":"Par`:     `{"invalid_arguments":"{\"city\":\"Par"}`,
		`[1,2]`:            `{"invalid_arguments":"[1,2]"}`,
		`"Paris"`:          `{"invalid_arguments":"\"Paris\""}`,
		`null`:             `{"invalid_arguments":"null"}`,
	} {
		t.Run(args, func(t *testing.T) {
			body := sent(t, anthropic.Config{}, &providers.Request{Messages: []providers.Message{
				{Role: providers.User, Content: "go"},
				{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "f", Args: json.RawMessage(args)}}},
				{Role: providers.Tool, ToolCallID: "c1", Content: "r"},
			}})
			if got := string(body.Messages[1].Content[0].Input); got != want {
				t.Errorf("input = %s, want %s", got, want)
			}
		})
	}
}

func TestToolIDsOutsideTheAPIPatternAreMappedTheSameForCallAndResult(t *testing.T) {
	body := sent(t, anthropic.Config{}, &providers.Request{Messages: []providers.Message{
		{Role: providers.User, Content: "go"},
		{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: "ollama:call/1.a", Name: "f", Args: json.RawMessage(`{}`)}}},
		{Role: providers.Tool, ToolCallID: "ollama:call/1.a", Content: "r"},
	}})
	use, result := body.Messages[1].Content[0], body.Messages[2].Content[0]
	if use.ID != "ollama_call_1_a" || result.ToolUseID != use.ID {
		t.Errorf("tool_use id %q, tool_result id %q", use.ID, result.ToolUseID)
	}
}

func TestFinalAssistantMessageLosesTrailingWhitespace(t *testing.T) {
	body := sent(t, anthropic.Config{}, &providers.Request{Messages: []providers.Message{
		{Role: providers.User, Content: "Continue:"},
		{Role: providers.Assistant, Content: "Once upon a time \n"},
	}})
	if got := body.Messages[1].Content[0].Text; got != "Once upon a time" {
		t.Errorf("final assistant text = %q", got)
	}
}

func TestToolSchemaIsSentAsIs(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`
	body := sent(t, anthropic.Config{}, &providers.Request{Messages: hello().Messages, Tools: []providers.ToolDef{
		{Name: "get_weather", Description: "Weather.", Parameters: json.RawMessage(schema)},
		{Name: "no_params"},
	}})
	if got := string(body.Tools[0].InputSchema); got != schema || body.Tools[0].Description != "Weather." {
		t.Errorf("tool = %+v", body.Tools[0])
	}
	if got := string(body.Tools[1].InputSchema); got != `{"type":"object","properties":{}}` {
		t.Errorf("empty schema became %s", got)
	}
}

func TestThinkingBudgetIsSentWithRoomForTheAnswer(t *testing.T) {
	temp := 0.3
	body := sent(t, anthropic.Config{ThinkingBudget: 2000}, &providers.Request{Messages: hello().Messages, MaxTokens: 500, Temperature: &temp})
	if got := string(body.Thinking); got != `{"budget_tokens":2000,"type":"enabled"}` {
		t.Errorf("thinking = %s", got)
	}
	if body.MaxTokens != 2500 {
		t.Errorf("max_tokens = %d, want the answer's 500 plus the budget", body.MaxTokens)
	}
	if body.Temperature != nil {
		t.Errorf("temperature %v sent with thinking, which the API refuses", *body.Temperature)
	}
}

func TestThinkingBudgetBelowTheAPIMinimumIsRaised(t *testing.T) {
	body := sent(t, anthropic.Config{ThinkingBudget: 10}, hello())
	if got := string(body.Thinking); got != `{"budget_tokens":1024,"type":"enabled"}` {
		t.Errorf("thinking = %s", got)
	}
}

func TestAdaptiveThinking(t *testing.T) {
	body := sent(t, anthropic.Config{AdaptiveThinking: true, ThinkingBudget: 3000}, &providers.Request{Messages: hello().Messages, MaxTokens: 100})
	if got := string(body.Thinking); got != `{"type":"adaptive"}` || body.MaxTokens != 3100 {
		t.Errorf("thinking = %s, max_tokens = %d", got, body.MaxTokens)
	}
}

func TestNoThinkingByDefault(t *testing.T) {
	temp := 0.3
	body := sent(t, anthropic.Config{}, &providers.Request{Messages: hello().Messages, MaxTokens: 100, Temperature: &temp})
	if len(body.Thinking) != 0 || body.MaxTokens != 100 || body.Temperature == nil || *body.Temperature != 0.3 {
		t.Errorf("thinking = %s, max_tokens = %d, temperature = %v", body.Thinking, body.MaxTokens, body.Temperature)
	}
}

// A request continuing a tool loop would need the signed thinking block of
// the assistant message that made the calls, which history does not keep;
// it goes without thinking, as the API allows, instead of failing.
func TestThinkingIsLeftOffWhileContinuingAToolLoop(t *testing.T) {
	loop := []providers.Message{
		{Role: providers.User, Content: "weather?"},
		{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "f", Args: json.RawMessage(`{}`)}}},
		{Role: providers.Tool, ToolCallID: "c1", Content: "sunny"},
	}
	temp := 0.5
	body := sent(t, anthropic.Config{ThinkingBudget: 2000}, &providers.Request{Messages: loop, MaxTokens: 100, Temperature: &temp})
	if len(body.Thinking) != 0 || body.MaxTokens != 100 || body.Temperature == nil {
		t.Errorf("mid-loop: thinking = %s, max_tokens = %d, temperature = %v", body.Thinking, body.MaxTokens, body.Temperature)
	}
	// Once the loop ended in text and the user spoke again, a new turn
	// thinks again.
	next := append(loop, providers.Message{Role: providers.Assistant, Content: "Sunny."}, providers.Message{Role: providers.User, Content: "thanks"})
	body = sent(t, anthropic.Config{ThinkingBudget: 2000}, &providers.Request{Messages: next})
	if len(body.Thinking) == 0 {
		t.Error("a new turn after a finished loop was sent without thinking")
	}
}

func TestStreamDoesNotModifyTheRequest(t *testing.T) {
	req := &providers.Request{
		System: "Stable. Volatile.", SystemStable: 8,
		Messages: []providers.Message{
			{Role: providers.User, Content: "go"},
			{Role: providers.Assistant, Content: "ok \n", ToolCalls: []providers.ToolCall{{ID: "bad id", Name: "f", Args: json.RawMessage(` [1] `)}}},
			{Role: providers.User, Content: "u"},
			{Role: providers.Tool, ToolCallID: "bad id", Content: "r"},
			{Role: providers.Assistant, Content: "trailing  "},
		},
		Tools: []providers.ToolDef{{Name: "f", Parameters: json.RawMessage(` {"type":"object"} `)}},
	}
	before, _ := json.Marshal(req)
	sent(t, anthropic.Config{ThinkingBudget: 1}, req)
	if after, _ := json.Marshal(req); string(before) != string(after) {
		t.Errorf("request changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Settings names what params sends: temperature only without thinking,
// never top_p or a reasoning effort.
func TestSettingsNameWhatTheRequestSends(t *testing.T) {
	for _, tc := range []struct {
		cfg  anthropic.Config
		want string
	}{
		{anthropic.Config{Model: "m"}, "temperature,max_tokens"},
		{anthropic.Config{Model: "m", ThinkingBudget: 2048}, "max_tokens"},
		{anthropic.Config{Model: "m", AdaptiveThinking: true}, "max_tokens"},
	} {
		if got := strings.Join(anthropic.New(tc.cfg).Settings(), ","); got != tc.want {
			t.Errorf("%+v: Settings() = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
