package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// modelEnv are the variables the model settings read; clearEnv unsets
// them for the test, so the machine's own do not leak in.
var modelEnv = []string{
	"PARLEY_LLM_PRESET", "PARLEY_LLM_BASE_URL", "PARLEY_LLM_API_KEY", "PARLEY_LLM_MODEL", "PARLEY_LLM_MODELS",
	"PARLEY_ANTHROPIC_API_KEY", "PARLEY_ANTHROPIC_API_KEY_FILE", "PARLEY_ANTHROPIC_BASE_URL", "PARLEY_ANTHROPIC_MODEL", "PARLEY_ANTHROPIC_MODELS",
}

func clearModelEnv(t *testing.T) {
	t.Helper()
	for _, k := range modelEnv {
		t.Setenv(k, "")
	}
}

// testKey is an API key the tests write to files; no real one.
const testKey = "sk-ant-test-0123456789"

// keyFile writes testKey to a file with mode perm and returns its path.
func keyFile(t *testing.T, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anthropic.key")
	if err := os.WriteFile(path, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func TestSettingsWithNoModelConfiguredUseTheDemoModel(t *testing.T) {
	clearModelEnv(t)
	s, err := settingsFromEnv()
	if err != nil || s.LLM.enabled() || s.Anthropic.enabled() {
		t.Fatalf("no model variables: %+v %+v %v, want neither connection", s.LLM, s.Anthropic, err)
	}
	m := newModels(s, slog.New(slog.DiscardHandler))
	if _, ok := m.provider.(demoModel); !ok || m.connections != nil {
		t.Errorf("no model variables: %+v, want the demo model alone", m)
	}
}

func TestSettingsRefuseAnAnthropicKeyFileOthersCanRead(t *testing.T) {
	for _, perm := range []os.FileMode{0o644, 0o640, 0o604, 0o666, 0o700} {
		t.Run(fmt.Sprintf("%#o", perm), func(t *testing.T) {
			clearModelEnv(t)
			path := keyFile(t, perm)
			t.Setenv("PARLEY_ANTHROPIC_API_KEY_FILE", path)
			_, err := settingsFromEnv()
			if err == nil {
				t.Fatalf("a key file with mode %#o was accepted", perm)
			}
			msg := err.Error()
			for _, want := range []string{"PARLEY_ANTHROPIC_API_KEY_FILE=" + path, fmt.Sprintf("mode %#o", perm), "0600 or 0400"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, testKey) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line without the key", msg)
			}
		})
	}
}

func TestSettingsReadAnAnthropicKeyFileOnlyItsOwnerCanRead(t *testing.T) {
	for _, perm := range []os.FileMode{0o600, 0o400} {
		t.Run(fmt.Sprintf("%#o", perm), func(t *testing.T) {
			clearModelEnv(t)
			t.Setenv("PARLEY_ANTHROPIC_API_KEY_FILE", keyFile(t, perm))
			s, err := settingsFromEnv()
			if err != nil || string(s.Anthropic.APIKey) != testKey || s.Anthropic.Model != defaultAnthropicModel {
				t.Fatalf("mode %#o: key read %v, model %q, %v; want the trimmed key and the default model", perm, string(s.Anthropic.APIKey) == testKey, s.Anthropic.Model, err)
			}
			if got := fmt.Sprintf("%v %+v %#v", s, s, s); strings.Contains(got, testKey) {
				t.Errorf("the settings print the key: %s", got)
			}
		})
	}
}

func TestSettingsRefuseBadModelVariables(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string // in the error
	}{
		"both an Anthropic key and a key file": {
			env:  map[string]string{"PARLEY_ANTHROPIC_API_KEY": testKey, "PARLEY_ANTHROPIC_API_KEY_FILE": "/nonexistent"},
			want: []string{"PARLEY_ANTHROPIC_API_KEY and PARLEY_ANTHROPIC_API_KEY_FILE", "one of them"},
		},
		"a key file that is not there": {
			env:  map[string]string{"PARLEY_ANTHROPIC_API_KEY_FILE": "/nonexistent/key"},
			want: []string{"PARLEY_ANTHROPIC_API_KEY_FILE=/nonexistent/key does not exist"},
		},
		"an unknown preset": {
			env:  map[string]string{"PARLEY_LLM_PRESET": "Ollama"},
			want: []string{`PARLEY_LLM_PRESET="Ollama"`, "want openai, azure, vllm, ollama, openrouter, lmstudio or generic"},
		},
		"a local preset without a model": {
			env:  map[string]string{"PARLEY_LLM_PRESET": "ollama"},
			want: []string{"PARLEY_LLM_PRESET=ollama", "want PARLEY_LLM_MODEL"},
		},
		"azure without its endpoint": {
			env:  map[string]string{"PARLEY_LLM_PRESET": "azure", "PARLEY_LLM_MODEL": "my-deployment"},
			want: []string{"PARLEY_LLM_PRESET=azure", "want PARLEY_LLM_BASE_URL"},
		},
		"a model list without the model": {
			env:  map[string]string{"PARLEY_LLM_BASE_URL": "http://127.0.0.1:1/v1", "PARLEY_LLM_MODEL": "a", "PARLEY_LLM_MODELS": "b,c"},
			want: []string{`PARLEY_LLM_MODELS="b,c"`, "includes PARLEY_LLM_MODEL (a)"},
		},
		"a model list with an empty name": {
			env:  map[string]string{"PARLEY_ANTHROPIC_API_KEY": testKey, "PARLEY_ANTHROPIC_MODELS": "claude-a,,claude-b"},
			want: []string{`PARLEY_ANTHROPIC_MODELS="claude-a,,claude-b"`, "want model names separated by commas"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			clearModelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := settingsFromEnv()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q holds the key", err)
			}
		})
	}
}

