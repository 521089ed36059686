package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

// noPrefStore hides any Preferences a store has.
type noPrefStore struct{ store.Store }

// withConnections serves a "fast" connection (the default, allowing
// temperature) on fast and a "smart" one on smart, over st.
func withConnections(st store.Store, fast, smart *fake.Provider) option {
	return withEngine(func(c *assistant.Config) {
		c.Provider, c.Store = nil, st
		c.Connections = []assistant.Connection{
			{Name: "fast", Provider: fast, Model: "small", Models: []string{"small", "tiny"}, MaxOutputTokens: 100,
				Settings: assistant.SettingTemperature},
			{Name: "smart", Provider: smart, Model: "big", Models: []string{"big", "huge"}, ContextWindow: 200000},
		}
	})
}

type modelsAnswer struct {
	Connections []struct {
		Name            string   `json:"name"`
		DefaultModel    string   `json:"default_model"`
		Models          []string `json:"models"`
		ContextWindow   int      `json:"context_window"`
		MaxOutputTokens int      `json:"max_output_tokens"`
		Settings        []string `json:"settings"`
	} `json:"connections"`
	Default    map[string]string `json:"default"`
	Current    map[string]string `json:"current"`
	Preference map[string]string `json:"preference"`
}

func (h *harness) models(method, user, body string) (int, modelsAnswer, string) {
	h.t.Helper()
	path := "/api/chat/models"
	if method == "PUT" {
		path += "/preference"
	}
	resp := h.do(method, path, user, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out modelsAnswer
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &out); err != nil {
			h.t.Fatalf("%s: %v", raw, err)
		}
	}
	return resp.StatusCode, out, string(raw)
}

func ref(conn, model string) map[string]string {
	return map[string]string{"connection": conn, "model": model}
}

func sameRef(a, b map[string]string) bool {
	return len(a) == len(b) && a["connection"] == b["connection"] && a["model"] == b["model"]
}

func TestModelsRoutesShowEachUserOnlyTheirOwnChoice(t *testing.T) {
	st := memstore.New()
	h := newHarness(t, nil, withConnections(st, fake.New(), fake.New()))
	status, got, raw := h.models("GET", "alice", "")
	if status != 200 || len(got.Connections) != 2 || !sameRef(got.Default, ref("fast", "small")) || !sameRef(got.Current, ref("fast", "small")) || got.Preference != nil {
		t.Fatalf("GET: %d %s", status, raw)
	}
	fast, smart := got.Connections[0], got.Connections[1]
	if fast.Name != "fast" || fast.DefaultModel != "small" || strings.Join(fast.Models, ",") != "small,tiny" || fast.MaxOutputTokens != 100 ||
		strings.Join(fast.Settings, ",") != "temperature" || smart.ContextWindow != 200000 || smart.Settings == nil || len(smart.Settings) != 0 {
		t.Errorf("connections: %s", raw)
	}
	if strings.Contains(raw, "Provider") || strings.Contains(raw, "provider") {
		t.Errorf("the list shows more than names and models: %s", raw)
	}
	status, got, raw = h.models("PUT", "alice", `{"connection": "smart", "model": "huge"}`)
	if status != 200 || !sameRef(got.Current, ref("smart", "huge")) || !sameRef(got.Preference, ref("smart", "huge")) {
		t.Fatalf("PUT: %d %s", status, raw)
	}
	if status, got, raw = h.models("GET", "bob", ""); status != 200 || got.Preference != nil || !sameRef(got.Current, ref("fast", "small")) {
		t.Errorf("bob sees alice's choice: %d %s", status, raw)
	}
	if status, got, raw = h.models("GET", "alice", ""); status != 200 || !sameRef(got.Preference, ref("smart", "huge")) {
		t.Errorf("alice's choice is gone: %d %s", status, raw)
	}
	if status, got, raw = h.models("PUT", "alice", `{"connection": "", "model": ""}`); status != 200 || got.Preference != nil {
		t.Errorf("clearing: %d %s", status, raw)
	}
	if status, _, _ := h.models("GET", "", ""); status != 401 {
		t.Errorf("GET without a user: %d", status)
	}
	if status, _, _ := h.models("PUT", "", `{"connection": "smart", "model": "big"}`); status != 401 {
		t.Errorf("PUT without a user: %d", status)
	}
}

