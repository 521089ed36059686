package assistant

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
)

// Connection is one named model endpoint an Engine may answer with: a
// provider, the models users may pick on it, and the completion settings a
// request may change. See Config.Connections.
type Connection struct {
	// Name identifies the connection in requests ("name/model"), in stored
	// preferences and in spend keys (quota.SpendKey.Connection). Required,
	// unique, without '/'.
	Name     string
	Provider providers.Provider // required
	// Model is the default model, used when a request names none and the
	// user has no preference on this connection, and the one a stored
	// preference outside Models is coerced to. "": Models[0], or the provider's
	// default when Models is empty too.
	Model string
	// Models are the models a user may pick on this connection; Model must
	// be one of them. Empty: Model only.
	Models []string
	// ContextWindow and MaxOutputTokens are as in Config; zero takes
	// Config's value (its default, for ContextWindow).
	ContextWindow   int
	MaxOutputTokens int
	// ModelFamily declares the family of this connection's models, as
	// Config.ModelFamily does for the Engine ("": Config.ModelFamily): one
	// Engine may mix, say, an Anthropic and an OpenAI-compatible
	// connection, and each turn's prompt is calibrated for its own.
	ModelFamily string
	// TopicModel is the model of the topic filter's call (see
	// Config.TopicScope) on this connection; "": the turn's model. It
	// need not be one of Models: users cannot pick it.
	TopicModel string
	// Settings lists the completion settings that may reach the provider
	// on this connection, from a request or from Defaults; any other is
	// dropped. Zero: none. Of these, only those the Provider honours (all,
	// unless it is a providers.SettingsProvider saying otherwise) are kept,
	// and advertised by Engine.Models.
	Settings SettingSet
	// Defaults are this connection's completion settings when a request
	// leaves them unset. Like a request's, only those in Settings pass.
	Defaults Settings
}

// Settings are completion settings: a request may set them
// (Request.Settings) and a connection may default them
// (Connection.Defaults). A zero field is unset, leaving the provider's
// default. Only the settings in the connection's allowlist
// (Connection.Settings) reach the provider, clamped to sane ranges:
// Temperature to 0–2, TopP to 0–1, MaxTokens to 1 through the
// connection's MaxOutputTokens (Config.MaxTurnOutputTokens when that is
// 0); ReasoningEffort must be one of none, minimal, low, medium, high,
// xhigh, max. Values that are not numbers, and unknown efforts, are
// dropped.
type Settings struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"top_p,omitempty"`
	MaxTokens       int      `json:"max_tokens,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
}

// SettingSet is an allowlist of completion settings: a union of the
// Setting constants.
type SettingSet uint8

// The completion settings, for Connection.Settings.
const (
	SettingTemperature SettingSet = 1 << iota
	SettingTopP
	SettingMaxTokens
	SettingReasoningEffort

	AllSettings = SettingTemperature | SettingTopP | SettingMaxTokens | SettingReasoningEffort
)

var settingNames = [...]struct {
	s    SettingSet
	name string
}{
	{SettingTemperature, "temperature"}, {SettingTopP, "top_p"}, {SettingMaxTokens, "max_tokens"}, {SettingReasoningEffort, "reasoning_effort"},
}

// Has reports whether every setting of x is in s.
func (s SettingSet) Has(x SettingSet) bool { return s&x == x }

// Names returns the settings in s by their wire names (temperature, top_p,
// max_tokens, reasoning_effort), in that order.
func (s SettingSet) Names() []string {
	var out []string
	for _, n := range settingNames {
		if s.Has(n.s) {
			out = append(out, n.name)
		}
	}
	return out
}

// honoured is the settings p sends on: all, unless it names them
// (providers.SettingsProvider).
func honoured(p providers.Provider) SettingSet {
	sp, ok := p.(providers.SettingsProvider)
	if !ok {
		return AllSettings
	}
	var s SettingSet
	for _, name := range sp.Settings() {
		for _, n := range settingNames {
			if n.name == name {
				s |= n.s
			}
		}
	}
	return s
}

// reasoningEfforts are the efforts a request may ask for.
var reasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// ModelRef names a model on a connection.
type ModelRef struct {
	Connection string
	Model      string
}

// ConnectionInfo describes a connection to a user choosing a model: nothing
// in it is secret.
type ConnectionInfo struct {
	Name            string
	Model           string   // the default
	Models          []string // the models a user may pick, the default first
	ContextWindow   int
	MaxOutputTokens int        // 0: the provider's default
	Settings        SettingSet // what a request may set
}

