package assistant_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

// noPrefStore hides any Preferences a store has.
type noPrefStore struct{ store.Store }

// spendRecorder records the spend keys a turn asks about and charges.
type spendRecorder struct {
	mu      sync.Mutex
	allowed []quota.SpendKey
	charged map[quota.SpendKey]int64
}

func (s *spendRecorder) Allow(_ context.Context, key quota.SpendKey, _ quota.SpendCap, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowed = append(s.allowed, key)
	return nil
}

func (s *spendRecorder) Record(_ context.Context, key quota.SpendKey, tokens int64, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.charged == nil {
		s.charged = map[quota.SpendKey]int64{}
	}
	s.charged[key] += tokens
	return nil
}

// twoConns is an Engine with a "fast" connection (the default) and a
// "smart" one, each on its own fake provider.
type twoConns struct {
	*harness
	fast, smart *fake.Provider
	prefs       *memstore.Store // a store.Preferences
}

func ptr[T any](v T) *T { return &v }

func newTwoConns(t *testing.T, mod ...func(*assistant.Config)) *twoConns {
	t.Helper()
	answer := fake.Turn{fake.Text("ok"), fake.Usage(10, 2), fake.Finish(providers.FinishStop)}
	tc := &twoConns{fast: fake.New(), smart: fake.New(), prefs: memstore.New()}
	tc.fast.SetDefault(answer)
	tc.smart.SetDefault(answer)
	tc.harness = newHarness(t, nil, append([]func(*assistant.Config){func(c *assistant.Config) {
		c.Provider = nil
		c.Store = tc.prefs
		c.Connections = []assistant.Connection{
			{Name: "fast", Provider: tc.fast, Model: "small", Models: []string{"small", "tiny"}, MaxOutputTokens: 100,
				Settings: assistant.SettingTemperature | assistant.SettingMaxTokens | assistant.SettingReasoningEffort},
			{Name: "smart", Provider: tc.smart, Model: "big", Models: []string{"big", "huge"},
				Defaults: assistant.Settings{Temperature: ptr(0.1), TopP: ptr(0.5)}},
		}
	}}, mod...)...)
	tc.harness.store = tc.prefs
	return tc
}

// ask runs one turn and returns the connection and model its first meta
// block names, and the request the provider that answered received.
func (tc *twoConns) ask(t *testing.T, u parley.User, req assistant.Request) (conn, model string, got providers.Request) {
	t.Helper()
	if req.Message == "" {
		req.Message = "hello"
	}
	nf, ns := len(tc.fast.Requests()), len(tc.smart.Requests())
	_, bs, err := tc.collect(t, u, req)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	i := slices.IndexFunc(bs, func(b blocks.Block) bool { return b.Kind == blocks.Meta && b.Meta != nil })
	if i < 0 {
		t.Fatal("no meta block")
	}
	conn, model = bs[i].Meta.Connection, bs[i].Meta.Model
	fr, sr := tc.fast.Requests()[nf:], tc.smart.Requests()[ns:]
	switch {
	case len(fr) == 1 && len(sr) == 0 && conn == "fast":
		return conn, model, fr[0]
	case len(sr) == 1 && len(fr) == 0 && conn == "smart":
		return conn, model, sr[0]
	}
	t.Fatalf("meta names %s/%s, but fast got %d calls and smart %d", conn, model, len(fr), len(sr))
	return
}

func (tc *twoConns) prefer(t *testing.T, u parley.User, conn, model string) {
	t.Helper()
	if err := tc.eng.SetModelPreference(context.Background(), u, conn, model); err != nil {
		t.Fatalf("SetModelPreference(%s, %s): %v", conn, model, err)
	}
}

