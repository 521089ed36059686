package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// upstream is an OpenAI-compatible server that fails every call with status
// and header, counting the calls.
func upstream(t *testing.T, status int, header map[string]string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"upstream says no","type":"server_error"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// One layer retries a failed model call: the Engine's, within
// ModelRetryWait. A 500 costs the Engine's retries and no more (it cost 12
// calls with the provider's own retries inside the Engine's), and a
// Retry-After past ModelRetryWait is not waited out at all.
func TestAFailedModelCallIsRetriedByOneLayer(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		status int
		header map[string]string
		calls  int64
	}{
		"500":                  {http.StatusInternalServerError, nil, 4}, // the first call and the Engine's 3 retries
		"503 retry after 120s": {http.StatusServiceUnavailable, map[string]string{"Retry-After": "120"}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			up, calls := upstream(t, tc.status, tc.header)
			srv, _ := newTestApp(t, settings{DatabasePath: testDatabase(t), NoTitles: true,
				LLM: llmSettings{BaseURL: up.URL, Model: "m"}})
			resp := doReq(t, srv, "POST", "/api/chat/stream", "alice", `{"message":"hi"}`)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if body := string(raw); !strings.Contains(body, `"k":"error"`) || strings.Contains(body, "upstream says no") {
				t.Errorf("stream %s: want an error block without the provider's text", body)
			}
			if waits := strings.Count(string(raw), `"waiting"`); waits != int(tc.calls-1) {
				t.Errorf("%d waiting notices, want one per retry (%d)", waits, tc.calls-1)
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("%d upstream calls, want %d", n, tc.calls)
			}
		})
	}
}
