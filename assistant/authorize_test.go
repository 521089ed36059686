package assistant_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
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
		{map[string][]string{"*": {"get_wether"}}, `"get_wether", which names no tool`},
	} {
		_, err := assistant.New(assistant.Config{Provider: fake.New(), Store: h.store, Tools: h.registry(),
			Authorizer: assistant.RoleAuthorizer{Tools: c.grants}})
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