// ModelChoices is what a user may pick from (Engine.Models).
type ModelChoices struct {
	Connections []ConnectionInfo // in Config order
	Default     ModelRef         // what a request naming no model uses without a preference
	// Current is what a request naming no model uses for this user now:
	// the stored preference (coerced as a request's model is) or Default.
	Current ModelRef
	// Preference is the user's stored choice as stored, nil if none (or the
	// store keeps none); it may name a model no longer offered.
	Preference *ModelRef
}

// connTable is the Engine's connections, normalized at New: every
// Connection has its name, default model and limits filled in.
type connTable struct {
	conns []Connection
	def   int // index of the default connection
}

// connections returns cfg's connection table: Config.Connections, or the
// one connection the single-connection fields describe.
func (c *Config) connections() connTable {
	if len(c.Connections) == 0 {
		return connTable{conns: []Connection{{
			Name: c.Connection, Provider: c.Provider, Model: c.Model,
			ContextWindow: c.ContextWindow, MaxOutputTokens: c.MaxOutputTokens, ModelFamily: c.ModelFamily,
			TopicModel: c.TopicModel,
		}}}
	}
	t := connTable{conns: make([]Connection, len(c.Connections))}
	for i, cn := range c.Connections {
		if cn.Model == "" && len(cn.Models) > 0 {
			cn.Model = cn.Models[0]
		}
		// The default first, then the others as listed, once each.
		models := []string{cn.Model}
		for _, m := range cn.Models {
			if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		cn.Models = models
		cn.Settings &= honoured(cn.Provider)
		cn.ContextWindow = positiveOr(cn.ContextWindow, c.ContextWindow)
		if cn.MaxOutputTokens == 0 {
			cn.MaxOutputTokens = c.MaxOutputTokens
		}
		if cn.ModelFamily == "" {
			cn.ModelFamily = c.ModelFamily
		}
		t.conns[i] = cn
		if cn.Name == c.DefaultConnection {
			t.def = i
		}
	}
	return t
}

// validateConnections checks Config.Connections and how they sit with the
// single-connection fields.
func (c *Config) validateConnections() []error {
	if len(c.Connections) == 0 {
		if c.DefaultConnection != "" {
			return []error{errors.New("DefaultConnection needs Connections")}
		}
		if c.Provider == nil {
			return []error{errors.New("Provider is required")}
		}
		return nil
	}
	var errs []error
	if c.Provider != nil || c.Model != "" || c.Connection != "" {
		errs = append(errs, errors.New("set Provider, Model and Connection, or Connections, not both"))
	}
	if c.TopicModel != "" {
		errs = append(errs, errors.New("with Connections, set each Connection's TopicModel, not Config.TopicModel"))
	}
	seen := map[string]bool{}
	for i, cn := range c.Connections {
		switch {
		case cn.Name == "":
			errs = append(errs, fmt.Errorf("Connections[%d] has no Name", i))
		case strings.Contains(cn.Name, "/"):
			errs = append(errs, fmt.Errorf("connection %q: a name must not contain '/'", cn.Name))
		case seen[cn.Name]:
			errs = append(errs, fmt.Errorf("connection %q is listed twice", cn.Name))
		}
		seen[cn.Name] = true
		if cn.Provider == nil {
			errs = append(errs, fmt.Errorf("connection %q has no Provider", cn.Name))
		}
		if cn.Model != "" && len(cn.Models) > 0 && !slices.Contains(cn.Models, cn.Model) {
			errs = append(errs, fmt.Errorf("connection %q: the default model %q is not in its Models", cn.Name, cn.Model))
		}
		if slices.Contains(cn.Models, "") {
			errs = append(errs, fmt.Errorf("connection %q: Models has an empty name", cn.Name))
		}
		if cn.ContextWindow < 0 || cn.MaxOutputTokens < 0 {
			errs = append(errs, fmt.Errorf("connection %q: limits must not be negative", cn.Name))
		}
		if !knownFamily(cn.ModelFamily) {
			errs = append(errs, fmt.Errorf("connection %q: unknown ModelFamily %q", cn.Name, cn.ModelFamily))
		}
		if cn.Settings&^AllSettings != 0 {
			errs = append(errs, fmt.Errorf("connection %q: unknown settings %#x", cn.Name, uint8(cn.Settings&^AllSettings)))
		}
	}
	if c.DefaultConnection != "" && !seen[c.DefaultConnection] {
		errs = append(errs, fmt.Errorf("DefaultConnection %q is not one of Connections", c.DefaultConnection))
	}
	return errs
}

// find returns the index of the connection named name, or -1.
func (t *connTable) find(name string) int {
	return slices.IndexFunc(t.conns, func(c Connection) bool { return c.Name == name })
}

// allows reports whether model may be used on connection i.
func (t *connTable) allows(i int, model string) bool {
	c := &t.conns[i]
	return model == c.Model || slices.Contains(c.Models, model)
}

// choose picks the connection and model of a turn. requested is the
// request's Model: "connection/model", "connection/" or a model's name;
// pref is the user's stored choice, or nil.
//
// The connection is the one requested (by name, or as the default or else
// first connection allowing a named model), else the preference's, else
// the default. The model is the one requested, else the preference's if it
// is on the same connection, else the connection's default. ok is false
// when the request names a model no connection offers: the caller refuses
// it, since answering with another model than the one asked for would
// hide a typo or a retired name. A stored preference the connections no
// longer offer is coerced to the connection's default instead: the user
// did not ask for it in this request, and it may predate a config change.
func (t *connTable) choose(requested string, pref *store.ModelPreference) (ci int, model string, ok bool) {
	ci = -1
	if name, m, found := strings.Cut(requested, "/"); found {
		if i := t.find(name); i >= 0 && (m == "" || t.allows(i, m)) {
			ci, model = i, m
		}
	}
	if ci < 0 && requested != "" {
		// A model's name, which may itself hold a '/' (OpenRouter's
		// "vendor/model"): the default connection if it allows it, else
		// the first that does, else nothing offers it.
		ci, model = t.def, requested
		if !t.allows(ci, requested) {
			ci = slices.IndexFunc(t.conns, func(c Connection) bool { return slices.Contains(c.Models, requested) })
			if ci < 0 {
				return -1, "", false
			}
		}
	}
	if pref != nil {
		if pi := t.find(pref.Connection); pi >= 0 {
			if ci < 0 {
				ci = pi
			}
			if model == "" && ci == pi {
				model = pref.Model
			}
		}
	}
	if ci < 0 {
		ci = t.def
	}
	if model == "" || !t.allows(ci, model) {
		model = t.conns[ci].Model // a stale preference; a request's is allowed by now
	}
	return ci, model, true
}

// settings merges a request's settings over the connection's defaults,
// drops what the connection does not allow and clamps the rest.
// maxTokens bounds MaxTokens when the connection sets no MaxOutputTokens.
func (c *Connection) settings(req Settings, maxTokens int) Settings {
	s := c.Defaults
	if req.Temperature != nil {
		s.Temperature = req.Temperature
	}
	if req.TopP != nil {
		s.TopP = req.TopP
	}
	if req.MaxTokens != 0 {
		s.MaxTokens = req.MaxTokens
	}
	if req.ReasoningEffort != "" {
		s.ReasoningEffort = req.ReasoningEffort
	}
	var out Settings
	if c.Settings.Has(SettingTemperature) {
		out.Temperature = clampFloat(s.Temperature, 2)
	}
	if c.Settings.Has(SettingTopP) {
		out.TopP = clampFloat(s.TopP, 1)
	}
	if c.Settings.Has(SettingMaxTokens) && s.MaxTokens > 0 {
		if c.MaxOutputTokens > 0 {
			maxTokens = c.MaxOutputTokens
		}
		out.MaxTokens = min(s.MaxTokens, maxTokens)
	}
	if c.Settings.Has(SettingReasoningEffort) && slices.Contains(reasoningEfforts, s.ReasoningEffort) {
		out.ReasoningEffort = s.ReasoningEffort
	}
	return out
}

// clampFloat copies *v into [0, hi]; nil for nil or not a number.
func clampFloat(v *float64, hi float64) *float64 {
	if v == nil || math.IsNaN(*v) {
		return nil
	}
	x := min(max(*v, 0), hi)
	return &x
}

// connFor resolves the connection, model and settings of a turn, once, at
// admission: the request's model, else u's stored preference (on the same
// connection only), else the default. A preference that cannot be read
// is logged and passed over: the turn is answered by the default. A
// request naming a model no connection offers is CodeInvalidRequest, as
// SetModelPreference refuses it.
func (e *Engine) connFor(ctx context.Context, u parley.User, req Request) (*conn, error) {
	var pref *store.ModelPreference
	if name, m, _ := strings.Cut(req.Model, "/"); req.Model == "" || m == "" && e.conns.find(name) >= 0 {
		pref = e.preference(ctx, u)
	}
	ci, model, ok := e.conns.choose(req.Model, pref)
	if !ok {
		return nil, invalidRequest("stream", unknownModel(req.Model))
	}
	cn := &e.conns.conns[ci]
	s := cn.settings(req.Settings, e.cfg.MaxTurnOutputTokens)
	c := &e.cfg
	out := cmp0(s.MaxTokens, cn.MaxOutputTokens)
	return &conn{name: cn.Name, provider: cn.Provider, model: model, topicModel: cn.TopicModel, maxOutput: out,
		temperature: s.Temperature, topP: s.TopP, effort: s.ReasoningEffort,
		window: cn.ContextWindow, family: cn.ModelFamily, drain: c.DrainTimeout, maxTurnTokens: c.MaxTurnOutputTokens, maxTurnBytes: c.MaxTurnOutputBytes,
		retries: c.ModelRetries, retryWait: c.ModelRetryWait, idle: c.ModelIdleTimeout, tel: e.tel}, nil
}

// unknownModel says that no connection offers model, naming it when it is
// short enough to read: it is the caller's own input, quoted.
func unknownModel(model string) string {
	if len(model) > 100 {
		return "no connection offers the model the request names"
	}
	return fmt.Sprintf("no connection offers the model %q", model)
}

// cmp0 returns a unless it is zero, then b.
func cmp0(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// preference reads u's stored model choice; nil if the store keeps none,
// there is none, or it cannot be read (logged).
func (e *Engine) preference(ctx context.Context, u parley.User) *store.ModelPreference {
	ps, ok := e.cfg.Store.(store.Preferences)
	if !ok {
		return nil
	}
	p, err := ps.ModelPreference(ctx, u.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			e.cfg.Logger.ErrorContext(ctx, "assistant: read model preference; using the default", "user", u.ID, "err", err)
		}
		return nil
	}
	return &p
}

// Models lists what u may pick: every connection with its models and the
// settings a request may set, the default, u's stored preference and what
// a request naming no model would use now. CodeForbidden unless the
// Authorizer allows UseAssistant; CodeInternal if the preference cannot be
// read.
func (e *Engine) Models(ctx context.Context, u parley.User) (ModelChoices, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return ModelChoices{}, err
	}
	var out ModelChoices
	for _, c := range e.conns.conns {
		models := c.Models
		if len(models) == 0 {
			models = []string{c.Model}
		}
		out.Connections = append(out.Connections, ConnectionInfo{Name: c.Name, Model: c.Model, Models: slices.Clone(models),
			ContextWindow: c.ContextWindow, MaxOutputTokens: c.MaxOutputTokens, Settings: c.Settings})
	}
	def := &e.conns.conns[e.conns.def]
	out.Default = ModelRef{Connection: def.Name, Model: def.Model}
	var pref *store.ModelPreference
	if ps, ok := e.cfg.Store.(store.Preferences); ok {
		p, err := ps.ModelPreference(ctx, u.ID)
		switch {
		case err == nil:
			pref = &p
			out.Preference = &ModelRef{Connection: p.Connection, Model: p.Model}
		case !errors.Is(err, store.ErrNotFound):
			return ModelChoices{}, wrap(CodeInternal, "read model preference", err)
		}
	}
	ci, model, _ := e.conns.choose("", pref)
	out.Current = ModelRef{Connection: e.conns.conns[ci].Name, Model: model}
	return out, nil
}

