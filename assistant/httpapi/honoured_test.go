package httpapi_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
)

// partial is a provider honouring only some settings, as Anthropic's does.
type partial struct {
	*fake.Provider
	names []string
}

func (p partial) Settings() []string { return p.names }

var _ providers.SettingsProvider = partial{}

// A connection allowed every setting advertises only those its provider
// honours, and only those reach it.
func TestModelsAdvertiseOnlyTheSettingsTheProviderHonours(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("hello.")})
	honours := partial{model, []string{providers.SettingTemperature, providers.SettingMaxTokens}}
	h := newHarness(t, nil, withEngine(func(c *assistant.Config) {
		c.Provider, c.Store = nil, memstore.New()
		c.Connections = []assistant.Connection{
			{Name: "claude", Provider: honours, Model: "sonnet", Settings: assistant.AllSettings},
			{Name: "open", Provider: fake.New(), Model: "gpt", Settings: assistant.AllSettings},
		}
	}))
	status, got, raw := h.models("GET", "alice", "")
	if status != 200 || len(got.Connections) != 2 {
		t.Fatalf("GET: %d %s", status, raw)
	}
	if s := strings.Join(got.Connections[0].Settings, ","); s != "temperature,max_tokens" {
		t.Errorf("claude advertises %q, want temperature,max_tokens", s)
	}
	if s := strings.Join(got.Connections[1].Settings, ","); s != "temperature,top_p,max_tokens,reasoning_effort" {
		t.Errorf("a provider that names none advertises %q, want all four", s)
	}
	h.stream("alice", httpapi.StreamRequest{Message: "hi", Model: "claude/sonnet",
		Settings: &assistant.Settings{Temperature: ptr(0.5), TopP: ptr(0.9), ReasoningEffort: "high"}})
	rs := model.Requests()
	if len(rs) == 0 {
		t.Fatal("the provider was not called")
	}
	if r := rs[0]; r.Temperature == nil || r.TopP != nil || r.ReasoningEffort != "" {
		t.Errorf("the provider got temperature %v, top_p %v, effort %q: want only the temperature", r.Temperature, r.TopP, r.ReasoningEffort)
	}
}
