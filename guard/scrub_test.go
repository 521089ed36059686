package guard_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/guard"
)

// Test credentials, built so that no scanner of this repository sees a
// real-looking key in its source.
var (
	openAIKey = "sk-" + "proj-" + strings.Repeat("Ab3dE5gH7jK9", 4)
	awsKey    = "AKIA" + "IOSFODNN7EXAMPLQ"
	password  = "Tr0ub4dor&3-" + "horse"
)

func TestScrubReplacesCredentialsAndKeepsProse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"apiKey=" + openAIKey + " and more", "apiKey=" + guard.ScrubbedCredential + " and more"},
		{"aws " + awsKey + ".", "aws " + guard.ScrubbedCredential + "."},
		{"my password is " + password, "my password is " + guard.ScrubbedCredential},
		{"Reset your password from the settings page.", "Reset your password from the settings page."},
		{"The token count is 42; the secret is to keep going.", "The token count is 42; the secret is to keep going."},
		{guard.ScrubbedCredential, guard.ScrubbedCredential},
	} {
		got, n := guard.Scrub(tc.in)
		if got != tc.want || (n > 0) != (got != tc.in) {
			t.Errorf("Scrub(%q) = %q, %d; want %q", tc.in, got, n, tc.want)
		}
	}
}

func TestScrubJSONReplacesCredentialKeysAndValues(t *testing.T) {
	in := `{"id":7,"text":"apiKey=` + openAIKey + `","db_password":"hunter2","Authorization":"Bearer abc",` +
		`"hasPassword":true,"nested":{"client-secret":12345,"note":"fine"},"list":["ok","` + awsKey + `"],` +
		`"pwd":"/home/bob","token_count":3,"html":"<b>a & b</b>"}`
	out, n := guard.ScrubJSON([]byte(in))
	if !json.Valid(out) {
		t.Fatalf("not JSON: %s", out)
	}
	var got struct {
		ID          int    `json:"id"`
		Text        string `json:"text"`
		DBPassword  string `json:"db_password"`
		Auth        string `json:"Authorization"`
		HasPassword bool   `json:"hasPassword"`
		Nested      struct {
			Secret any    `json:"client-secret"`
			Note   string `json:"note"`
		} `json:"nested"`
		List       []string `json:"list"`
		PWD        string   `json:"pwd"`
		TokenCount int      `json:"token_count"`
		HTML       string   `json:"html"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	c := guard.ScrubbedCredential
	if got.Text != "apiKey="+c || got.DBPassword != c || got.Auth != c || got.Nested.Secret != c || got.List[1] != c {
		t.Errorf("a credential is left: %s", out)
	}
	if got.ID != 7 || !got.HasPassword || got.Nested.Note != "fine" || got.List[0] != "ok" || got.PWD != "/home/bob" ||
		got.TokenCount != 3 || got.HTML != "<b>a & b</b>" || n != 5 {
		t.Errorf("scrubbed too much, or miscounted (%d): %s", n, out)
	}
	if !strings.HasPrefix(string(out), `{"id":7,"text":`) {
		t.Errorf("keys lost their order: %s", out)
	}
	clean := []byte(`{"ok":true,"summary":"2 notes","data":[{"id":1,"text":"Buy oat milk"}]}`)
	if out, n := guard.ScrubJSON(clean); n != 0 || string(out) != string(clean) {
		t.Errorf("clean JSON changed: %s", out)
	}
}

// FuzzScrub: the scrub never panics, keeps valid UTF-8 and valid JSON
// valid, is idempotent, and leaves no credential the guard can find.
func FuzzScrub(f *testing.F) {
	f.Add(`{"apiKey":"` + openAIKey + `","note":"password: ` + password + `"}`)
	f.Add("token=" + awsKey + " -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----")
	f.Add(`[{"authorization":["a",{"b":1}]},null,1e5,"\u0073k-x"]`)
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := guard.Scrub(s)
		if again, n := guard.Scrub(out); again != out || n != 0 {
			t.Fatalf("Scrub is not idempotent: %q -> %q -> %q", s, out, again)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		j, _ := guard.ScrubJSON([]byte(s))
		if json.Valid([]byte(s)) && !json.Valid(j) {
			t.Fatalf("ScrubJSON broke JSON: %q -> %q", s, j)
		}
		if again, n := guard.ScrubJSON(j); n != 0 || string(again) != string(j) {
			t.Fatalf("ScrubJSON is not idempotent: %q -> %q -> %q", s, j, again)
		}
	})
}

// The shapes an outside review found the scrub missing: a secret under a
// key only the key makes one, a name/value pair, a JWT, a bearer token, a
// credential used as a key, and one hidden by an escape.
func TestScrubJSONCatchesSecretsByTheirShape(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJib2IifQ" + ".c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	opaque := "Xk9vQ2mLp7RzWq4T" + "Hd8s"
	escaped := `\u0073k-proj-` + strings.Repeat("Ab3dE5gH7jK9", 4)
	for _, in := range []string{
		`{"token":"` + opaque + `"}`,
		`{"private_token":"` + opaque + `"}`,
		`{"env":[{"name":"STRIPE_API_KEY","value":"` + opaque + `"}]}`,
		`{"env":[{"value":"` + opaque + `","name":"DB_PASSWORD"}]}`,
		`{"session":"` + jwt + `"}`,
		`{"headers":"Authorization: Bearer ` + opaque + `"}`,
		`{"keys":{"` + openAIKey + `":{"owner":"bob"}}}`,
		`{"note":"` + escaped + `"}`,
	} {
		out, n := guard.ScrubJSON([]byte(in))
		if n == 0 || !json.Valid(out) || strings.Contains(string(out), opaque) || strings.Contains(string(out), jwt) ||
			strings.Contains(string(out), openAIKey) || strings.Contains(string(out), "Ab3dE5gH7jK9Ab3dE5gH7jK9") {
			t.Errorf("ScrubJSON(%s) = %s (%d)", in, out, n)
		}
	}
	for _, in := range []string{
		`{"env":[{"name":"LOG_LEVEL","value":"debug-verbose-mode"}]}`,
		`{"pwd":"/home/bob","next_page_token":"CAEQAA","auth":"basic"}`,
	} {
		if out, n := guard.ScrubJSON([]byte(in)); n != 0 || string(out) != in {
			t.Errorf("ScrubJSON(%s) = %s (%d): nothing there is a credential", in, out, n)
		}
	}
}
