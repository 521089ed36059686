package guard

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Scrubbing (C9) is the guard's credential detection applied to text the
// Engine stores or sends on, rather than to what a user types: a tool's
// result, a client's output, a card's summary, a title, a feedback
// comment. It does not judge or block anything; it replaces each
// credential it finds by ScrubbedCredential, so a secret a tool read
// never reaches the model, the store or the user's screen. It needs no
// Guard and ignores Config: an Engine with the guard turned off scrubs
// too.

// ScrubbedCredential stands in for a credential Scrub removed. Scrubbing
// text that holds it changes nothing.
const ScrubbedCredential = "[CREDENTIAL_REDACTED]"

// Scrub returns s with every credential the guard's detectors find
// replaced by ScrubbedCredential, and how many it replaced: API keys and
// tokens of the known formats (AWS, GitHub, Slack, Stripe, OpenAI,
// Anthropic, Google), PEM private keys, JWTs, and password or secret
// assignments ("password: …", "apiKey=…") whose value looks like a real
// secret. Prose that only mentions a password or a token is kept. It is
// safe for concurrent use.
func Scrub(s string) (string, int) {
	if len(s) < 8 {
		return s, 0
	}
	var buf [8]rawFinding
	found := builtinPII().scan(s, buf[:0])
	found = slices.DeleteFunc(found, func(f rawFinding) bool { return f.cat != Credential })
	if len(found) == 0 {
		return s, 0
	}
	slices.SortFunc(found, func(a, b rawFinding) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s))
	at, n := 0, 0
	for _, f := range found {
		if f.start < at { // inside one already replaced
			if f.end > at {
				at = f.end
			}
			continue
		}
		b.WriteString(s[at:f.start])
		b.WriteString(ScrubbedCredential)
		at, n = f.end, n+1
	}
	b.WriteString(s[at:])
	return b.String(), n
}

// maxScrubDepth bounds how deeply ScrubJSON walks a value; a deeper one is
// scrubbed as text.
const maxScrubDepth = 256

// ScrubJSON returns raw, a JSON value, with every string in it scrubbed
// (see Scrub) and the value of every credential-named key ("apiKey",
// "authorization", "password", "client_secret", "access_token", ... in
// any case and spelling of separators) replaced whole by
// ScrubbedCredential, and how many it replaced. Keys keep their order. raw
// comes back as it is when nothing was found; invalid JSON is scrubbed as
// text.
func ScrubJSON(raw []byte) ([]byte, int) {
	if !mayHoldCredential(raw) {
		return raw, 0
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(raw))
	n := 0
	err := scrubValue(dec, &out, false, 0, &n)
	if err == nil {
		if _, terr := dec.Token(); terr == nil {
			err = errTrailing // a second value: not one JSON value
		}
	}
	if err != nil {
		s, k := Scrub(string(raw))
		if k == 0 {
			return raw, 0
		}
		return []byte(s), k
	}
	if n == 0 {
		return raw, 0
	}
	return out.Bytes(), n
}

var errTrailing = jsonError("trailing data")

type jsonError string

func (e jsonError) Error() string { return string(e) }

// scrubValue copies the next JSON value of dec to out, scrubbed. redact:
// the value belongs to a credential-named key, and each scalar in it goes.
func scrubValue(dec *json.Decoder, out *bytes.Buffer, redact bool, depth int, n *int) error {
	if depth > maxScrubDepth {
		return jsonError("too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		return scrubComposite(dec, out, t, redact, depth, n)
	case string:
		if redact && !placeholderValue(t) {
			writeJSONString(out, ScrubbedCredential)
			*n++
			return nil
		}
		s, k := Scrub(t)
		*n += k
		writeJSONString(out, s)
	case json.Number:
		if redact {
			writeJSONString(out, ScrubbedCredential)
			*n++
			return nil
		}
		out.WriteString(t.String())
	case bool:
		out.WriteString(map[bool]string{true: "true", false: "false"}[t])
	case nil:
		out.WriteString("null")
	}
	return nil
}

// scrubComposite copies the object or array that open starts.
func scrubComposite(dec *json.Decoder, out *bytes.Buffer, open json.Delim, redact bool, depth int, n *int) error {
	object := open == '{'
	out.WriteByte(byte(open))
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		secret := redact
		if object {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			writeJSONString(out, key)
			out.WriteByte(':')
			secret = redact || credentialKey(key)
		}
		if err := scrubValue(dec, out, secret, depth+1, n); err != nil {
			return err
		}
	}
	tok, err := dec.Token() // the closing delimiter
	if err != nil {
		return err
	}
	out.WriteByte(byte(tok.(json.Delim)))
	return nil
}

func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out.Truncate(out.Len() - 1) // Encode adds a newline
}

// credentialKeys are key names (lower case, without separators) whose
// value is a credential whatever it looks like; credentialSuffixes end
// such names ("db_password", "stripeApiKey").
var (
	credentialKeys = []string{
		"authorization", "proxyauthorization", "bearer", "cookie", "setcookie",
		"passphrase", "passcode", "privatekey", "clientsecret", "xsecret", "xapikey",
		"accesstoken", "refreshtoken", "idtoken", "authtoken", "apitoken", "sessiontoken", "bearertoken",
	}
	credentialSuffixes = []string{"apikey", "password", "passwd", "secret", "secretkey", "privatekey", "accesstoken",
		"refreshtoken", "authtoken", "apitoken", "sessiontoken", "credentials"}
)

// credentialKey reports whether a JSON key names a credential.
func credentialKey(key string) bool {
	if len(key) > 64 {
		return false
	}
	var b [64]byte
	k := b[:0]
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '-' || c == '_' || c == '.' || c == ' ':
		case 'A' <= c && c <= 'Z':
			k = append(k, c+'a'-'A')
		default:
			k = append(k, c)
		}
	}
	name := string(k)
	if slices.Contains(credentialKeys, name) {
		return true
	}
	return slices.ContainsFunc(credentialSuffixes, func(s string) bool { return strings.HasSuffix(name, s) })
}

// placeholderValue reports whether a credential-named key's value holds
// no secret: empty, already scrubbed, or masked ("***", "<redacted>").
func placeholderValue(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || v == ScrubbedCredential || strings.Trim(v, "*•x.-_ ") == "" {
		return true
	}
	l := strings.ToLower(v)
	return strings.Contains(l, "redacted") || l == "none" || l == "null" || l == "n/a"
}

// mayHoldCredential is a cheap first look: raw has a key or a value the
// scrub could change. It errs toward yes.
func mayHoldCredential(raw []byte) bool {
	if len(raw) < 8 {
		return false
	}
	if _, n := Scrub(string(raw)); n > 0 {
		return true
	}
	l := bytes.ToLower(raw)
	for _, w := range []string{"auth", "pass", "pwd", "secret", "token", "key", "cookie", "bearer", "credential"} {
		if bytes.Contains(l, []byte(w)) {
			return true
		}
	}
	return false
}
