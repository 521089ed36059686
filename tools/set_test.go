package tools_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/parleyhq/parley/tools"
)

func names(ts []tools.BaseTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

func TestNewSetKeepsRegistrationOrder(t *testing.T) {
	set, err := tools.NewSet(plain("zeta", "", nil), forecastTool(), plain("alpha", "", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zeta", "get_forecast", "alpha"}
	for range 3 {
		if got := names(set.All()); !slices.Equal(got, want) {
			t.Fatalf("All = %v, want %v", got, want)
		}
	}
	if set.Len() != 3 {
		t.Errorf("Len = %d", set.Len())
	}
}

func TestNewSetLooksUpByName(t *testing.T) {
	f := forecastTool()
	set, err := tools.NewSet(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := set.Lookup("get_forecast"); !ok || got != f {
		t.Errorf("Lookup(get_forecast) = %v, %v", got, ok)
	}
	if got, ok := set.Lookup("nope"); ok || got != nil {
		t.Errorf("Lookup(nope) = %v, %v", got, ok)
	}
}

func TestNewSetRejectsDuplicate(t *testing.T) {
	_, err := tools.NewSet(plain("a", "", nil), forecastTool(), plain("get_forecast", "", nil))
	if !errors.Is(err, tools.ErrDuplicate) {
		t.Errorf("err = %v, want ErrDuplicate", err)
	}
}

func TestNewSetRejectsInvalidSpec(t *testing.T) {
	tests := map[string]tools.BaseTool{
		"nil tool":          nil,
		"bad name":          plain("bad name", "", nil),
		"no description":    funcTool{spec: tools.Spec{Name: "x"}},
		"non-object schema": plain("x", `{"type":"string"}`, nil),
		"broken schema":     plain("x", `{"type":"object","required":"city"}`, nil),
	}
	for name, tool := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := tools.NewSet(plain("fine", "", nil), tool); !errors.Is(err, tools.ErrInvalidSpec) {
				t.Errorf("err = %v, want ErrInvalidSpec", err)
			}
		})
	}
}

func TestSetAllReturnsCallersSlice(t *testing.T) {
	set, _ := tools.NewSet(plain("a", "", nil), plain("b", "", nil))
	all := set.All()
	all[0] = nil
	if names(set.All())[0] != "a" {
		t.Error("modifying All's result changed the Set")
	}
}

func TestEmptySet(t *testing.T) {
	set, err := tools.NewSet()
	if err != nil || set.Len() != 0 || len(set.All()) != 0 {
		t.Errorf("NewSet() = %v, %v", set, err)
	}
}
