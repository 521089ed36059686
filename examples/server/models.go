package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
	"github.com/parleyhq/parley/providers/openai"
)

// The model settings: an OpenAI-compatible connection (PARLEY_LLM_*), an
// Anthropic one (PARLEY_ANTHROPIC_*), both, or neither and the demo model.

// defaultOpenAIModel is PARLEY_LLM_MODEL's default for the generic and
// openai presets; the others name models no default could guess.
const defaultOpenAIModel = "gpt-4o-mini"

// defaultAnthropicModel is PARLEY_ANTHROPIC_MODEL's default (the SDK's
// ModelClaudeSonnet5_5).
const defaultAnthropicModel = "claude-sonnet-5-5"

// llmPresets are the values of PARLEY_LLM_PRESET, each the providers/openai
// preset it stands for, given PARLEY_LLM_MODEL. PARLEY_LLM_API_KEY and
// PARLEY_LLM_BASE_URL, when set, replace the preset's key and base URL.
var llmPresets = map[string]func(model string) openai.Config{
	"openai":     func(model string) openai.Config { return openai.OpenAIConfig(model, "") },
	"azure":      func(model string) openai.Config { return openai.Config{Model: model} }, // the base URL is the resource's: PARLEY_LLM_BASE_URL
	"vllm":       openai.VLLMConfig,
	"ollama":     openai.OllamaConfig,
	"openrouter": func(model string) openai.Config { return openai.OpenRouterConfig(model, "") },
	"lmstudio":   openai.LMStudioConfig,
}

// llmSettings are PARLEY_LLM_*: an OpenAI-compatible connection, used when
// a preset or a base URL is set.
type llmSettings struct {
	Preset  string // a key of llmPresets; "": a generic OpenAI-compatible server at BaseURL
	BaseURL string // overrides the preset's
	APIKey  secret
	Model   string   // the default model
	Models  []string // the models a user may pick, Model among them; empty: Model only
}

func (l llmSettings) enabled() bool { return l.Preset != "" || l.BaseURL != "" }

// connection is the connection's name: the preset's, or "openai" for a
// generic OpenAI-compatible server.
func (l llmSettings) connection() string {
	if l.Preset != "" {
		return l.Preset
	}
	return "openai"
}

// anthropicSettings are PARLEY_ANTHROPIC_*: a connection to Anthropic's
// Messages API, used when a key or a base URL is set.
type anthropicSettings struct {
	APIKey  secret // from PARLEY_ANTHROPIC_API_KEY or the file PARLEY_ANTHROPIC_API_KEY_FILE names
	BaseURL string // "": Anthropic's; a proxy or gateway
	Model   string
	Models  []string
}

func (a anthropicSettings) enabled() bool { return a.APIKey != "" || a.BaseURL != "" }

// secret is a credential: it prints, logs and marshals as [redacted], so a
// settings value can be shown without its keys.
type secret string

