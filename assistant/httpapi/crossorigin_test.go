package httpapi_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
)

// The state-changing routes, each with a body it accepts.
var stateChanging = []struct{ method, path, body string }{
	{"POST", "/api/chat/stream", `{"message":"hi"}`},
	{"PATCH", "/api/chat/threads/t1", `{"title":"renamed"}`},
	{"DELETE", "/api/chat/threads/t1", `{}`},
	{"POST", "/api/chat/threads/t1/cancel", `{}`},
	{"PUT", "/api/chat/threads/t1/messages/m1/feedback", `{"rating":"up"}`},
	{"DELETE", "/api/chat/threads/t1/messages/m1/feedback", `{}`},
	{"POST", "/api/chat/tools/add_item/execute", `{"args":{"name":"milk"}}`},
	{"PUT", "/api/chat/quota/alice", `{"daily":5}`},
	{"POST", "/api/chat/threads", `{}`},
	{"POST", "/api/chat/prompts", `{"name":"n","text":"t"}`},
	{"POST", "/api/chat/prompts/p1/activate", `{}`},
	{"POST", "/api/chat/prompts/deactivate", `{}`},
	{"DELETE", "/api/chat/prompts/p1", `{}`},
}

func TestBodiesThatAreNotJSONAre415(t *testing.T) {
	var runs atomic.Int64
	h := newHarness(t, fake.New(fake.Turn{fake.Text("never")}), counted(&runs))
	for _, ct := range []string{
		"", // none at all
		"text/plain",
		"text/plain;charset=UTF-8",
		"application/x-www-form-urlencoded",
		"multipart/form-data; boundary=xyz",
		"application/json; charset=iso-8859-1",
		"application/jsonp",
		"application/json;;", // unparsable
	} {
		for _, r := range stateChanging {
			t.Run(r.method+" "+r.path+" as "+ct, func(t *testing.T) {
				msg := wantError(t, h.send(r.method, r.path, r.body, map[string]string{"X-User": "sam", "Content-Type": ct}),
					http.StatusUnsupportedMediaType, "unsupported_media_type")
				if !strings.Contains(msg, "Content-Type: application/json") {
					t.Errorf("message %q does not say what is expected", msg)
				}
			})
		}
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times from refused bodies", runs.Load())
	}
	h.assertNothingPersisted()
}

// The thread and feedback writes, refused as cross-origin or as a body that
// is not JSON, leave an existing thread's title and rating as they were.
func TestRefusedThreadAndFeedbackWritesChangeNothing(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}))
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "plan my trip"})
	thread := threadIDOf(t, bs)
	var msg string
	for _, b := range bs {
		if b.Kind == blocks.Meta && b.Meta.MessageID != "" {
			msg = b.Meta.MessageID
		}
	}
	rating := "/api/chat/threads/" + thread + "/messages/" + msg + "/feedback"
	if got := discard(h.do("PUT", rating, "alice", `{"rating":"up"}`)); got != http.StatusOK {
		t.Fatalf("PUT feedback: %d, want 200", got)
	}
	type view struct {
		Thread struct {
			Title string `json:"title"`
		} `json:"thread"`
		Feedback []struct {
			Rating string `json:"rating"`
		} `json:"feedback"`
	}
	var before view
	decodeJSON(t, h.do("GET", "/api/chat/threads/"+thread, "alice", ""), &before)
	if len(before.Feedback) != 1 {
		t.Fatalf("feedback before %+v, want one rating", before.Feedback)
	}
	writes := []struct{ method, path, body string }{
		{"PATCH", "/api/chat/threads/" + thread, `{"title":"renamed"}`},
		{"PUT", rating, `{"rating":"down"}`},
		{"DELETE", rating, `{}`},
	}
	for _, r := range writes {
		wantError(t, h.send(r.method, r.path, r.body, map[string]string{"X-User": "alice", "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}),
			http.StatusForbidden, assistant.CodeForbidden)
		wantError(t, h.send(r.method, r.path, r.body, map[string]string{"X-User": "alice", "Content-Type": "text/plain"}),
			http.StatusUnsupportedMediaType, "unsupported_media_type")
	}
	var after view
	decodeJSON(t, h.do("GET", "/api/chat/threads/"+thread, "alice", ""), &after)
	if after.Thread.Title != before.Thread.Title || len(after.Feedback) != 1 || after.Feedback[0].Rating != before.Feedback[0].Rating {
		t.Errorf("after refused writes: %+v, want %+v", after, before)
	}
}

func TestJSONBodiesWithParametersAreAccepted(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8"} {
		resp := h.send("POST", "/api/chat/stream", `{"message":"hi"}`, map[string]string{"X-User": "alice", "Content-Type": ct})
		if got := resp.Header.Get("Content-Type"); discard(resp) != http.StatusOK || got != "application/x-ndjson" {
			t.Errorf("Content-Type %q: %d %q, want a 200 stream", ct, resp.StatusCode, got)
		}
	}
}

