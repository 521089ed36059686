package guard

import (
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"strings"
)

// PII and credentials are matched in the original text: they are exact
// strings, and their offsets are the ones to redact.

// piiKeyword says what a prefilter keyword starts.
type piiKeyword uint8

const (
	kwAWS piiKeyword = iota
	kwGitHub
	kwSlack
	kwStripe
	kwSK // sk-: OpenAI or Anthropic
	kwGoogle
	kwPEM
	kwJWT
	kwEmail
	kwSecret // password=, api_key: ...
)

var piiKeywords = []struct {
	kw   string
	kind piiKeyword
}{
	{"akia", kwAWS}, {"asia", kwAWS}, {"abia", kwAWS}, {"acca", kwAWS}, {"aida", kwAWS}, {"aroa", kwAWS},
	{"anpa", kwAWS}, {"anva", kwAWS}, {"agpa", kwAWS}, {"apka", kwAWS},
	{"ghp_", kwGitHub}, {"gho_", kwGitHub}, {"ghu_", kwGitHub}, {"ghs_", kwGitHub}, {"ghr_", kwGitHub}, {"github_pat_", kwGitHub},
	{"xoxb-", kwSlack}, {"xoxp-", kwSlack}, {"xoxa-", kwSlack}, {"xoxo-", kwSlack}, {"xoxr-", kwSlack}, {"xoxs-", kwSlack},
	{"xoxe.", kwSlack}, {"xoxe-", kwSlack}, {"xapp-", kwSlack},
	{"sk_live_", kwStripe}, {"rk_live_", kwStripe},
	{"sk-", kwSK},
	{"aiza", kwGoogle},
	{"-----begin ", kwPEM},
	{"eyj", kwJWT},
	{"@", kwEmail},
	{"password", kwSecret}, {"passwd", kwSecret}, {"pwd", kwSecret}, {"passphrase", kwSecret}, {"secret", kwSecret},
	{"token", kwSecret}, {"api_key", kwSecret}, {"apikey", kwSecret}, {"api-key", kwSecret}, {"access_key", kwSecret},
	{"passcode", kwSecret}, {"contraseña", kwSecret}, {"passwort", kwSecret}, {"mot de passe", kwSecret},
}

// piiScanner finds the keywords with a filter on each position's first
// three bytes: a hashed bit set of the keywords' first three bytes, with
// bit 0x20 set in each (which folds ASCII case, and merges a few other
// pairs of bytes, which only lets more positions through). Most positions
// of prose cost a few instructions; the rest are compared with the
// keywords of their first byte. No keyword is a substring of another
// (TestPIIKeywordsNotNested), so the occurrences come in the order of
// their ends, as from an Aho-Corasick automaton, and at most one starts
// at a position.
type piiScanner struct {
	tri     [1 << triBits / 64]uint64
	byFirst [256][]uint8 // keyword ids by folded first byte
}

const triBits = 14

// triKey hashes the three bytes packed in x into the filter.
func triKey(x uint32) uint32 {
	return (x | 0x202020) * 0x9E3779B1 >> (32 - triBits)
}

// foldByte folds ASCII upper case to lower case and leaves the rest.
var foldByte = func() (t [256]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] = byte(c + 'a' - 'A')
		}
	}
	return t
}()

func newPIIScanner() *piiScanner {
	p := new(piiScanner)
	for id, k := range piiKeywords {
		p.byFirst[k.kw[0]] = append(p.byFirst[k.kw[0]], uint8(id))
		if len(k.kw) >= 3 {
			key := triKey(uint32(k.kw[0]) | uint32(k.kw[1])<<8 | uint32(k.kw[2])<<16)
			p.tri[key/64] |= 1 << (key % 64)
		}
	}
	return p
}

