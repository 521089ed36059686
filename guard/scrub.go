package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
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

// bearerToken is an opaque token after "Bearer", as an Authorization
// header carries it.
var bearerToken = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`)

// Scrub returns s with every credential the guard's detectors find
// replaced by ScrubbedCredential, and how many it replaced: API keys and
// tokens of the known formats (AWS, GitHub, Slack, Stripe, OpenAI,
// Anthropic, Google), PEM private keys, JWTs, bearer tokens, and password
// or secret assignments ("password: …", "apiKey=…", "token: …") whose
// value looks like a real secret. Prose that only mentions a password or a token is kept. It is
// safe for concurrent use.
func Scrub(s string) (string, int) {
	if len(s) < 8 {
		return s, 0
	}
	var buf [8]rawFinding
	found := builtinPII().scan(s, buf[:0])
	found = slices.DeleteFunc(found, func(f rawFinding) bool { return f.cat != Credential && f.cat != JWT })
	for _, m := range bearerToken.FindAllStringSubmatchIndex(s, -1) {
		found = append(found, rawFinding{cat: Credential, start: m[2], end: m[3]})
	}
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
	err := scrubValue(dec, &out, "", false, 0, &n)
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

var (
	errTrailing = errors.New("trailing data")
	errTooDeep  = errors.New("too deep")
)

// scrubValue copies the next JSON value of dec to out, scrubbed. key is
// the member name it is the value of ("" in an array or at the top), read
// with it as "key=value" would be; redact: the value belongs to a
// credential-named key, and each scalar in it goes.
func scrubValue(dec *json.Decoder, out *bytes.Buffer, key string, redact bool, depth int, n *int) error {
	if depth > maxScrubDepth {
		return errTooDeep
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
		s, k := scrubUnder(key, t)
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

// scrubComposite copies the object or array that open starts. In an
// object, a name/value pair ({"name": "DB_PASSWORD", "value": "…"}, as
// environment variables and settings lists are written) has its value
// redacted whatever the order of the two members.
func scrubComposite(dec *json.Decoder, out *bytes.Buffer, open json.Delim, redact bool, depth int, n *int) error {
	object := open == '{'
	out.WriteByte(byte(open))
	var pairSecret bool   // a sibling "name" or "key" names a credential
	valueAt := [2]int{-1} // where a string "value" member's value was written
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		secret, key := redact, ""
		if object {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ = tok.(string)
			scrubbed, k := Scrub(key) // a credential may be a key
			*n += k
			writeJSONString(out, scrubbed)
			out.WriteByte(':')
			secret = redact || credentialKey(key)
		}
		start := out.Len()
		if err := scrubValue(dec, out, key, secret, depth+1, n); err != nil {
			return err
		}
		switch lk := strings.ToLower(key); {
		case !object:
		case (lk == "name" || lk == "key") && out.Len() > start && out.Bytes()[start] == '"':
			var name string
			if json.Unmarshal(out.Bytes()[start:], &name) == nil && credentialKey(name) {
				pairSecret = true
			}
		case lk == "value" && out.Len() > start && out.Bytes()[start] == '"':
			valueAt = [2]int{start, out.Len()}
		}
	}
	tok, err := dec.Token() // the closing delimiter
	if err != nil {
		return err
	}
	if pairSecret && valueAt[0] >= 0 {
		var v string
		if json.Unmarshal(out.Bytes()[valueAt[0]:valueAt[1]], &v) == nil && !placeholderValue(v) {
			tail := slices.Clone(out.Bytes()[valueAt[1]:])
			out.Truncate(valueAt[0])
			writeJSONString(out, ScrubbedCredential)
			out.Write(tail)
			*n++
		}
	}
	out.WriteByte(byte(tok.(json.Delim)))
	return nil
}

// scrubUnder scrubs s, the value of the member key, as the text scrub
// would read "key=s": a value the key makes a secret ("token", "pwd") is
// caught although it would pass alone.
func scrubUnder(key, s string) (string, int) {
	if key == "" || len(key) > 64 {
		return Scrub(s)
	}
	prefix := key + "="
	both, n := Scrub(prefix + s)
	switch {
	case n == 0:
		return s, 0
	case strings.HasPrefix(both, prefix):
		return both[len(prefix):], n
	}
	// The key was part of what was found: the value goes whole.
	return ScrubbedCredential, n
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
		"refreshtoken", "authtoken", "apitoken", "sessiontoken", "privatetoken", "credential", "credentials"}
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
// scrub could change. It errs toward yes. A keyword counts where it is in
// a key (what follows it, before the next quote, is the key's end), or
// anywhere when raw has "value" members, which a name/value pair may make
// secret.
func mayHoldCredential(raw []byte) bool {
	if len(raw) < 8 {
		return false
	}
	if bytes.Contains(raw, []byte(`\u`)) {
		return true // an escape may hide a key or a keyword: decode and see
	}
	if _, n := Scrub(string(raw)); n > 0 {
		return true
	}
	l := bytes.ToLower(raw)
	pairs := bytes.Contains(l, []byte(`"value"`))
	for _, w := range []string{"auth", "pass", "pwd", "secret", "token", "key", "cookie", "bearer", "credential"} {
		for off := 0; off < len(l); {
			i := bytes.Index(l[off:], []byte(w))
			if i < 0 {
				break
			}
			if i += off; pairs || inKey(l, i+len(w)) {
				return true
			}
			off = i + 1
		}
	}
	return false
}

// inKey reports whether l[j:] ends a JSON key soon: a quote within 64
// bytes, then a colon after optional spaces.
func inKey(l []byte, j int) bool {
	end := bytes.IndexByte(l[j:min(len(l), j+64)], '"')
	if end < 0 {
		return false
	}
	rest := bytes.TrimLeft(l[j+end+1:], " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}
