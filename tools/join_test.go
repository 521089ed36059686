package tools_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parleyhq/parley/tools"
)

func TestJoinLooksUpInOrderAndHidesLaterNames(t *testing.T) {
	mk := func(name, desc string) tools.BaseTool {
		return tools.Must(tools.New(tools.Spec{Name: name, Description: desc, Category: "general"},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.OK(desc, nil), nil }))
	}
	a, err := tools.NewSet(mk("one", "a's one"), mk("two", "a's two"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tools.NewSet(mk("two", "b's two"), mk("three", "b's three"))
	if err != nil {
		t.Fatal(err)
	}
	j := tools.Join(a, b)
	var names []string
	for _, tl := range j.All() {
		names = append(names, tl.Spec().Name+"="+tl.Spec().Description)
	}
	if want := []string{"one=a's one", "two=a's two", "three=b's three"}; !slices.Equal(names, want) {
		t.Errorf("All = %v, want %v", names, want)
	}
	if tl, ok := j.Lookup("two"); !ok || tl.Spec().Description != "a's two" {
		t.Errorf("Lookup(two) = %v %v, want a's", tl, ok)
	}
	if _, ok := j.Lookup("four"); ok {
		t.Error("Lookup(four) found a tool")
	}
}