// plant stores p directly, bypassing the Engine's checks, as a preference
// saved before the connections changed would be.
func (tc *twoConns) plant(t *testing.T, p store.ModelPreference) {
	t.Helper()
	if err := tc.prefs.SetModelPreference(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func TestModelPrecedenceRequestThenPreferenceThenDefault(t *testing.T) {
	tc := newTwoConns(t)
	tc.prefer(t, alice, "smart", "huge")
	for _, c := range []struct {
		name            string
		u               parley.User
		model           string
		wantConn, wantM string
	}{
		{"the preference without a requested model", alice, "", "smart", "huge"},
		{"the request over the preference", alice, "fast/tiny", "fast", "tiny"},
		{"a bare model finds its connection", alice, "big", "smart", "big"},
		{"a connection alone takes the preference on it", alice, "smart/", "smart", "huge"},
		{"the default without either", bob, "", "fast", "small"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, model, got := tc.ask(t, c.u, assistant.Request{Model: c.model})
			if conn != c.wantConn || model != c.wantM || got.Model != c.wantM {
				t.Errorf("meta %s/%s, provider model %q; want %s/%s", conn, model, got.Model, c.wantConn, c.wantM)
			}
		})
	}
}

// A model the request names and no connection offers is refused as the
// preference route refuses it, before anything is written or a model is
// called: answering with another model would hide a typo.
func TestModelNoConnectionOffersIsRefused(t *testing.T) {
	tc := newTwoConns(t)
	for _, model := range []string{
		"smart/gpt-unknown",
		"fast/huge", // another connection's model
		"gpt-unknown",
		"nosuchconn/x", // not a connection, nor a model's name
		"nosuchconn/",
	} {
		_, bs, err := tc.collect(t, bob, assistant.Request{Message: "hello", Model: model})
		if assistant.Code(err) != assistant.CodeInvalidRequest || !strings.Contains(err.Error(), "no connection offers the model") {
			t.Errorf("%q: %v (blocks %v), want invalid_request naming the model", model, err, bs)
		}
	}
	if n := len(tc.fast.Requests()) + len(tc.smart.Requests()); n != 0 {
		t.Errorf("%d model calls for refused requests", n)
	}
	if ths, err := tc.eng.Threads(context.Background(), bob, store.ListOptions{}); err != nil || len(ths) != 0 {
		t.Errorf("refused requests left threads %v (%v)", ths, err)
	}
	// A model's name that holds a '/' but names a listed model is found.
	tc2 := newTwoConns(t, func(c *assistant.Config) { c.Connections[1].Models = append(c.Connections[1].Models, "vendor/model") })
	if conn, model, _ := tc2.ask(t, bob, assistant.Request{Model: "vendor/model"}); conn != "smart" || model != "vendor/model" {
		t.Errorf("vendor/model: answered by %s/%s, want smart/vendor/model", conn, model)
	}
}

func TestPreferenceOnAnotherConnectionIsIgnored(t *testing.T) {
	tc := newTwoConns(t)
	tc.prefer(t, alice, "smart", "huge")
	if conn, model, _ := tc.ask(t, alice, assistant.Request{Model: "fast/"}); conn != "fast" || model != "small" {
		t.Errorf("fast/ with a preference on smart: %s/%s, want fast/small", conn, model)
	}
	// A stale preference, for a model the connection no longer offers, is
	// coerced like a request's.
	tc.plant(t, store.ModelPreference{UserID: alice.ID, Connection: "smart", Model: "retired"})
	if conn, model, _ := tc.ask(t, alice, assistant.Request{}); conn != "smart" || model != "big" {
		t.Errorf("stale preference: %s/%s, want smart/big", conn, model)
	}
	tc.plant(t, store.ModelPreference{UserID: alice.ID, Connection: "gone", Model: "huge"})
	if conn, model, _ := tc.ask(t, alice, assistant.Request{}); conn != "fast" || model != "small" {
		t.Errorf("preference on a removed connection: %s/%s, want fast/small", conn, model)
	}
}

func TestSettingsOutsideTheAllowlistNeverReachTheProvider(t *testing.T) {
	tc := newTwoConns(t)
	// smart allows no settings: neither the request's nor its own Defaults pass.
	_, _, got := tc.ask(t, bob, assistant.Request{Model: "smart/", Settings: assistant.Settings{
		Temperature: ptr(0.7), TopP: ptr(0.2), MaxTokens: 50, ReasoningEffort: "high"}})
	if got.Temperature != nil || got.TopP != nil || got.MaxTokens != 0 || got.ReasoningEffort != "" {
		t.Errorf("smart sent temperature %v, top_p %v, max_tokens %d, effort %q: want none", got.Temperature, got.TopP, got.MaxTokens, got.ReasoningEffort)
	}
	// fast allows temperature, max_tokens and reasoning_effort: clamped.
	_, _, got = tc.ask(t, bob, assistant.Request{Settings: assistant.Settings{
		Temperature: ptr(5.0), TopP: ptr(0.2), MaxTokens: 100000, ReasoningEffort: "low"}})
	if got.Temperature == nil || *got.Temperature != 2 || got.TopP != nil || got.MaxTokens != 100 || got.ReasoningEffort != "low" {
		t.Errorf("fast sent temperature %v, top_p %v, max_tokens %d, effort %q: want 2, none, 100 (MaxOutputTokens), low",
			got.Temperature, got.TopP, got.MaxTokens, got.ReasoningEffort)
	}
	_, _, got = tc.ask(t, bob, assistant.Request{Settings: assistant.Settings{Temperature: ptr(0.4), MaxTokens: 30, ReasoningEffort: "extreme"}})
	if got.Temperature == nil || *got.Temperature != 0.4 || got.MaxTokens != 30 || got.ReasoningEffort != "" {
		t.Errorf("fast sent temperature %v, max_tokens %d, effort %q: want 0.4, 30, none (unknown effort)", got.Temperature, got.MaxTokens, got.ReasoningEffort)
	}
	_, _, got = tc.ask(t, bob, assistant.Request{Settings: assistant.Settings{Temperature: ptr(-1.0)}})
	if got.Temperature == nil || *got.Temperature != 0 || got.MaxTokens != 100 {
		t.Errorf("fast sent temperature %v, max_tokens %d: want 0 and the connection's 100", got.Temperature, got.MaxTokens)
	}
}

func TestConnectionDefaultsPassOnlyWhereAllowed(t *testing.T) {
	tc := newTwoConns(t, func(c *assistant.Config) {
		c.Connections[1].Settings = assistant.SettingTopP
	})
	_, _, got := tc.ask(t, bob, assistant.Request{Model: "smart/"})
	if got.TopP == nil || *got.TopP != 0.5 || got.Temperature != nil {
		t.Errorf("smart sent top_p %v, temperature %v: want the default 0.5 and no temperature (not allowed)", got.TopP, got.Temperature)
	}
	_, _, got = tc.ask(t, bob, assistant.Request{Model: "smart/", Settings: assistant.Settings{TopP: ptr(0.8)}})
	if got.TopP == nil || *got.TopP != 0.8 {
		t.Errorf("smart sent top_p %v: want the request's 0.8", got.TopP)
	}
}

func TestEachConnectionHasItsOwnSpendKey(t *testing.T) {
	spend := &spendRecorder{}
	tc := newTwoConns(t, func(c *assistant.Config) {
		c.SpendLedger = spend
		c.SpendCap = quota.SpendCap{Budget: 1000, Window: time.Minute}
	})
	tc.ask(t, bob, assistant.Request{Model: "smart/"})
	tc.ask(t, bob, assistant.Request{})
	tc.ask(t, bob, assistant.Request{})
	waitCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tc.eng.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	spend.mu.Lock()
	defer spend.mu.Unlock()
	smart, fast := quota.SpendKey{Connection: "smart", Principal: bob.ID}, quota.SpendKey{Connection: "fast", Principal: bob.ID}
	if !slices.Equal(spend.allowed, []quota.SpendKey{smart, fast, fast}) {
		t.Errorf("Allow asked about %v", spend.allowed)
	}
	if spend.charged[smart] != 12 || spend.charged[fast] != 24 {
		t.Errorf("charged %v, want smart 12 and fast 24", spend.charged)
	}
}

func TestSingleConnectionConfigKeepsWorking(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok"), fake.Finish(providers.FinishStop)})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Model = "configured"
		c.MaxOutputTokens = 64
	})
	if _, _, err := h.collect(t, bob, assistant.Request{Message: "hi", Model: "other"}); assistant.Code(err) != assistant.CodeInvalidRequest {
		t.Errorf("a model the one connection does not offer: %v, want invalid_request", err)
	}
	_, bs, err := h.collect(t, bob, assistant.Request{Message: "hi", Model: "configured", Settings: assistant.Settings{Temperature: ptr(1.0), MaxTokens: 10}})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Requests()[0]
	if got.Model != "configured" || got.Temperature != nil || got.MaxTokens != 64 {
		t.Errorf("provider got model %q, temperature %v, max_tokens %d: want the configured model and limits, no settings", got.Model, got.Temperature, got.MaxTokens)
	}
	if m := bs[0].Meta; m == nil || m.Connection != "default" || m.Model != "configured" {
		t.Errorf("first meta block %+v: want connection default, model configured", bs[0].Meta)
	}
	ch, err := h.eng.Models(context.Background(), bob)
	if err != nil {
		t.Fatal(err)
	}
	want := assistant.ModelRef{Connection: "default", Model: "configured"}
	if len(ch.Connections) != 1 || !slices.Equal(ch.Connections[0].Models, []string{"configured"}) || ch.Default != want || ch.Current != want {
		t.Errorf("Models = %+v", ch)
	}
}