// nextCandidate returns the first position from i on where the filter
// lets a keyword start, or len(text). The last two positions are always
// candidates. '@' is the one keyword shorter than three bytes. Four
// positions are filtered at a time from one eight-byte load, and looked
// at one by one only when one of them passes.
func (p *piiScanner) nextCandidate(text string, i int) int {
	for ; i+8 <= len(text); i += 4 {
		w := load64(text, i)
		k0, k1 := triKey(uint32(w)&0xFFFFFF), triKey(uint32(w>>8)&0xFFFFFF)
		k2, k3 := triKey(uint32(w>>16)&0xFFFFFF), triKey(uint32(w>>24)&0xFFFFFF)
		pass := p.tri[k0>>6]>>(k0&63) | p.tri[k1>>6]>>(k1&63) | p.tri[k2>>6]>>(k2&63) | p.tri[k3>>6]>>(k3&63)
		// A zero byte of x is an '@' in the four.
		const lo7 = 0x7f7f7f7f
		x := uint32(w) ^ 0x40404040
		at := ^((x&lo7 + lo7) | x | lo7)
		if pass&1 != 0 || at != 0 {
			break
		}
	}
	for ; i+2 < len(text); i++ {
		x := uint32(text[i]) | uint32(text[i+1])<<8 | uint32(text[i+2])<<16
		key := triKey(x)
		if p.tri[key>>6]&(1<<(key&63)) != 0 || byte(x) == '@' {
			return i
		}
	}
	return min(i, len(text))
}

// load64 returns text[i:i+8] as a little-endian integer.
func load64(text string, i int) uint64 {
	s := text[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// keywordAt returns the id of the keyword that starts at text[i], or -1.
func (p *piiScanner) keywordAt(text string, i int) int {
	for _, id := range p.byFirst[foldByte[text[i]]] {
		kw := piiKeywords[id].kw
		if hasPrefixFold(text[i:], kw) {
			return int(id)
		}
	}
	return -1
}

// hasPrefixFold reports whether s starts with the lower-case kw, ignoring
// ASCII case.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for j := 0; j < len(kw); j++ {
		if foldByte[s[j]] != kw[j] {
			return false
		}
	}
	return true
}

// scan appends the PII and credential findings in text.
func (p *piiScanner) scan(text string, out []rawFinding) []rawFinding {
	base := len(out)
	// Specific formats first, then generic `password = value`
	// assignments, which must not swallow a token already identified.
	next := 0 // keyword hits before next are inside a reported match
	var secretBuf [16]int32
	secrets := secretBuf[:0]
	hit := func(id, start int) {
		kind := piiKeywords[id].kind
		if kind == kwSecret {
			secrets = append(secrets, int32(start))
			return
		}
		if start < next {
			return
		}
		if f, ok := p.keyword(text, kind, start); ok {
			out = append(out, f)
			next = f.end
		}
	}
	for i := 0; ; i++ {
		if i = p.nextCandidate(text, i); i == len(text) {
			break
		}
		if id := p.keywordAt(text, i); id >= 0 {
			hit(id, i)
		}
	}
	next = 0
	for _, s := range secrets {
		start := int(s)
		if start < next {
			continue
		}
		if f, ok := secretAssignment(text, start); ok && !overlaps(out, base, f.start, f.end) {
			out = append(out, f)
			next = f.end
		}
	}
	out = scanTokens(text, out, base)
	out = scanNumbers(text, out, base)
	return out
}

// awsSecretAfter returns the end of an AWS secret access key (40 characters
// of base64, high in entropy) that starts within 100 bytes after an access
// key id ending at e; otherwise e.
func awsSecretAfter(text string, e int) int {
	isSecretChar := func(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }
	limit := min(len(text), e+100)
	for j := e; j < limit; j++ {
		if !isSecretChar(text[j]) || j > 0 && isSecretChar(text[j-1]) {
			continue
		}
		n := span(text, j, isSecretChar)
		if n == 40 && entropy(text[j:j+n]) >= 4 && hasDigitAndLetter(text[j:j+n]) {
			return j + n
		}
		j += n
	}
	return e
}

// overlaps reports whether [s, e) overlaps a finding in out[base:].
func overlaps(out []rawFinding, base, s, e int) bool {
	for _, f := range out[base:] {
		if s < f.end && f.start < e {
			return true
		}
	}
	return false
}

