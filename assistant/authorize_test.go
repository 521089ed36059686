package assistant_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/tools"
)

// A RoleAuthorizer grant that names no tool and no category is a start-up
// error naming the grant, with the fix when a category of that name exists.
func TestNewRejectsGrantsThatNameNothing(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, c := range []struct {
		grants map[string][]string
		want   string // "" : accepted
	}{
		{map[string][]string{"user": {"category:weather", "get_weather"}, "staff": {"*"}}, ""},
		{map[string][]string{"user": {"weather"}}, `grant "category:weather"`},
		{map[string][]string{"user": {"category:wether"}}, `no tool has the category "wether"`},
		{map[string][]string{"*": {"get_weather"}}, `"*" is not a role`},
		{map[string][]string{"everyone": {"get_wether"}}, `"get_wether", which names no tool`},
	} {
		a := assistant.RoleAuthorizer{Tools: c.grants}
		if gs, ok := c.grants["everyone"]; ok {
			a = assistant.RoleAuthorizer{Everyone: gs}
		}
		_, err := assistant.New(assistant.Config{Provider: fake.New(), Store: h.store, Tools: h.registry(), Authorizer: a})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.grants, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: err = %v, want it to say %s", c.grants, err, c.want)
		}
	}
	// Through a pointer too, and with no tools at all.
	if _, err := assistant.New(assistant.Config{Provider: fake.New(), Store: h.store,
		Authorizer: &assistant.RoleAuthorizer{Tools: map[string][]string{"user": {"get_weather"}}}}); err == nil {
		t.Error("a grant with no Config.Tools was accepted")
	}
}

// "*" means one thing, every tool: Everyone grants to every user, and a
// role grants only to users who have it.
func TestRoleAuthorizerGrantsEveryoneAndRoles(t *testing.T) {
	weather := &tools.Spec{Name: "get_weather", Category: "weather"}
	stats := &tools.Spec{Name: "admin_stats", Category: "admin"}
	a := assistant.RoleAuthorizer{Everyone: []string{"category:weather"}, Tools: map[string][]string{"staff": {"*"}}}
	for _, c := range []struct {
		u    parley.User
		tool *tools.Spec
		want bool
	}{
		{parley.User{ID: "nobody"}, weather, true},
		{parley.User{ID: "nobody"}, stats, false},
		{parley.User{ID: "s", Roles: []string{"staff"}}, stats, true},
		{parley.User{ID: "x", Roles: []string{"*"}}, stats, false},
	} {
		err := a.Authorize(context.Background(), c.u, assistant.Action{Kind: assistant.UseTool, Tool: c.tool})
		if got := err == nil; got != c.want {
			t.Errorf("%s (roles %v) using %s: allowed %v, want %v", c.u.ID, c.u.Roles, c.tool.Name, got, c.want)
		}
		if err != nil && !errors.Is(err, assistant.ErrForbidden) {
			t.Errorf("refusal %v does not wrap ErrForbidden", err)
		}
	}
}
