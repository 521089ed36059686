package httpapi

import (
	"bytes"
	"unicode/utf8"
)

// Compacting the resume copy. The model's answer reaches a stream as many
// small text deltas, each in a frame of its own: an AI SDK text-delta
// chunk, an NDJSON markdown line. The copy kept for a resume (uiLiveStream)
// merges such a frame into the one before it when it only continues that
// frame's text, so a resume replays fewer, longer deltas of the same text:
// the AI SDK appends a text part's deltas, and consecutive markdown blocks
// concatenate (blocks.Markdown), as the example page draws them. Only a
// frame written whole is merged, and only into a frame that was.

// A textFrame is the shape of a frame that carries nothing but a run of
// text, which the next such frame may continue.
type textFrame struct {
	// prefix is the frame up to its text, the text's opening quote
	// included.
	prefix string
	// rest reports whether p, from the text's closing quote on, ends a
	// frame of this shape: nothing but what names the text's part.
	rest func(p []byte) bool
}

var (
	// sseText is a text-delta chunk of the AI SDK route, as
	// uistream.Encoder writes it: json.Marshal sorts the keys.
	sseText = &textFrame{prefix: `data: {"delta":"`, rest: sseTextRest}
	// ndjsonText is a markdown block of the NDJSON route, as
	// blocks.AppendNDJSON writes it.
	ndjsonText = &textFrame{prefix: `{"k":"markdown","c":"`, rest: func(p []byte) bool { return string(p) == "\"}\n" }}
)

// sseTextRest reports whether p is `","id":"ID","type":"text-delta"}`
// and the blank line, with an id of letters, digits, '-' and '_' (as
// uistream's "text-N"): an id without quotes or escapes, so that the rest
// of two frames is equal exactly when their ids are.
func sseTextRest(p []byte) bool {
	id, ok := bytes.CutPrefix(p, []byte(`","id":"`))
	if !ok {
		return false
	}
	if id, ok = bytes.CutSuffix(id, []byte(`","type":"text-delta"}`+"\n\n")); !ok || len(id) == 0 {
		return false
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// split returns the text of p, still JSON-escaped, and what follows it,
// if p is one whole frame of shape f.
func (f *textFrame) split(p []byte) (text, rest []byte, ok bool) {
	body, ok := bytes.CutPrefix(p, []byte(f.prefix))
	if !ok {
		return nil, nil, false
	}
	n, ok := jsonText(body)
	if !ok || !f.rest(body[n:]) {
		return nil, nil, false
	}
	return body[:n], body[n:], true
}

// jsonText returns the length of the JSON string content at the start of
// p, up to its closing quote, if it is one that another such content may
// follow with the same meaning as the two apart: valid UTF-8 (two halves
// of a rune would decode as two U+FFFD apart and as the rune together),
// and only the escapes the encoders write (\" \\ \b \f \n \r \t and \u
// with four lower-case hex digits), never \u0000 nor a surrogate (a pair
// split between two frames would decode differently apart).
func jsonText(p []byte) (int, bool) {
	for i := 0; i < len(p); {
		switch c := p[i]; {
		case c == '"':
			return i, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			n := escapeLen(p[i:])
			if n == 0 {
				return 0, false
			}
			i += n
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false
			}
			i += size
		}
	}
	return 0, false // no closing quote
}

// escapeLen returns the length of the escape p begins with, or 0 if it is
// not one jsonText takes.
func escapeLen(p []byte) int {
	if len(p) < 2 {
		return 0
	}
	switch p[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
	default:
		return 0
	}
	if len(p) < 6 {
		return 0
	}
	v := 0
	for _, c := range p[2:6] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		default:
			return 0
		}
	}
	if v == 0 || 0xd800 <= v && v <= 0xdfff {
		return 0
	}
	return 6
}

// mergeFrame merges the frame p into dst's last frame, which begins at
// last, when p is one whole frame of shape f that continues it (for
// sseText, the same text part): dst's last frame then carries both texts,
// and mergeFrame reports true. Otherwise it returns dst unchanged and
// false. The caller guarantees that dst[last:], if last >= 0, is one whole
// frame of shape f (split took it), and that p does not alias dst.
//
// The merge rewrites dst's tail in place: no one may hold a slice of those
// bytes, nor an offset past them (see uiLiveStream.followers).
func mergeFrame(dst []byte, last int, f *textFrame, p []byte) ([]byte, bool) {
	text, rest, ok := f.split(p)
	if !ok || last < 0 || last > len(dst) || len(dst)-last < len(f.prefix)+len(rest) ||
		!bytes.HasPrefix(dst[last:], []byte(f.prefix)) || !bytes.HasSuffix(dst, rest) {
		return dst, false
	}
	dst = append(dst[:len(dst)-len(rest)], text...)
	return append(dst, rest...), true
}