func TestModelPreferenceRefusals(t *testing.T) {
	st := memstore.New()
	h := newHarness(t, nil, withConnections(st, fake.New(), fake.New()))
	for _, c := range []struct{ body, want string }{
		{`{"connection": "smart", "model": "huge"`, "invalid_request"},          // bad JSON
		{`{"connection": "smart"}`, "invalid_request"},                          // model missing
		{`{"connection": "smart", "model": "huge", "x": 1}`, "invalid_request"}, // unknown field
		{`{"connection": "smart", "model": "tiny"}`, "invalid_request"},         // not offered there: refused, not coerced
		{`{"connection": "nowhere", "model": "big"}`, "invalid_request"},
		{`{"connection": "smart", "model": "b\u0000g"}`, "invalid_request"},
	} {
		status, _, raw := h.models("PUT", "alice", c.body)
		if status != 400 || !strings.Contains(raw, `"`+c.want+`"`) {
			t.Errorf("%s: %d %s", c.body, status, raw)
		}
	}
	if p, err := st.ModelPreference(context.Background(), "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused choice was stored: %+v, %v", p, err)
	}
	h2 := newHarness(t, nil, withConnections(noPrefStore{memstore.New()}, fake.New(), fake.New()))
	if status, _, raw := h2.models("PUT", "alice", `{"connection": "smart", "model": "big"}`); status != 501 || !strings.Contains(raw, `"unsupported"`) {
		t.Errorf("without store support: %d %s", status, raw)
	}
	if status, got, raw := h2.models("GET", "alice", ""); status != 200 || got.Preference != nil {
		t.Errorf("GET without store support: %d %s", status, raw)
	}
}

func TestStreamModelAndSettingsPickTheConnection(t *testing.T) {
	fast, smart := fake.New(), fake.New()
	fast.SetDefault(fake.Turn{fake.Text("fast answer")})
	smart.SetDefault(fake.Turn{fake.Text("smart answer")})
	st := memstore.New()
	h := newHarness(t, nil, withConnections(st, fast, smart))
	bs, raw := h.stream("alice", httpapi.StreamRequest{Message: "hi", Model: "smart/huge", Settings: &assistant.Settings{Temperature: ptr(0.5)}})
	if m := bs[0].Meta; bs[0].Kind != blocks.Meta || m.Connection != "smart" || m.Model != "huge" {
		t.Fatalf("first block %+v: %s", bs[0], raw)
	}
	if rs := smart.Requests(); len(rs) != 1 || rs[0].Model != "huge" || rs[0].Temperature != nil {
		t.Errorf("smart got %+v: want huge and no temperature (not allowed there)", rs)
	}
	// The connection alone: its default model; temperature clamped.
	bs, raw = h.stream("alice", httpapi.StreamRequest{Message: "hi", Model: "fast/", Settings: &assistant.Settings{Temperature: ptr(7.0)}})
	if m := bs[0].Meta; m.Connection != "fast" || m.Model != "small" {
		t.Errorf("first block %+v: %s", bs[0], raw)
	}
	if rs := fast.Requests(); len(rs) != 1 || rs[0].Model != "small" || rs[0].Temperature == nil || *rs[0].Temperature != 2 {
		t.Errorf("fast got %+v", rs)
	}
	if !strings.Contains(raw, `"connection":"fast"`) || !strings.Contains(raw, `"model":"small"`) {
		t.Errorf("the NDJSON meta line does not name them: %s", raw)
	}
	resp := h.do("POST", "/api/chat/stream", "alice", `{"message": "hi", "settings": {"temperature": 0.5, "seed": 1}}`)
	if status := discard(resp); status != 400 {
		t.Errorf("an unknown setting: %d, want 400", status)
	}
}

