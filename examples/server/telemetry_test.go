package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// syncBuffer is a bytes.Buffer the exporters may write while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// envOf is a getenv over vars alone.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// resetGlobals puts the no-op providers back after a test installed SDK ones.
func resetGlobals(t *testing.T) {
	t.Cleanup(func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
}

// With OTEL_TRACES_EXPORTER=console, a chat turn's spans (the turn, its
// model calls and its tool) print to stdout once the providers stop, and
// the console metrics name the GenAI instruments.
func TestTelemetryConsolePrintsATurnsSpans(t *testing.T) {
	resetGlobals(t)
	var out syncBuffer
	stop, err := startTelemetry(context.Background(), envOf(map[string]string{
		"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console",
	}), &out)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t)
	chat(t, srv, "alice", "show my notes")
	srv.Close() // its Engine's turns are done: the stream ended with them
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"Name":"invoke_agent Notes Assistant"`, `"Name":"chat"`, `"Name":"execute_tool list_notes"`,
		`"gen_ai.tool.name"`, `"gen_ai.client.token.usage"`, `"gen_ai.client.operation.duration"`, `"service.name"`, `"parley-example"`} {
		if !strings.Contains(got, want) {
			t.Errorf("console output has no %s; names: %v", want, regexp.MustCompile(`"Name":"[^"]*"`).FindAllString(got, -1))
		}
	}
}

// With no OTEL_* variables nothing is installed: the globals stay no-ops
// and nothing is printed.
func TestTelemetryUnsetExportsNothing(t *testing.T) {
	resetGlobals(t)
	before := otel.GetTracerProvider()
	var out syncBuffer
	stop, err := startTelemetry(context.Background(), envOf(nil), &out)
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != before {
		t.Errorf("a tracer provider was installed with no OTEL_* variable set")
	}
	srv := newTestServer(t)
	chat(t, srv, "alice", "show my notes")
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("printed with no OTEL_* variable set:\n%s", out.String())
	}
}

// An exporter the server does not know is refused at start, naming the
// variable and the choices; unset with an OTLP endpoint means otlp.
func TestTelemetryExporterChoices(t *testing.T) {
	_, err := startTelemetry(context.Background(), envOf(map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") || !strings.Contains(err.Error(), "console, otlp or none") {
		t.Errorf("err = %v, want a refusal naming OTEL_TRACES_EXPORTER and the choices", err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "none"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, "none"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, "console"},
	} {
		if got, err := exporterKind(envOf(c.env), "OTEL_TRACES_EXPORTER"); err != nil || got != c.want {
			t.Errorf("exporterKind(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}

// The OTEL_* variables the server reads are listed in telemetryVariables,
// documented in README.md and doc.go, and never reported as unknown.
func TestTelemetryVariablesAreListedAndNotFlagged(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(OTEL_[A-Z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "environment.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(telemetryVariables, m[1]) {
				t.Errorf("%s reads %s, which telemetryVariables does not list", f, m[1])
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
	var environ []string
	for _, v := range telemetryVariables {
		if !strings.Contains(string(readme), v) {
			t.Errorf("README.md does not mention %s", v)
		}
		if !strings.Contains(string(doc), v) {
			t.Errorf("doc.go does not document %s", v)
		}
		environ = append(environ, v+"=x")
	}
	var logs bytes.Buffer
	warnUnknownVariables(slog.New(slog.NewTextHandler(&logs, nil)), append(environ, "OTEL_SERVICE_NAME=parley"))
	if logs.Len() != 0 {
		t.Errorf("OTEL_* variables reported as unknown:\n%s", logs.String())
	}
}