func (p *piiScanner) keyword(text string, kind piiKeyword, i int) (rawFinding, bool) {
	cred := func(name string, s, e int, conf float64) (rawFinding, bool) {
		sev := High
		if name == "credential/private_key" {
			sev = Critical
		}
		return rawFinding{detector: name, cat: Credential, kind: KindPII, sev: sev, start: s, end: e, conf: conf}, true
	}
	if i > 0 && kind != kwEmail && kind != kwSecret && kind != kwPEM && isWordByte(text[i-1]) {
		return rawFinding{}, false
	}
	switch kind {
	case kwAWS:
		if !isUpper(text[i]) || !isUpper(text[i+1]) || !isUpper(text[i+2]) || !isUpper(text[i+3]) {
			return rawFinding{}, false
		}
		e := i + 4 + span(text, i+4, isUpperDigit)
		if e-i == 20 && !isWordAt(text, e) {
			// The secret access key usually follows its id: the finding
			// covers it too, so a redaction never leaves it behind.
			return cred("credential/aws_access_key", i, awsSecretAfter(text, e), 0.95)
		}
	case kwGitHub:
		if strings.HasPrefix(text[i:], "github_pat_") {
			e := i + 11 + span(text, i+11, isTokenChar)
			if e-i >= 82 && e-i <= 100 && !isWordAt(text, e) {
				return cred("credential/github_token", i, e, 0.95)
			}
			return rawFinding{}, false
		}
		if text[i] != 'g' || text[i+1] != 'h' {
			return rawFinding{}, false
		}
		e := i + 4 + span(text, i+4, isAlnum)
		if e-i == 40 && !isWordAt(text, e) && githubChecksum(text[i+4:e]) {
			return cred("credential/github_token", i, e, 1)
		}
	case kwSlack:
		if text[i] != 'x' {
			return rawFinding{}, false
		}
		e := i + 5 + span(text, i+5, func(c byte) bool { return isAlnum(c) || c == '-' })
		if e-i >= 20 && strings.Count(text[i:e], "-") >= 2 {
			return cred("credential/slack_token", i, e, 0.95)
		}
	case kwStripe:
		if text[i+1] != 'k' || (text[i] != 's' && text[i] != 'r') {
			return rawFinding{}, false
		}
		e := i + 8 + span(text, i+8, isAlnum)
		if e-i >= 8+20 {
			return cred("credential/stripe_key", i, e, 0.95)
		}
	case kwSK:
		if text[i] != 's' || text[i+1] != 'k' {
			return rawFinding{}, false
		}
		e := i + 3 + span(text, i+3, isTokenChar)
		tok := text[i:e]
		switch {
		case strings.HasPrefix(tok, "sk-ant-"):
			if len(tok) >= 40 && entropy(tok[7:]) >= 3.5 {
				return cred("credential/anthropic_key", i, e, 0.95)
			}
		case strings.Contains(tok, "T3BlbkFJ"):
			return cred("credential/openai_key", i, e, 1)
		case len(tok) >= 35 && entropy(tok[3:]) >= 3.8 && hasDigitAndLetter(tok[3:]):
			return cred("credential/openai_key", i, e, 0.85)
		}
	case kwGoogle:
		if !strings.HasPrefix(text[i:], "AIza") {
			return rawFinding{}, false
		}
		e := i + 4 + span(text, i+4, isTokenChar)
		if e-i == 39 {
			return cred("credential/google_api_key", i, e, 0.95)
		}
	case kwPEM:
		rest := text[i+len("-----BEGIN "):]
		hdr := strings.Index(rest, "-----")
		if hdr < 0 || hdr > 40 || !strings.HasSuffix(strings.ToUpper(rest[:hdr]), "PRIVATE KEY") {
			return rawFinding{}, false
		}
		e := len(text)
		if k := strings.Index(rest[hdr+5:], "-----END "); k >= 0 {
			e = i + len("-----BEGIN ") + hdr + 5 + k
			if m := strings.Index(text[e+9:], "-----"); m >= 0 && m <= 40 {
				e += 9 + m + 5
			}
		}
		return cred("credential/private_key", i, e, 1)
	case kwJWT:
		return jwtAt(text, i)
	case kwEmail:
		return emailAt(text, i)
	case kwSecret:
		return secretAssignment(text, i)
	}
	return rawFinding{}, false
}

