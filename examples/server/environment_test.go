package main

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A model URL without a scheme is refused at start, naming the variable
// and the URL to write, instead of failing every call later as a
// temporary outage.
func TestSettingsRefuseABaseURLWithoutAScheme(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"PARLEY_LLM_BASE_URL", "localhost:11434/v1", "http://localhost:11434/v1"},
		{"PARLEY_LLM_BASE_URL", "api.openai.com/v1", "http://api.openai.com/v1"},
		{"PARLEY_LLM_BASE_URL", "ftp://example.com/v1", "http://"},
		{"PARLEY_ANTHROPIC_BASE_URL", "gateway.internal:8443", "http://gateway.internal:8443"},
	} {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			clearModelEnv(t)
			t.Setenv(c.key, c.value)
			_, err := settingsFromEnv()
			if err == nil || !strings.Contains(err.Error(), c.key+"=") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s=%s: %v, want an error naming the variable and suggesting %s", c.key, c.value, err, c.want)
			}
		})
	}
	clearModelEnv(t)
	t.Setenv("PARLEY_LLM_BASE_URL", "http://localhost:11434/v1")
	if _, err := settingsFromEnv(); err != nil {
		t.Errorf("an http URL: %v", err)
	}
}

// A bare port is refused with the two addresses it may have meant.
func TestSettingsRefuseABarePortAsTheAddress(t *testing.T) {
	clearModelEnv(t)
	t.Setenv("PARLEY_ADDR", "8080")
	_, err := settingsFromEnv()
	if err == nil || !strings.Contains(err.Error(), "PARLEY_ADDR=") || !strings.Contains(err.Error(), "127.0.0.1:8080") || !strings.Contains(err.Error(), ":8080 for every interface") {
		t.Errorf("PARLEY_ADDR=8080: %v, want a refusal suggesting 127.0.0.1:8080", err)
	}
	for _, bad := range []string{"localhost", "127.0.0.1:99999", "127.0.0.1:port"} {
		t.Setenv("PARLEY_ADDR", bad)
		if _, err := settingsFromEnv(); err == nil || !strings.Contains(err.Error(), "PARLEY_ADDR=") {
			t.Errorf("PARLEY_ADDR=%s: %v, want a refusal naming the variable", bad, err)
		}
	}
	for _, good := range []string{"127.0.0.1:8080", ":8080", "127.0.0.1:0", "[::1]:8080"} {
		t.Setenv("PARLEY_ADDR", good)
		if s, err := settingsFromEnv(); err != nil || s.Addr != good {
			t.Errorf("PARLEY_ADDR=%s: %q, %v", good, s.Addr, err)
		}
	}
}

// A SQLite file in a directory that does not exist is refused at start,
// naming the variable, the directory and the fix, not SQLite's "unable to
// open database file (14)".
func TestRunRefusesADatabaseInAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	s := settings{Addr: "127.0.0.1:0", DatabasePath: filepath.Join(dir, "parley.db")}
	err := run(context.Background(), s, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "PARLEY_DATABASE_PATH=") || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "mkdir -p") {
		t.Errorf("run: %v, want a refusal naming PARLEY_DATABASE_PATH, %s and mkdir -p", err, dir)
	}
}

