package anthropic

import (
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
)

func TestRetryAfterParsesSecondsMillisecondsAndDates(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"1e300"}}, 0},
		{http.Header{}, 0},
	} {
		if got := retryAfter(tc.header, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

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