func hasDigitAndLetter(s string) bool {
	d, l := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		d = d || isDigit(c)
		l = l || ('a' <= c && c <= 'z') || isUpper(c)
	}
	return d && l
}

func span(s string, i int, ok func(byte) bool) int {
	n := 0
	for i+n < len(s) && ok(s[i+n]) {
		n++
	}
	return n
}

func isUpperDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func isTokenChar(c byte) bool  { return isAlnum(c) || c == '_' || c == '-' }
func isWordByte(c byte) bool   { return isAlnum(c) || c == '_' }

// isWordAt reports whether text[i] continues a word.
func isWordAt(text string, i int) bool { return i < len(text) && isWordByte(text[i]) }

// jwtAt matches a JSON Web Token at i: three base64url segments whose
// header decodes to a JSON object with an "alg".
func jwtAt(text string, i int) (rawFinding, bool) {
	if !strings.HasPrefix(text[i:], "eyJ") {
		return rawFinding{}, false
	}
	h := span(text, i, isB64URL)
	if h < 10 || i+h >= len(text) || text[i+h] != '.' {
		return rawFinding{}, false
	}
	p := span(text, i+h+1, isB64URL)
	if p < 2 {
		return rawFinding{}, false
	}
	e := i + h + 1 + p
	if e < len(text) && text[e] == '.' {
		e += 1 + span(text, e+1, isB64URL)
	} else {
		return rawFinding{}, false
	}
	var hdr [512]byte
	seg := text[i : i+h]
	if base64.RawURLEncoding.DecodedLen(len(seg)) > len(hdr) {
		return rawFinding{}, false
	}
	n, err := base64.RawURLEncoding.Decode(hdr[:], []byte(seg))
	if err != nil {
		return rawFinding{}, false
	}
	var v struct {
		Alg *string `json:"alg"`
	}
	if json.Unmarshal(hdr[:n], &v) != nil || v.Alg == nil {
		return rawFinding{}, false
	}
	return rawFinding{detector: "pii/jwt", cat: JWT, kind: KindPII, sev: Medium, start: i, end: e, conf: 0.95}, true
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// emailAt matches an address around the '@' at i.
func emailAt(text string, at int) (rawFinding, bool) {
	s := at
	for s > 0 && isEmailLocal(text[s-1]) {
		s--
	}
	for s < at && text[s] == '.' {
		s++
	}
	if s == at {
		return rawFinding{}, false
	}
	e := at + 1
	lastDot := -1
	for e < len(text) && (isAlnum(text[e]) || text[e] == '-' || text[e] == '.') {
		if text[e] == '.' {
			lastDot = e
		}
		e++
	}
	for e > at+1 && (text[e-1] == '.' || text[e-1] == '-') {
		e--
	}
	if lastDot >= e-1 {
		lastDot = strings.LastIndexByte(text[at+1:e], '.')
		if lastDot >= 0 {
			lastDot += at + 1
		}
	}
	if lastDot <= at+1 || e-lastDot-1 < 2 {
		return rawFinding{}, false
	}
	for k := lastDot + 1; k < e; k++ {
		if !('a' <= text[k]|0x20 && text[k]|0x20 <= 'z') {
			return rawFinding{}, false
		}
	}
	return rawFinding{detector: "pii/email", cat: Email, kind: KindPII, sev: Low, start: s, end: e, conf: 0.95}, true
}

func isEmailLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// secretAssignment matches `password = value`, `"api_key": "value"`,
// `token: value` and "my password is value" at a keyword at i, when the
// value looks like a real secret: long enough, not a placeholder, and of
// enough entropy.
func secretAssignment(text string, i int) (rawFinding, bool) {
	// (Only the prefixes are compared without case: lowering the rest of
	// the text at each keyword made a text of many keywords quadratic.)
	// The keyword may be the tail of an identifier (DB_PASSWORD), but not
	// of a longer word (passwordless is not a keyword).
	e := i
	for e < len(text) && (isAlnum(text[e]) || text[e] == '_' || text[e] == '-' || text[e] == ' ' && e-i < 12 && hasPrefixFold(text[i:], "mot de passe")) {
		e++
	}
	if e == i || e-i > 40 {
		return rawFinding{}, false
	}
	j := e
	for j < len(text) && (text[j] == '"' || text[j] == '\'' || text[j] == ' ' || text[j] == '\t') {
		j++
	}
	natural := false
	switch {
	case strings.HasPrefix(text[j:], ":="), strings.HasPrefix(text[j:], "=>"):
		j += 2
	case j < len(text) && (text[j] == '=' || text[j] == ':'):
		j++
	case hasPrefixFold(text[j:], "is "):
		j += 3
		natural = true
	default:
		return rawFinding{}, false
	}
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '"' || text[j] == '\'' || text[j] == '`') {
		j++
	}
	v := j
	for v < len(text) && text[v] > ' ' && text[v] != '"' && text[v] != '\'' && text[v] != '`' && text[v] != ',' && text[v] != ';' {
		v++
	}
	for v > j && (text[v-1] == '.' || text[v-1] == ')' || text[v-1] == '}') {
		v--
	}
	val := text[j:v]
	if !secretLike(val, natural) {
		return rawFinding{}, false
	}
	return rawFinding{detector: "credential/secret_assignment", cat: Credential, kind: KindPII, sev: High, start: j, end: v, conf: 0.8}, true
}