func TestDeleteAndCancelWithoutABodyNeedNoContentType(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}))
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "hi"})
	id := threadIDOf(t, bs)
	if got := discard(h.send("POST", "/api/chat/threads/"+id+"/cancel", "", map[string]string{"X-User": "alice"})); got != http.StatusAccepted {
		t.Errorf("cancel without a body: %d, want 202", got)
	}
	if got := discard(h.send("DELETE", "/api/chat/threads/"+id, "", map[string]string{"X-User": "alice"})); got != http.StatusNoContent {
		t.Errorf("delete without a body: %d, want 204", got)
	}
}

func TestCrossSiteRequestsThatChangeStateAre403(t *testing.T) {
	var runs atomic.Int64
	h := newHarness(t, fake.New(fake.Turn{fake.Text("never")}), counted(&runs))
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},    // a sibling subdomain is another origin
		{"Origin": "https://evil.example"}, // an older browser: Origin does not match Host
	} {
		for _, r := range stateChanging {
			t.Run(r.method+" "+r.path+" with "+strings.Join(mapPairs(hdr), " "), func(t *testing.T) {
				hdr := map[string]string{"X-User": "sam", "Content-Type": "application/json", "Sec-Fetch-Site": hdr["Sec-Fetch-Site"], "Origin": hdr["Origin"]}
				msg := wantError(t, h.send(r.method, r.path, r.body, hdr), http.StatusForbidden, assistant.CodeForbidden)
				if !strings.Contains(msg, "cross-origin request was refused") {
					t.Errorf("message %q, want it to say the cross-origin request was refused", msg)
				}
			})
		}
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times from cross-site requests", runs.Load())
	}
	h.assertNothingPersisted()
}

func mapPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func TestSameOriginAndNonBrowserRequestsPass(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	for name, hdr := range map[string]map[string]string{
		"no Sec-Fetch-Site, no Origin": {},
		"same-origin":                  {"Sec-Fetch-Site": "same-origin"},
		"typed into the address bar":   {"Sec-Fetch-Site": "none"},
		"Origin matching Host":         {"Origin": h.srv.URL},
	} {
		hdr["X-User"], hdr["Content-Type"] = "alice", "application/json"
		if got := discard(h.send("POST", "/api/chat/stream", `{"message":"hi"}`, hdr)); got != http.StatusOK {
			t.Errorf("%s: %d, want 200", name, got)
		}
	}
}

func TestTrustedOriginsPass(t *testing.T) {
	const trusted = "https://app.example.com"
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model, withAPI(func(c *httpapi.Config) { c.TrustedOrigins = []string{trusted} }))
	post := func(origin string) int {
		return discard(h.send("POST", "/api/chat/stream", `{"message":"hi"}`, map[string]string{
			"X-User": "alice", "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site", "Origin": origin}))
	}
	if got := post(trusted); got != http.StatusOK {
		t.Errorf("trusted origin: %d, want 200", got)
	}
	if got := post("https://other.example.com"); got != http.StatusForbidden {
		t.Errorf("untrusted origin: %d, want 403", got)
	}
}

func TestCrossSiteReadsAreNeverBlocked(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, path := range []string{"/api/chat/threads", "/api/chat/tools", "/api/chat/threads/no-such-thread"} {
		got := discard(h.send("GET", path, "", map[string]string{"X-User": "alice", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}))
		if got == http.StatusForbidden {
			t.Errorf("GET %s cross-site: 403, want reads to pass", path)
		}
	}
}

func TestDisableCrossOriginProtectionLetsCrossSitePostsThrough(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}), withAPI(func(c *httpapi.Config) { c.DisableCrossOriginProtection = true }))
	got := discard(h.send("POST", "/api/chat/stream", `{"message":"hi"}`, map[string]string{
		"X-User": "alice", "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}))
	if got != http.StatusOK {
		t.Errorf("cross-site POST with the protection disabled: %d, want 200", got)
	}
}

func TestNewPanicsOnMisconfiguration(t *testing.T) {
	eng, err := assistant.New(assistant.Config{Provider: fake.New(), Store: memstore.New(), Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  httpapi.Config
		want string
	}{
		{"origin with a path", httpapi.Config{TrustedOrigins: []string{"https://app.example.com/chat"}}, "TrustedOrigins[0]"},
		{"origin without a scheme", httpapi.Config{TrustedOrigins: []string{"https://ok.example", "app.example.com"}}, "TrustedOrigins[1]"},
		{"trusted origins with the protection off", httpapi.Config{TrustedOrigins: []string{"https://app.example.com"}, DisableCrossOriginProtection: true}, "DisableCrossOriginProtection"},
		{"unknown execute policy", httpapi.Config{Execute: httpapi.ExecuteAll + 1}, "ExecutePolicy"},
		{"negative execute policy", httpapi.Config{Execute: -1}, "ExecutePolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Authenticate = authenticate
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want one naming %s", r, tc.want)
				}
			}()
			httpapi.New(eng, tc.cfg)
		})
	}
}