// A typo'd PARLEY_* variable is logged with the name it is closest to;
// known ones, the test suites' and other programs' are not.
func TestUnknownVariablesAreLoggedWithTheClosestName(t *testing.T) {
	var logs logBuffer
	warnUnknownVariables(testLogger(&logs), []string{
		"PARLEY_LLM_BASEURL=http://x", "PARLEY_DATABSE_PATH=x.db", "PARLEY_XYZZY_PLUGH_QUUX=1",
		"PARLEY_ADDR=:8080", "PARLEY_TEST_POSTGRES_DSN=postgres://x", "HOME=/root", "NOT_PARLEY_ADDR=1",
	})
	out := logs.String()
	for _, want := range []string{
		"did you mean PARLEY_LLM_BASE_URL?", "name=PARLEY_LLM_BASEURL",
		"did you mean PARLEY_DATABASE_PATH?", "name=PARLEY_DATABSE_PATH",
		"name=PARLEY_XYZZY_PLUGH_QUUX",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 3 {
		t.Errorf("%d warnings, want 3 (the unknown names only):\n%s", n, out)
	}
	if strings.Contains(out, "XYZZY_PLUGH_QUUX?") || strings.Contains(out, "HOME") || strings.Contains(out, "name=PARLEY_ADDR") {
		t.Errorf("a far name got a guess, or a known one was reported:\n%s", out)
	}
}

// Every PARLEY_* variable the server's code reads is in serverVariables,
// and each is documented in README.md's configuration table and in
// doc.go.
func TestServerVariablesAreListedInOnePlace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(PARLEY_[A-Z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "environment.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			prefix := slices.ContainsFunc(serverVariables, func(v string) bool { return strings.HasPrefix(v, name+"_") })
			if !slices.Contains(serverVariables, name) && !prefix {
				t.Errorf("%s reads %s, which serverVariables does not list", f, name)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range serverVariables {
		if !strings.Contains(string(readme), "| `"+v+"`") {
			t.Errorf("README.md's configuration table has no row for %s", v)
		}
		if !strings.Contains(string(doc), v) {
			t.Errorf("doc.go does not document %s", v)
		}
	}
}

// Every PARLEY_* variable the repository's code, tests and CI name is one
// the server reads or one testVariables lists: the tests start the server
// with their own environment, and a variable they set must not read as a
// typo (as PARLEY_TEST_SQLITE_NORACE first did under .ci/run).
func TestEveryVariableOfTheRepositoryIsKnown(t *testing.T) {
	name := regexp.MustCompile(`"(PARLEY_[A-Z0-9_]+)"|\b(PARLEY_[A-Z0-9_]+)=`)
	known := func(v string) bool {
		return slices.Contains(serverVariables, v) || slices.Contains(testVariables, v) ||
			slices.ContainsFunc(serverVariables, func(s string) bool { return strings.HasPrefix(s, v+"_") })
	}
	seen := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" && path != "../..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") && path != filepath.Join("../..", ".ci", "run") || d.Name() == "environment_test.go" {
			return nil // this file's names include typos on purpose
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			v := m[1] + m[2]
			seen++
			if !known(v) {
				t.Errorf("%s names %s, which neither serverVariables nor testVariables lists", path, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("found %d mentions of PARLEY_* variables; the walk missed the repository", seen)
	}
}

// A wrong API key or an unknown model is logged at Error on the first
// call that fails, naming the connection and the variables to check.
func TestAWrongKeyOrModelIsLoggedAsAnErrorNamingTheVariable(t *testing.T) {
	for _, c := range []struct {
		status       int
		body, envVar string
	}{
		{http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "PARLEY_LLM_API_KEY"},
		{http.StatusNotFound, `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`, "PARLEY_LLM_MODEL"},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer ms.Close()
			var logs logBuffer
			s := settings{LLM: llmSettings{BaseURL: ms.URL + "/v1", APIKey: "sk-wrong", Model: "gpt-nope"}, NoTitles: true}
			h, err := newApp(s, newModels(s, testLogger(&logs)), testLogger(&logs))
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			srv := httptest.NewServer(h)
			defer srv.Close()
			resp := doReq(t, srv, "POST", "/api/chat/stream", "alice", `{"message":"hi"}`)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			line := logs.waitFor(t, "level=ERROR")
			for _, want := range []string{"connection=openai", c.envVar, "model=gpt-nope"} {
				if !strings.Contains(line, want) {
					t.Errorf("error line %q lacks %q", line, want)
				}
			}
			if strings.Contains(logs.String(), "sk-wrong") {
				t.Errorf("the log holds the key:\n%s", logs.String())
			}
		})
	}
}