var placeholders = []string{"xxx", "***", "...", "<", ">", "${", "{{", "%s", "example", "changeme", "change_me", "your", "password",
	"secret", "token", "redacted", "placeholder", "dummy", "null", "none", "undefined", "getenv", "environ", "process.env", "(", "["}

// secretLike reports whether v looks like a real secret value.
func secretLike(v string, natural bool) bool {
	if len(v) < 8 || len(v) > 200 {
		return false
	}
	// A leading $ is a variable reference ($DB_PASSWORD); inside a value it
	// is just a character, as common in real passwords as # or !.
	if v[0] == '$' {
		return false
	}
	lv := strings.ToLower(v)
	for _, p := range placeholders {
		if strings.Contains(lv, p) {
			return false
		}
	}
	classes := 0
	var seen [4]bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		k := 3
		switch {
		case 'a' <= c && c <= 'z':
			k = 0
		case isUpper(c):
			k = 1
		case isDigit(c):
			k = 2
		}
		if !seen[k] {
			seen[k] = true
			classes++
		}
	}
	if classes < 2 || (natural && classes < 3) {
		return false
	}
	return entropy(v) >= 3.0
}

// scanTokens finds the IDs that start with letters: IBAN, EU VAT numbers,
// Spanish NIF/NIE and Italian codici fiscali. A token goes to tokenAt only
// if its first bytes or length fit one of them (tokenMay), which most
// words of prose do not.
func scanTokens(text string, out []rawFinding, base int) []rawFinding {
	for i := 0; i < len(text); {
		if byteClass[text[i]]&cAlnum == 0 {
			i++
			continue
		}
		e := i + 1
		for e < len(text) && byteClass[text[e]]&cAlnum != 0 {
			e++
		}
		if i > 0 && isWordByte(text[i-1]) {
			i = e
			continue
		}
		if tokenMay(text[i:e]) {
			if f, ok := tokenAt(text, i, e); ok && !overlaps(out, base, f.start, f.end) {
				out = append(out, f)
				i = f.end
				continue
			}
		}
		i = e
	}
	return out
}

// tokenMay reports whether tokenAt can match at the alphanumeric token
// tok: its IBAN, VAT, NIF/NIE and codice fiscale cases each need one of
// these.
func tokenMay(tok string) bool {
	switch {
	case len(tok) == 16:
		return true
	case len(tok) >= 4 && isDigit(tok[2]):
		return true
	case len(tok) >= 2 && isUpper(tok[0]) && isUpper(tok[1]):
		return true
	}
	c := tok[0]
	return len(tok) <= 9 && (isDigit(c) || c|0x20 == 'x' || c|0x20 == 'y' || c|0x20 == 'z')
}

