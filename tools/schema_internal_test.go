package tools

import (
	"context"
	"encoding/json"
	"testing"
)

func TestCompiledForCompilesOncePerNameAndSchema(t *testing.T) {
	spec := Spec{Name: "cache_probe", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	a1, err := compiledFor(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.InputSchema = json.RawMessage(string(spec.InputSchema)) // equal bytes, new slice
	if a2, _ := compiledFor(spec); a2 != a1 {
		t.Error("the same schema was compiled twice")
	}
	spec.InputSchema = json.RawMessage(`{"type":"object"}`)
	if a3, _ := compiledFor(spec); a3 == a1 {
		t.Error("a changed schema reused the old compilation")
	}
}

func TestNewSetPrecompilesPlainToolSchemas(t *testing.T) {
	spec := Spec{Name: "set_probe", Description: "d", InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`)}
	if _, err := NewSet(specOnly{spec}); err != nil {
		t.Fatal(err)
	}
	schemaCache.mu.RLock()
	_, ok := schemaCache.m[spec.Name][string(spec.InputSchema)]
	schemaCache.mu.RUnlock()
	if !ok {
		t.Error("NewSet did not cache the compiled schema for Invoke")
	}
}

type specOnly struct{ s Spec }

func (s specOnly) Spec() Spec { return s.s }
func (specOnly) Execute(ctx context.Context, _ Call) (Result, error) {
	return OK("", nil), nil
}

func TestQuotedNames(t *testing.T) {
	got := quotedNames(`missing properties: 'a', 'it\'s', 'say "hi"', 'caf\u00e9'`)
	want := []string{"a", "it's", `say "hi"`, "café"}
	if len(got) != len(want) {
		t.Fatalf("quotedNames = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("quotedNames[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}