func TestConnectionsConfigIsValidated(t *testing.T) {
	p := fake.New()
	for _, c := range []struct {
		name  string
		conns []assistant.Connection
		mod   func(*assistant.Config)
	}{
		{"duplicate names", []assistant.Connection{{Name: "a", Provider: p}, {Name: "a", Provider: p}}, nil},
		{"no name", []assistant.Connection{{Provider: p}}, nil},
		{"a slash in the name", []assistant.Connection{{Name: "a/b", Provider: p}}, nil},
		{"no provider", []assistant.Connection{{Name: "a"}}, nil},
		{"default model outside its list", []assistant.Connection{{Name: "a", Provider: p, Model: "x", Models: []string{"y"}}}, nil},
		{"unknown setting", []assistant.Connection{{Name: "a", Provider: p, Settings: 1 << 7}}, nil},
		{"Provider beside Connections", []assistant.Connection{{Name: "a", Provider: p}}, func(c *assistant.Config) { c.Provider = p }},
		{"unknown DefaultConnection", []assistant.Connection{{Name: "a", Provider: p}}, func(c *assistant.Config) { c.DefaultConnection = "b" }},
		{"DefaultConnection without Connections", nil, func(c *assistant.Config) { c.Provider, c.DefaultConnection = p, "a" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := assistant.Config{Store: memstore.New(), Authorizer: assistant.RoleAuthorizer{}, Connections: c.conns}
			if c.mod != nil {
				c.mod(&cfg)
			}
			if _, err := assistant.New(cfg); !errors.Is(err, assistant.ErrInvalidConfig) {
				t.Errorf("New: %v, want ErrInvalidConfig", err)
			}
		})
	}
	cfg := assistant.Config{Store: memstore.New(), Authorizer: assistant.RoleAuthorizer{}, DefaultConnection: "b",
		Connections: []assistant.Connection{{Name: "a", Provider: p}, {Name: "b", Provider: p, Models: []string{"m1", "m2"}}}}
	eng, err := assistant.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := eng.Models(context.Background(), bob)
	if err != nil {
		t.Fatal(err)
	}
	if want := (assistant.ModelRef{Connection: "b", Model: "m1"}); ch.Default != want {
		t.Errorf("Default = %+v, want %+v (DefaultConnection, Models[0])", ch.Default, want)
	}
}