// A stream naming a model no connection offers is refused as the
// preference route refuses it, never answered by the default model; on the
// AI SDK route too, as a sentence.
func TestStreamModelNoConnectionOffersIs400(t *testing.T) {
	fast, smart := fake.New(), fake.New()
	h := newHarness(t, nil, withConnections(memstore.New(), fast, smart))
	for _, model := range []string{"nosuchconn/x", "fast/huge", "gpt-unknown"} {
		resp := h.do("POST", "/api/chat/stream", "alice", streamBody(t, httpapi.StreamRequest{Message: "hi", Model: model}))
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(raw), `"invalid_request"`) || !strings.Contains(string(raw), "no connection offers the model") {
			t.Errorf("model %q: %d %s, want 400 invalid_request naming it", model, resp.StatusCode, raw)
		}
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(uiBody(t, "chat-x", "submit-message", "", userMsg("u1", "hi"))), &body); err != nil {
		t.Fatal(err)
	}
	body["model"] = "nosuchconn/x"
	raw, _ := json.Marshal(body)
	resp := h.do("POST", "/api/chat/ui", "alice", string(raw))
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(text), "no connection offers the model") {
		t.Errorf("/api/chat/ui with an unknown model: %d %s", resp.StatusCode, text)
	}
	if n := len(fast.Requests()) + len(smart.Requests()); n != 0 {
		t.Errorf("%d model calls for refused requests", n)
	}
}

func TestUIBodyModelReachesTheEngineAndTheMetadata(t *testing.T) {
	fast, smart := fake.New(), fake.New()
	smart.SetDefault(fake.Turn{fake.Text("smart answer")})
	st := memstore.New()
	h := newHarness(t, nil, withConnections(st, fast, smart))
	var body map[string]any
	if err := json.Unmarshal([]byte(uiBody(t, "chat-m", "submit-message", "", userMsg("u1", "hi"))), &body); err != nil {
		t.Fatal(err)
	}
	body["model"] = "smart/big"
	body["settings"] = map[string]any{"temperature": 0.3}
	raw, _ := json.Marshal(body)
	cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", string(raw)))
	md, _ := cs[0]["messageMetadata"].(map[string]any)
	if md["connection"] != "smart" || md["model"] != "big" || uiText(cs) != "smart answer" {
		t.Errorf("start metadata %v, text %q", md, uiText(cs))
	}
	if len(fast.Requests()) != 0 || len(smart.Requests()) != 1 {
		t.Errorf("fast %d calls, smart %d", len(fast.Requests()), len(smart.Requests()))
	}
}

// The standing approvals route reads and replaces the user's own list,
// and the stream's auto_approve field runs a Mutate tool without a card.
func TestAutoApproveRouteAndField(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("Done.")})
	h := newHarness(t, p)
	get := func(user string) (int, string) {
		resp := h.do("GET", "/api/chat/auto-approve", user, "")
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	if status, body := get("alice"); status != 200 || body != `{"grants":[]}` {
		t.Fatalf("GET: %d %s", status, body)
	}
	resp := h.do("PUT", "/api/chat/auto-approve", "alice", `{"grants": ["add_item"]}`)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != `{"grants":["add_item"]}` {
		t.Fatalf("PUT: %d %s", resp.StatusCode, raw)
	}
	if status, body := get("bob"); status != 200 || body != `{"grants":[]}` {
		t.Errorf("bob sees alice's approvals: %d %s", status, body)
	}
	for _, body := range []string{`{}`, `{"grants": ["staff_report"]}`, `{"grants": ["weather"]}`, `{"grants": ["a\u0000b"]}`} {
		resp := h.do("PUT", "/api/chat/auto-approve", "alice", body)
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("PUT %s: %d, want 400", body, resp.StatusCode)
		}
	}
	if status, body := get("alice"); body != `{"grants":["add_item"]}` {
		t.Errorf("a refused PUT changed the list: %d %s", status, body)
	}
	// bob has none stored; the field grants it for his turn.
	p.Append(fake.Turn{fake.CallTool("c1", "add_item", `{}`)})
	bs, _ := h.stream("bob", httpapi.StreamRequest{Message: "add it", AutoApprove: []string{"add_item"}})
	for _, b := range bs {
		if b.Kind == blocks.Confirm {
			t.Fatalf("auto_approve did not spare the card: %+v", bs)
		}
	}
	if len(bs) < 3 || bs[len(bs)-1].Meta == nil || bs[len(bs)-1].Meta.Finish != "stop" {
		t.Errorf("blocks %+v", bs)
	}
}