func (secret) String() string               { return "[redacted]" }
func (secret) GoString() string             { return `"[redacted]"` }
func (secret) LogValue() slog.Value         { return slog.StringValue("[redacted]") }
func (secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// readLLMSettings reads PARLEY_LLM_PRESET, _BASE_URL, _API_KEY, _MODEL and
// _MODELS.
func readLLMSettings() (llmSettings, error) {
	l := llmSettings{BaseURL: os.Getenv("PARLEY_LLM_BASE_URL"), APIKey: secret(os.Getenv("PARLEY_LLM_API_KEY"))}
	switch p := os.Getenv("PARLEY_LLM_PRESET"); {
	case p == "" || p == "generic":
	case llmPresets[p] != nil:
		l.Preset = p
	default:
		return l, fmt.Errorf("PARLEY_LLM_PRESET=%q: want openai, azure, vllm, ollama, openrouter, lmstudio or generic (the default)", p)
	}
	if l.BaseURL != "" {
		if err := checkBaseURL("PARLEY_LLM_BASE_URL", l.BaseURL); err != nil {
			return l, err
		}
	}
	var err error
	l.Model, l.Models, err = readModels("PARLEY_LLM")
	if err != nil || !l.enabled() {
		return l, err
	}
	if l.Model == "" {
		if l.Preset != "" && l.Preset != "openai" {
			return l, fmt.Errorf("PARLEY_LLM_PRESET=%s: want PARLEY_LLM_MODEL, the model (or deployment) to use", l.Preset)
		}
		l.Model = defaultOpenAIModel
	}
	if l.Preset == "azure" && l.BaseURL == "" {
		return l, errors.New("PARLEY_LLM_PRESET=azure: want PARLEY_LLM_BASE_URL, the resource's endpoint, https://RESOURCE.openai.azure.com/openai/v1")
	}
	return l, nil
}

// readAnthropicSettings reads PARLEY_ANTHROPIC_API_KEY or _API_KEY_FILE,
// _BASE_URL, _MODEL and _MODELS. A key file anyone but its owner may read
// is refused.
func readAnthropicSettings() (anthropicSettings, error) {
	a := anthropicSettings{APIKey: secret(os.Getenv("PARLEY_ANTHROPIC_API_KEY")), BaseURL: os.Getenv("PARLEY_ANTHROPIC_BASE_URL")}
	if a.BaseURL != "" {
		if err := checkBaseURL("PARLEY_ANTHROPIC_BASE_URL", a.BaseURL); err != nil {
			return a, err
		}
	}
	if path := os.Getenv("PARLEY_ANTHROPIC_API_KEY_FILE"); path != "" {
		if a.APIKey != "" {
			return a, errors.New("PARLEY_ANTHROPIC_API_KEY and PARLEY_ANTHROPIC_API_KEY_FILE are both set: want one of them")
		}
		key, err := anthropic.KeyFromFile(path)
		switch {
		case errors.Is(err, anthropic.ErrKeyFilePermissions):
			mode := "another mode"
			if fi, err := os.Stat(path); err == nil {
				mode = fmt.Sprintf("mode %#o", fi.Mode().Perm())
			}
			return a, fmt.Errorf("PARLEY_ANTHROPIC_API_KEY_FILE=%s has %s: want mode 0600 or 0400, readable by its owner only (chmod 600 %s)", path, mode, path)
		case errors.Is(err, anthropic.ErrKeyFileEmpty):
			return a, fmt.Errorf("PARLEY_ANTHROPIC_API_KEY_FILE=%s is empty: want a file holding the API key", path)
		case errors.Is(err, anthropic.ErrKeyFileNotRegular):
			// Stat before any open: a FIFO here would block start-up.
			return a, fmt.Errorf("PARLEY_ANTHROPIC_API_KEY_FILE=%s is not a regular file (%v): want a file holding the API key, or PARLEY_ANTHROPIC_API_KEY", path, err)
		case errors.Is(err, fs.ErrNotExist):
			return a, fmt.Errorf("PARLEY_ANTHROPIC_API_KEY_FILE=%s does not exist: want a file holding the API key", path)
		case err != nil:
			// KeyFromFile's errors never hold the file's content.
			return a, fmt.Errorf("PARLEY_ANTHROPIC_API_KEY_FILE=%s: want a file holding the API key: %w", path, err)
		}
		a.APIKey = secret(key)
	}
	var err error
	a.Model, a.Models, err = readModels("PARLEY_ANTHROPIC")
	if a.Model == "" {
		a.Model = defaultAnthropicModel
	}
	return a, err
}

// readModels reads prefix_MODEL, the default model, and prefix_MODELS, a
// comma-separated list of the models a user may pick. Without _MODEL the
// list's first is the default; with both, the default must be listed.
func readModels(prefix string) (model string, models []string, err error) {
	model = os.Getenv(prefix + "_MODEL")
	v := os.Getenv(prefix + "_MODELS")
	if v == "" {
		return model, nil, nil
	}
	for m := range strings.SplitSeq(v, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			return "", nil, fmt.Errorf("%s_MODELS=%q: want model names separated by commas", prefix, v)
		}
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	if model == "" {
		model = models[0]
	} else if !slices.Contains(models, model) {
		return "", nil, fmt.Errorf("%s_MODELS=%q: want a list that includes %s_MODEL (%s)", prefix, v, prefix, model)
	}
	return model, models, nil
}

// models is what the Engine answers with: named connections, or else one
// provider (the demo model, or a test's).
type models struct {
	connections []assistant.Connection
	provider    providers.Provider
}

// newModels is the connections the settings configure, the
// OpenAI-compatible one first and the default; with none, the built-in
// demo model. It logs which, never a key.
func newModels(s settings, log *slog.Logger) models {
	var conns []assistant.Connection
	if l := s.LLM; l.enabled() {
		cfg := openai.Config{Model: l.Model}
		if p := llmPresets[l.Preset]; p != nil {
			cfg = p(l.Model)
		}
		if l.BaseURL != "" {
			cfg.BaseURL = l.BaseURL
		}
		// No retries in the provider: the Engine retries a failed call
		// (Config.ModelRetries, within ModelRetryWait, showing the user
		// that it waits). Two layers would multiply the calls.
		cfg.APIKey = string(l.APIKey)
		log.Info("using an OpenAI-compatible model", "connection", l.connection(), "preset", l.Preset,
			"base_url", cmp.Or(cfg.BaseURL, openai.OpenAIBaseURL), "model", l.Model, "models", l.Models)
		p := checkedProvider{Provider: openai.New(cfg), connection: l.connection(), log: log,
			keyVars:   "PARLEY_LLM_API_KEY",
			modelVars: "PARLEY_LLM_MODEL (and PARLEY_LLM_MODELS) against the server's models, and PARLEY_LLM_BASE_URL's path (often ending in /v1)"}
		conns = append(conns, assistant.Connection{Name: l.connection(), Provider: p, Model: l.Model, Models: l.Models})
	}
	if a := s.Anthropic; a.enabled() {
		log.Info("using Anthropic", "connection", "anthropic", "base_url", cmp.Or(a.BaseURL, anthropic.DefaultBaseURL), "model", a.Model, "models", a.Models)
		p := checkedProvider{Provider: anthropic.New(anthropic.Config{BaseURL: a.BaseURL, APIKey: string(a.APIKey), Model: a.Model}),
			connection: "anthropic", log: log,
			keyVars:   "PARLEY_ANTHROPIC_API_KEY or the file PARLEY_ANTHROPIC_API_KEY_FILE names",
			modelVars: "PARLEY_ANTHROPIC_MODEL (and PARLEY_ANTHROPIC_MODELS), and PARLEY_ANTHROPIC_BASE_URL"}
		conns = append(conns, assistant.Connection{Name: "anthropic", Provider: p, Model: a.Model, Models: a.Models,
			ModelFamily: assistant.ModelFamilyAnthropic})
	}
	if len(conns) == 0 {
		log.Info("using the built-in demo model; set PARLEY_LLM_BASE_URL, PARLEY_LLM_PRESET or PARLEY_ANTHROPIC_API_KEY for a real one")
		return models{provider: demoModel{delay: s.DemoDelay}}
	}
	return models{connections: conns}
}