func TestSettingsReadModelLists(t *testing.T) {
	clearModelEnv(t)
	t.Setenv("PARLEY_LLM_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("PARLEY_LLM_MODELS", " gpt-4.1 , gpt-4o-mini,gpt-4.1")
	t.Setenv("PARLEY_ANTHROPIC_API_KEY", testKey)
	t.Setenv("PARLEY_ANTHROPIC_MODEL", "claude-haiku-5-5")
	t.Setenv("PARLEY_ANTHROPIC_MODELS", "claude-sonnet-5-5,claude-haiku-5-5")
	s, err := settingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if s.LLM.Model != "gpt-4.1" || !slices.Equal(s.LLM.Models, []string{"gpt-4.1", "gpt-4o-mini"}) {
		t.Errorf("PARLEY_LLM_MODELS alone: model %q, models %q; want the first as the default, each once", s.LLM.Model, s.LLM.Models)
	}
	if s.Anthropic.Model != "claude-haiku-5-5" || len(s.Anthropic.Models) != 2 {
		t.Errorf("PARLEY_ANTHROPIC_MODEL with _MODELS: model %q, models %q", s.Anthropic.Model, s.Anthropic.Models)
	}
}

// modelServer is a stand-in for a model API that records each request and
// refuses it with 400, which no client retries.
type modelServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

func newModelServer(t *testing.T) *modelServer {
	ms := &modelServer{}
	ms.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		ms.mu.Lock()
		ms.reqs = append(ms.reqs, recorded{r.URL.Path, r.Header.Clone(), body})
		ms.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"recorded"}}`)
	}))
	t.Cleanup(ms.Close)
	return ms
}

// call sends one request with a token limit through p and returns what
// the server received.
func (ms *modelServer) call(t *testing.T, p providers.Provider) recorded {
	t.Helper()
	req := &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "hi"}}, MaxTokens: 123}
	for _, err := range p.Stream(context.Background(), req) {
		if err != nil {
			break
		}
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if len(ms.reqs) != 1 {
		t.Fatalf("%d requests reached the server, want 1", len(ms.reqs))
	}
	r := ms.reqs[0]
	ms.reqs = nil
	return r
}

// The presets Ollama and LM Studio send the token limit as max_tokens,
// the only field they read; the others as max_completion_tokens. A base
// URL given with a preset replaces the preset's.
func TestLLMPresetsSendTheTokenLimitTheServerReads(t *testing.T) {
	ms := newModelServer(t)
	for preset, field := range map[string]string{
		"": "max_completion_tokens", "openai": "max_completion_tokens", "azure": "max_completion_tokens",
		"vllm": "max_completion_tokens", "openrouter": "max_completion_tokens",
		"ollama": "max_tokens", "lmstudio": "max_tokens",
	} {
		t.Run(cmp.Or(preset, "generic"), func(t *testing.T) {
			s := settings{LLM: llmSettings{Preset: preset, BaseURL: ms.URL + "/v1", APIKey: "sk-llm", Model: "m1"}}
			m := newModels(s, slog.New(slog.DiscardHandler))
			if len(m.connections) != 1 || m.connections[0].Name != cmp.Or(preset, "openai") {
				t.Fatalf("connections %+v, want one named %q", m.connections, cmp.Or(preset, "openai"))
			}
			r := ms.call(t, m.connections[0].Provider)
			if r.path != "/v1/chat/completions" {
				t.Errorf("request to %s, want the base URL's /v1/chat/completions", r.path)
			}
			other := map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}[field]
			if r.body[field] != float64(123) || r.body[other] != nil {
				t.Errorf("%s = %v and %s = %v, want the limit in %s only", field, r.body[field], other, r.body[other], field)
			}
			if got := r.header.Get("Authorization"); got != "Bearer sk-llm" {
				t.Errorf("Authorization %q, want the PARLEY_LLM_API_KEY", got)
			}
			if r.body["model"] != "m1" {
				t.Errorf("model %v, want m1", r.body["model"])
			}
		})
	}
}

func TestAnthropicConnectionSendsTheKeyFromTheFile(t *testing.T) {
	clearModelEnv(t)
	ms := newModelServer(t)
	t.Setenv("PARLEY_ANTHROPIC_API_KEY_FILE", keyFile(t, 0o600))
	t.Setenv("PARLEY_ANTHROPIC_BASE_URL", ms.URL)
	s, err := settingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	m := newModels(s, testLogger(&logs))
	if len(m.connections) != 1 || m.connections[0].Name != "anthropic" || m.connections[0].Model != defaultAnthropicModel {
		t.Fatalf("connections %+v, want anthropic with the default model", m.connections)
	}
	r := ms.call(t, m.connections[0].Provider)
	if r.path != "/v1/messages" || r.header.Get("X-Api-Key") != testKey || r.body["model"] != defaultAnthropicModel {
		t.Errorf("request to %s with the key %v and model %v", r.path, r.header.Get("X-Api-Key") == testKey, r.body["model"])
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the log holds the key:\n%s", logs.String())
	}
}

// With both an OpenAI-compatible endpoint and Anthropic configured, the
// page's models route lists both connections, the OpenAI-compatible one
// the default, and a preference for the other is kept.
func TestBothConnectionsAreListedByTheModelsRoute(t *testing.T) {
	clearModelEnv(t)
	ms := newModelServer(t)
	t.Setenv("PARLEY_LLM_PRESET", "ollama")
	t.Setenv("PARLEY_LLM_BASE_URL", ms.URL+"/v1")
	t.Setenv("PARLEY_LLM_MODEL", "qwen3:8b")
	t.Setenv("PARLEY_ANTHROPIC_API_KEY", testKey)
	t.Setenv("PARLEY_ANTHROPIC_BASE_URL", ms.URL)
	t.Setenv("PARLEY_ANTHROPIC_MODELS", "claude-sonnet-5-5,claude-haiku-5-5")
	s, err := settingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	s.DatabasePath = ""
	srv, _ := newTestApp(t, s)

	type ref struct{ Connection, Model string }
	var body struct {
		Connections []struct {
			Name         string
			DefaultModel string `json:"default_model"`
			Models       []string
		}
		Default, Current ref
	}
	resp := doReq(t, srv, "GET", "/api/chat/models", "alice", "")
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/chat/models: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if len(body.Connections) != 2 ||
		body.Connections[0].Name != "ollama" || !slices.Equal(body.Connections[0].Models, []string{"qwen3:8b"}) ||
		body.Connections[1].Name != "anthropic" || !slices.Equal(body.Connections[1].Models, []string{"claude-sonnet-5-5", "claude-haiku-5-5"}) {
		t.Errorf("connections %+v, want ollama [qwen3:8b] and anthropic [claude-sonnet-5-5 claude-haiku-5-5]", body.Connections)
	}
	if body.Default != (ref{"ollama", "qwen3:8b"}) || body.Current != body.Default {
		t.Errorf("default %+v, current %+v; want ollama/qwen3:8b, the first configured", body.Default, body.Current)
	}

	resp = doReq(t, srv, "PUT", "/api/chat/models/preference", "alice", `{"connection":"anthropic","model":"claude-haiku-5-5"}`)
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /api/chat/models/preference: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if body.Current != (ref{"anthropic", "claude-haiku-5-5"}) {
		t.Errorf("after the choice, current %+v", body.Current)
	}
}

// The server does not start with a key file others can read: it exits 2
// with one line that names the file and the modes it takes, and no key.
func TestServerProcessRefusesAKeyFileOthersCanRead(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	path := keyFile(t, 0o644)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PARLEY_ADDR=127.0.0.1:0", "PARLEY_DATABASE_PATH=", "PARLEY_LLM_PRESET=", "PARLEY_ANTHROPIC_API_KEY=", "PARLEY_ANTHROPIC_API_KEY_FILE="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want status 2; output:\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], path) || !strings.Contains(lines[0], "0600 or 0400") || strings.Contains(string(out), testKey) {
		t.Errorf("output %q: want one line naming %s and mode 0600 or 0400, without the key", out, path)
	}
}