func TestModelsAndPreference(t *testing.T) {
	tc := newTwoConns(t)
	ctx := context.Background()
	ch, err := tc.eng.Models(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	def := assistant.ModelRef{Connection: "fast", Model: "small"}
	if len(ch.Connections) != 2 || ch.Default != def || ch.Current != def || ch.Preference != nil {
		t.Fatalf("Models = %+v", ch)
	}
	fast := ch.Connections[0]
	if fast.Name != "fast" || !slices.Equal(fast.Models, []string{"small", "tiny"}) || fast.MaxOutputTokens != 100 ||
		!slices.Equal(fast.Settings.Names(), []string{"temperature", "max_tokens", "reasoning_effort"}) {
		t.Errorf("fast = %+v", fast)
	}
	for _, c := range []struct{ conn, model string }{{"smart", "tiny"}, {"nowhere", "big"}, {"", "huge"}} {
		if err := tc.eng.SetModelPreference(ctx, alice, c.conn, c.model); assistant.Code(err) != assistant.CodeInvalidRequest {
			t.Errorf("SetModelPreference(%q, %q) = %v, want invalid_request", c.conn, c.model, err)
		}
	}
	tc.prefer(t, alice, "smart", "")
	ch, _ = tc.eng.Models(ctx, alice)
	if want := (assistant.ModelRef{Connection: "smart", Model: "big"}); ch.Current != want || ch.Preference == nil || *ch.Preference != want {
		t.Errorf("after choosing smart: %+v", ch)
	}
	if ch, _ := tc.eng.Models(ctx, bob); ch.Preference != nil || ch.Current != def {
		t.Errorf("bob sees %+v: another user's preference", ch)
	}
	tc.prefer(t, alice, "", "")
	if ch, _ := tc.eng.Models(ctx, alice); ch.Preference != nil || ch.Current != def {
		t.Errorf("after clearing: %+v", ch)
	}
	if err := tc.eng.SetModelPreference(ctx, parley.User{}, "fast", "tiny"); assistant.Code(err) != assistant.CodeUnauthenticated {
		t.Errorf("no user: %v", err)
	}
}

func TestSetModelPreferenceWithoutStoreSupportIsUnsupported(t *testing.T) {
	tc := newTwoConns(t, func(c *assistant.Config) { c.Store = noPrefStore{memstore.New()} })
	err := tc.eng.SetModelPreference(context.Background(), alice, "smart", "big")
	if !errors.Is(err, errors.ErrUnsupported) || assistant.Code(err) != assistant.CodeUnsupported {
		t.Errorf("err = %v, want ErrUnsupported / CodeUnsupported", err)
	}
	ch, err := tc.eng.Models(context.Background(), alice)
	if err != nil || ch.Preference != nil || ch.Current.Connection != "fast" {
		t.Errorf("Models = %+v, %v", ch, err)
	}
}

// Each connection's prompt is calibrated for its own model family: one
// Engine may mix an Anthropic and a generic OpenAI-compatible connection.
func TestEachConnectionCalibratesForItsModelFamily(t *testing.T) {
	tc := newTwoConns(t, func(c *assistant.Config) {
		c.Connections[1].ModelFamily = assistant.ModelFamilyAnthropic
	})
	const note = "## Reading these instructions"
	if _, _, got := tc.ask(t, alice, assistant.Request{Message: "hi", Model: "fast/"}); strings.Contains(got.System, note) {
		t.Error("the generic connection's prompt has the calibration note")
	}
	if _, _, got := tc.ask(t, alice, assistant.Request{Message: "hi", Model: "smart/"}); !strings.Contains(got.System, note) {
		t.Error("the anthropic connection's prompt lacks the calibration note")
	}
	_, err := assistant.New(assistant.Config{Store: tc.prefs, Authorizer: assistant.RoleAuthorizer{},
		Connections: []assistant.Connection{{Name: "x", Provider: tc.fast, ModelFamily: "gpt"}}})
	if !errors.Is(err, assistant.ErrInvalidConfig) || !strings.Contains(err.Error(), `unknown ModelFamily "gpt"`) {
		t.Errorf("err = %v, want ErrInvalidConfig naming the unknown family", err)
	}
}
