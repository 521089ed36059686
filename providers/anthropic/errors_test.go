package anthropic

import (
	"testing"

	"github.com/parleyhq/parley/providers"
)

// Every documented error type classifies as its documented status does.
func TestErrorTypesClassifyAsTheirStatus(t *testing.T) {
	for typ, status := range typeStatus {
		if got, want := categoryForType(typ), providers.CategoryForStatus(status); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
	if got := categoryForType("overloaded_error"); got != providers.CategoryUnavailable {
		t.Errorf("overloaded_error is %q", got)
	}
	if got := categoryForType(""); got != providers.CategoryUnavailable {
		t.Errorf("an error event without a type is %q", got)
	}
}
