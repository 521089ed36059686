package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// CheckArgs scans a tool call's JSON arguments: every string, object key
// and number, decoded (so "\u0069gnore" reads "ignore"), joined by newlines
// and checked as one text, so an instruction split across fields is still
// seen. Finding offsets and Result.Redacted refer to the raw args bytes;
// redactions stay inside string literals (a redacted number becomes a
// string), so Redacted is valid JSON.
//
// Empty arguments (or only whitespace) are treated as {} and allowed.
// Arguments that are not valid JSON are blocked with an [InvalidJSON]
// finding, and their raw bytes are still scanned as text: a tool must never
// receive input the guard could not read the way the tool will.
func (g *Guard) CheckArgs(ctx context.Context, args json.RawMessage) Result {
	raw := string(args)
	if len(bytes.TrimSpace(args)) == 0 {
		return Result{Redacted: raw}
	}
	if len(raw) > g.maxBytes {
		return g.check(ctx, raw, nil, false)
	}
	if !json.Valid(args) {
		res := g.check(ctx, raw, nil, false)
		f := Finding{Detector: "guard/json", Category: InvalidJSON, Kind: KindInjection, Severity: Medium, Action: g.action(InvalidJSON, Medium), End: len(raw), Confidence: 1}
		res.Findings = append([]Finding{f}, res.Findings...)
		res.Action = max(res.Action, f.Action)
		res.Severity = max(res.Severity, f.Severity)
		return res
	}
	var a argsText
	a.build(raw)
	return g.check(ctx, a.text.String(), &a, false)
}

// argsText is the decoded strings, keys and numbers of a JSON document,
// joined by '\n', with a map back to the raw bytes.
type argsText struct {
	raw    string
	text   strings.Builder
	start  []int32 // per text byte: raw span it came from
	end    []int32
	tokens []argToken
}

type argToken struct {
	rawStart, rawEnd int // the literal, quotes included for strings
	number           bool
}

func (a *argsText) add(b []byte, s, e int) {
	a.text.Write(b)
	for range b {
		a.start = append(a.start, int32(s))
		a.end = append(a.end, int32(e))
	}
}

// build walks raw, which must be valid JSON.
func (a *argsText) build(raw string) {
	a.raw = raw
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '"':
			e := a.str(raw, i)
			i = e
		case c == '-' || isDigit(c):
			e := i + 1
			for e < len(raw) && (isDigit(raw[e]) || raw[e] == '.' || raw[e] == 'e' || raw[e] == 'E' || raw[e] == '+' || raw[e] == '-') {
				e++
			}
			a.sep(i)
			a.tokens = append(a.tokens, argToken{rawStart: i, rawEnd: e, number: true})
			a.add([]byte(raw[i:e]), i, e) // numbers map byte for byte
			for k := 0; k < e-i; k++ {
				a.start[len(a.start)-(e-i)+k] = int32(i + k)
				a.end[len(a.end)-(e-i)+k] = int32(i + k + 1)
			}
			i = e
		default:
			i++
		}
	}
}

// sep writes the '\n' between tokens.
func (a *argsText) sep(at int) {
	if a.text.Len() > 0 {
		a.add([]byte{'\n'}, at, at)
	}
}

// str decodes the string literal at raw[i] and returns the offset after it.
func (a *argsText) str(raw string, i int) int {
	a.sep(i)
	tok := argToken{rawStart: i}
	k := i + 1
	var buf [utf8.UTFMax]byte
	for k < len(raw) && raw[k] != '"' {
		c := raw[k]
		if c != '\\' {
			a.add([]byte{c}, k, k+1)
			k++
			continue
		}
		s := k
		esc := raw[k+1]
		k += 2
		var r rune
		switch esc {
		case 'n':
			r = '\n'
		case 't':
			r = '\t'
		case 'r':
			r = '\r'
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'u':
			r = hex4(raw[k : k+4])
			k += 4
			if utf16.IsSurrogate(r) && k+6 <= len(raw) && raw[k] == '\\' && raw[k+1] == 'u' {
				if r2 := utf16.DecodeRune(r, hex4(raw[k+2:k+6])); r2 != utf8.RuneError {
					r = r2
					k += 6
				}
			}
		default:
			r = rune(esc) // \" \\ \/
		}
		n := utf8.EncodeRune(buf[:], r)
		a.add(buf[:n], s, k)
	}
	tok.rawEnd = k + 1
	a.tokens = append(a.tokens, tok)
	return k + 1
}

func hex4(s string) rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case isDigit(c):
			r = r<<4 | rune(c-'0')
		default:
			r = r<<4 | rune(c|0x20-'a'+10)
		}
	}
	return r
}

// orig maps a span of the decoded text to the raw bytes.
func (a *argsText) orig(s, e int) (int, int) {
	if len(a.start) == 0 {
		return 0, 0
	}
	s = min(max(s, 0), len(a.start)-1)
	if e <= s {
		return int(a.start[s]), int(a.end[s])
	}
	e = min(e, len(a.end))
	return int(a.start[s]), int(a.end[e-1])
}

// redact replaces the raw spans of fs (sorted by Start), clipped to the
// string or number literals they touch, keeping the JSON valid.
func (a *argsText) redact(fs []Finding) string {
	var b strings.Builder
	b.Grow(len(a.raw))
	pos := 0
	for _, t := range a.tokens {
		var label string
		s, e := t.rawEnd, t.rawStart // the covered part of the token
		for _, f := range fs {
			if f.Start < t.rawEnd && t.rawStart < f.End {
				if label == "" {
					label = redactionLabel(f.Category)
				}
				s, e = min(s, max(f.Start, t.rawStart)), max(e, min(f.End, t.rawEnd))
			}
		}
		if label == "" {
			continue
		}
		if t.number {
			s, e, label = t.rawStart, t.rawEnd, `"`+label+`"`
		} else {
			s, e = max(s, t.rawStart+1), min(e, t.rawEnd-1) // keep the quotes
		}
		if e <= s || s < pos {
			continue
		}
		b.WriteString(a.raw[pos:s])
		b.WriteString(label)
		pos = e
	}
	b.WriteString(a.raw[pos:])
	return b.String()
}