// byteClass holds the classes of bytes the PII scans skip by.
const (
	cAlnum   = 1 << iota
	cNumLead // a digit, '+' or '(': can start a number
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		b := byte(c)
		if isAlnum(b) {
			t[c] |= cAlnum
		}
		if isDigit(b) || b == '+' || b == '(' {
			t[c] |= cNumLead
		}
	}
	return t
}()

func tokenAt(text string, i, e int) (rawFinding, bool) {
	tok := text[i:e]
	var buf [40]byte
	// IBAN: two letters, two check digits, then groups.
	if len(tok) >= 4 && isLetter(tok[0]) && isLetter(tok[1]) && isDigit(tok[2]) && isDigit(tok[3]) {
		cc := string([]byte{upper(tok[0]), upper(tok[1])})
		if want, ok := ibanLengths[cc]; ok {
			n, k := 0, i
			end := -1
			for k < len(text) && n < want {
				c := text[k]
				if isAlnum(c) {
					buf[n] = upper(c)
					n++
					k++
					if n == want {
						end = k
					}
					continue
				}
				if c == ' ' && k+1 < len(text) && isAlnum(text[k+1]) && n > 0 {
					k++
					continue
				}
				break
			}
			if end > 0 && !isWordAt(text, end) && validIBAN(buf[:want]) {
				return rawFinding{detector: "pii/iban", cat: IBAN, kind: KindPII, sev: High, start: i, end: end, conf: ctxConf(text, i, 0.9, "iban", "bank", "account", "konto", "cuenta", "compte", "conto", "transfer", "pay")}, true
			}
		}
	}
	// EU VAT: country prefix (upper case), optional space, body.
	if len(tok) >= 2 && isUpper(tok[0]) && isUpper(tok[1]) {
		cc := tok[:2]
		body, be := tok[2:], e
		if len(tok) == 2 && e+1 < len(text) && text[e] == ' ' && isAlnum(text[e+1]) {
			bs := e + 1
			be = bs + span(text, bs, isAlnum)
			body = text[bs:be]
		}
		if len(body) >= 2 && len(body) <= 13 && isDigit(body[0]) || cc == "AT" && len(body) == 9 || cc == "FR" && len(body) == 11 || cc == "ES" && len(body) == 9 || cc == "IE" && len(body) >= 8 {
			ub := buf[:0]
			for k := 0; k < len(body); k++ {
				ub = append(ub, upper(body[k]))
			}
			if ok, known := vatCheck(cc, ub); ok {
				hasCtx := hasContext(text, i, "vat", "tva", "iva", "ust", "mwst", "btw", "tax", "moms", "alv", "dph", "nip", "p.iva", "partita", "steuer", "piva", "cif", "nif", "vies")
				if known || hasCtx {
					return rawFinding{detector: "pii/eu_vat", cat: VAT, kind: KindPII, sev: Low, start: i, end: be, conf: confWith(hasCtx, 0.7)}, true
				}
			}
		}
	}
	// Spanish NIF (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter),
	// with optional '-' or ' ' separators.
	if (isDigit(tok[0]) || tok[0] == 'X' || tok[0] == 'Y' || tok[0] == 'Z' || tok[0] == 'x' || tok[0] == 'y' || tok[0] == 'z') && len(tok) <= 9 {
		n, k := 0, i
		for k < len(text) && n < 9 {
			c := text[k]
			if isAlnum(c) {
				buf[n] = upper(c)
				n++
				k++
				continue
			}
			if (c == '-' || c == ' ') && k+1 < len(text) && isAlnum(text[k+1]) && (n == 1 || n == 8) {
				k++
				continue
			}
			break
		}
		if n == 9 && !isWordAt(text, k) && validNIF(buf[:9]) {
			name := "pii/es_nif"
			if !isDigit(buf[0]) {
				name = "pii/es_nie"
			}
			return rawFinding{detector: name, cat: NationalID, kind: KindPII, sev: High, start: i, end: k, conf: ctxConf(text, i, 0.85, "dni", "nif", "nie", "documento", "identidad", "id")}, true
		}
	}
	// Italian codice fiscale.
	if len(tok) == 16 {
		for k := 0; k < 16; k++ {
			buf[k] = upper(tok[k])
		}
		if validCodiceFiscale(buf[:16]) {
			return rawFinding{detector: "pii/it_codice_fiscale", cat: NationalID, kind: KindPII, sev: High, start: i, end: e, conf: ctxConf(text, i, 0.9, "codice", "fiscale", "cf", "tax")}, true
		}
	}
	return rawFinding{}, false
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// scanNumbers finds digit runs (with single ' ', '-', '.' or '/'
// separators, an optional leading '+' and a parenthesized area code) and
// classifies them: card, SSN, NHS, PESEL, Aadhaar, phone, IPv4.
func scanNumbers(text string, out []rawFinding, base int) []rawFinding {
	var digits [24]byte
	var groups [12]int8
	for i := 0; i < len(text); i++ {
		for i < len(text) && byteClass[text[i]]&cNumLead == 0 {
			i++
		}
		if i == len(text) {
			break
		}
		c := text[i]
		if i > 0 && (isWordByte(text[i-1]) || text[i-1] == '.' || text[i-1] == '-' || text[i-1] == '/' || text[i-1] == '+') {
			continue
		}
		plus := c == '+'
		k := i
		if c == '+' || c == '(' {
			if k+1 >= len(text) || !isDigit(text[k+1]) {
				continue
			}
			k++
		}
		nd, ng := 0, 0
		var sep byte // the first separator seen; 0 if none
		mixed, tooLong, paren := false, false, c == '('
		glen := 0
		for k < len(text) {
			d := text[k]
			if isDigit(d) {
				if nd == len(digits) {
					tooLong = true
					break
				}
				digits[nd] = d
				nd++
				glen++
				k++
				continue
			}
			if k+1 < len(text) && (isDigit(text[k+1]) || d == ')' && text[k+1] == ' ' && k+2 < len(text) && isDigit(text[k+2])) &&
				(d == ' ' || d == '-' || d == '.' || d == '/' || d == ')' && paren) {
				if ng < len(groups) {
					groups[ng] = int8(glen)
				}
				ng++
				glen = 0
				if d == ')' {
					paren = false
					k++
					if text[k] == ' ' {
						k++
					}
					continue
				}
				if sep == 0 {
					sep = d
				} else if sep != d {
					mixed = true
				}
				k++
				continue
			}
			break
		}
		if ng < len(groups) {
			groups[ng] = int8(glen)
		}
		ng++
		if tooLong || nd < 4 || isWordAt(text, k) || (k < len(text) && text[k] == '.' && k+1 < len(text) && isDigit(text[k+1])) {
			i = k
			continue
		}
		if f, ok := classifyNumber(text, i, k, digits[:nd], groups[:min(ng, len(groups))], sep, mixed, plus); ok && !overlaps(out, base, f.start, f.end) {
			out = append(out, f)
		}
		i = k
	}
	return out
}

func classifyNumber(text string, s, e int, d []byte, groups []int8, sep byte, mixed, plus bool) (rawFinding, bool) {
	n := len(d)
	grouped := len(groups) > 1
	shape := func(g ...int8) bool {
		if len(groups) != len(g) {
			return false
		}
		for i := range g {
			if groups[i] != g[i] {
				return false
			}
		}
		return true
	}
	id := func(name string, cat Category, sev Severity, conf float64) (rawFinding, bool) {
		return rawFinding{detector: name, cat: cat, kind: KindPII, sev: sev, start: s, end: e, conf: conf}, true
	}
	if sep == '.' && !mixed && !plus {
		if shape(1, 1, 1, 1) || len(groups) == 4 && groups[0] <= 3 && groups[1] <= 3 && groups[2] <= 3 && groups[3] <= 3 {
			if a, err := netip.ParseAddr(text[s:e]); err == nil && a.Is4() && !hasContext(text, s, "version", "v", "ver", "release", "build") {
				return id("pii/ip_address", IPAddress, Low, 0.8)
			}
		}
		return rawFinding{}, false
	}
	if mixed || sep == '/' || sep == '.' {
		if plus && n >= 8 && n <= 15 && sep == '.' {
			return id("pii/phone", Phone, Low, 0.8)
		}
		return rawFinding{}, false
	}
	if plus {
		if n >= 8 && n <= 15 && d[0] != '0' {
			return id("pii/phone", Phone, Low, ctxConf(text, s, 0.8, phoneWords...))
		}
		return rawFinding{}, false
	}
	// Cards: 13-19 digits, bare or in groups of 4 (Amex 4-6-5).
	if n >= 13 && n <= 19 && (!grouped || groups[0] == 4) && validCard(d) {
		return id("pii/card", Card, High, ctxConf(text, s, 0.9, "card", "visa", "mastercard", "amex", "credit", "debit", "cc", "payment", "pay", "tarjeta", "carte", "karte"))
	}
	if n == 9 && (shape(3, 2, 4) || !grouped && hasContext(text, s, ssnWords...)) && validSSN(d) {
		return id("pii/us_ssn", NationalID, High, ctxConf(text, s, 0.85, ssnWords...))
	}
	if n == 10 && (shape(3, 3, 4) || !grouped) && hasContext(text, s, "nhs", "health", "patient", "nhs no", "nhs number") && validNHS(d) {
		return id("pii/uk_nhs", NationalID, High, 0.95)
	}
	if n == 11 && !grouped && hasContext(text, s, "pesel") && validPESEL(d) {
		return id("pii/pl_pesel", NationalID, High, 0.95)
	}
	if n == 12 && (shape(4, 4, 4) || !grouped && hasContext(text, s, aadhaarWords...)) && validAadhaar(d) {
		return id("pii/in_aadhaar", NationalID, High, ctxConf(text, s, 0.7, aadhaarWords...))
	}
	if n >= 10 && n <= 13 && (grouped || len(groups) == 1 && strings.HasPrefix(text[s:], "(")) && hasContext(text, s, phoneWords...) &&
		!hasContext(text, s, "nhs", "ssn", "social", "aadhaar", "pesel", "card", "account", "iban", "order", "invoice", "tracking", "id") {
		return id("pii/phone", Phone, Low, 0.85)
	}
	return rawFinding{}, false
}

var (
	ssnWords     = []string{"ssn", "social security", "social sec", "ss#", "ss no", "tin", "itin"}
	aadhaarWords = []string{"aadhaar", "aadhar", "uidai", "uid"}
	phoneWords   = []string{"phone", "tel", "telephone", "mobile", "cell", "call", "fax", "whatsapp", "sms", "text", "number", "contact", "reach", "ring", "teléfono", "telefono", "téléphone", "handy", "móvil"}
)

// hasContext reports whether one of words occurs in the ~5 words (at most
// 60 bytes) before text[s:], ignoring ASCII case. A word must match whole.
func hasContext(text string, s int, words ...string) bool {
	lo := s - 60
	if lo < 0 {
		lo = 0
	}
	win := text[lo:s]
	// Keep the last 5 words.
	count := 0
	for k := len(win) - 1; k > 0; k-- {
		if win[k] == ' ' && win[k-1] != ' ' {
			count++
			if count == 6 {
				win = win[k:]
				break
			}
		}
	}
	for _, w := range words {
		for off := 0; off+len(w) <= len(win); {
			k := indexFold(win[off:], w)
			if k < 0 {
				break
			}
			a, b := off+k, off+k+len(w)
			if (a == 0 || !isAlnum(win[a-1])) && (b == len(win) || !isAlnum(win[b])) {
				return true
			}
			off = a + 1
		}
	}
	return false
}

// indexFold is strings.Index ignoring ASCII case; w is lower case.
func indexFold(s, w string) int {
	for i := 0; i+len(w) <= len(s); i++ {
		ok := true
		for j := 0; j < len(w); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

func ctxConf(text string, s int, base float64, words ...string) float64 {
	return confWith(hasContext(text, s, words...), base)
}

// confWith raises a confidence when a context word was found.
func confWith(ctx bool, base float64) float64 {
	if ctx {
		return min(1, base+0.1)
	}
	return base
}