// SetModelPreference stores u's model choice, which later requests naming
// no model use (see Request.Model). connection "" is the default
// connection; model "" is the connection's default. Both "" clears the
// choice. As for a request's model, a choice the connection does not
// offer is refused: CodeInvalidRequest, as is an
// unknown connection. CodeUnsupported (errors.ErrUnsupported) if the Store
// does not implement store.Preferences; CodeForbidden unless the
// Authorizer allows UseAssistant.
func (e *Engine) SetModelPreference(ctx context.Context, u parley.User, connection, model string) error {
	const op = "set model preference"
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return err
	}
	ps, ok := e.cfg.Store.(store.Preferences)
	if !ok {
		return wrap(CodeUnsupported, op, fmt.Errorf("the Store keeps no preferences: %w", errors.ErrUnsupported))
	}
	if connection == "" && model == "" {
		if err := ps.ClearModelPreference(ctx, u.ID); err != nil {
			return wrap(CodeInternal, op, err)
		}
		return nil
	}
	ci := e.conns.def
	if connection != "" {
		if ci = e.conns.find(connection); ci < 0 {
			return invalidRequest(op, "no such connection")
		}
	}
	cn := &e.conns.conns[ci]
	if model == "" {
		model = cn.Model
	}
	if model == "" {
		return invalidRequest(op, "the connection has no model to choose")
	}
	if !e.conns.allows(ci, model) {
		return invalidRequest(op, "the connection does not offer that model")
	}
	err := ps.SetModelPreference(ctx, store.ModelPreference{UserID: u.ID, Connection: cn.Name, Model: model})
	switch {
	case errors.Is(err, store.ErrInvalid):
		return wrap(CodeInvalidRequest, op, err)
	case err != nil:
		return wrap(CodeInternal, op, err)
	}
	return nil
}
