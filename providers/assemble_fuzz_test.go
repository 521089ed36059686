package providers_test

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// fuzzArgs are the fragments and inputs a fuzzed stream draws from: pieces
// of JSON, blanks, and a piece a third of MaxToolCallBytes long, so three
// of them pass the bound.
var fuzzArgs = []string{"", " ", "{}", `{"a":`, `1}`, "null", `"x"`, strings.Repeat("b", providers.MaxToolCallBytes/3)}

// contractOrder matches the kinds of a stream's events, a letter each (d
// delta, c tool call, u usage, f finish), in the Provider contract's order.
var contractOrder = regexp.MustCompile(`^d*c*u?f?$`)

var fuzzReasons = []providers.FinishReason{providers.FinishStop, providers.FinishLength, providers.FinishToolCalls, providers.FinishContentFilter}

// fuzzOps decodes data into a scripted stream, two bytes an op. The first
// byte of data picks whether the stream fails at its end and after how
// many events the consumer stops (0: never). A tool call's name is the
// letter of its index, so the order of the calls emitted can be checked.
func fuzzOps(data []byte) (src *source, stopAfter int) {
	src = &source{}
	if len(data) > 0 {
		if data[0]&1 != 0 {
			src.err = io.ErrUnexpectedEOF
		}
		stopAfter = int(data[0]>>1) % 8
		data = data[1:]
	}
	for ; len(data) >= 2; data = data[2:] {
		b, c := data[0], data[1]
		index := int64(b>>3) % 4
		o := op{index: index, name: string(rune('a' + index)), args: fuzzArgs[int(c)%len(fuzzArgs)]}
		if c&0x80 != 0 {
			o.id = string(rune('p' + int(c>>5)&3))
		}
		switch b % 6 {
		case 0:
			o.kind, o.args = 't', "x"
		case 1:
			o.kind = 's'
			if !jsonish(o.args) {
				o.args = ""
			}
		case 2, 3:
			o.kind = 'a'
		case 4:
			o.kind = 'u'
		case 5:
			o.kind, o.reason = 'f', fuzzReasons[int(c)%len(fuzzReasons)]
		}
		src.ops = append(src.ops, o)
	}
	return src, stopAfter
}

// jsonish reports whether s may stand as a Start input (json.RawMessage
// of a tool call's opening arguments).
func jsonish(s string) bool { return s == "{}" || s == `"x"` || strings.HasPrefix(s, "bb") }

// FuzzAssemble runs scripted streams through Assemble and checks the
// Provider contract: deltas, then tool calls in index order, then at most
// one Usage, then one Finish, last, or one error, last; the source closed
// once; no more events once the consumer stops (the range statement
// panics otherwise).
func FuzzAssemble(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 10, 4, 4, 0, 5, 2})
	f.Add([]byte{1, 0, 0, 2, 0x84, 2, 0xa4, 4, 0, 5, 0})
	f.Add([]byte{6, 9, 7, 2, 7, 2, 7, 2, 7, 5, 2})
	f.Add([]byte{0, 2, 3, 2, 0x83, 2, 0xa3, 13, 7, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		src, stopAfter := fuzzOps(data)
		finishOp, opened := false, 0
		for _, o := range src.ops {
			switch o.kind {
			case 'f':
				finishOp = true
			case 's', 'a':
				opened++
			}
		}

		var events []providers.Event
		var err error
		seq := func(yield func(providers.Event, error) bool) {
			providers.Assemble(src, step, unavailable, yield)
		}
		for ev, e := range seq {
			if err != nil {
				t.Fatalf("element %+v, %v after the error %v", ev, e, err)
			}
			if e != nil {
				err = e
				continue
			}
			events = append(events, ev)
			if len(events) == stopAfter {
				break
			}
		}
		if src.closed != 1 {
			t.Fatalf("source closed %d times, want 1", src.closed)
		}

		// The kinds, a letter each, in the contract's order: deltas, tool
		// calls, at most one Usage, at most one Finish, last.
		var kinds strings.Builder
		calls, lastName := 0, ""
		for _, ev := range events {
			kinds.WriteByte(" ddcuf"[ev.Kind]) // by EventKind, TextDelta being 1
			if ev.Kind == providers.ToolCallEvent {
				calls++
				name := ev.ToolCall.Name
				if name == "" || strings.Trim(name, name[:1]) != "" || name[:1] < lastName {
					t.Fatalf("tool call %q out of index order after %q", name, lastName)
				}
				lastName = name[:1]
				if strings.TrimSpace(string(ev.ToolCall.Args)) == "" {
					t.Fatalf("tool call %q with blank arguments", name)
				}
			}
			if ev.Kind == providers.FinishEvent && calls > 0 && ev.Finish == providers.FinishStop {
				t.Fatalf("stop after %d tool calls not reported as tool_calls", calls)
			}
		}
		if !contractOrder.MatchString(kinds.String()) {
			t.Fatalf("events out of the contract's order: %s", kinds.String())
		}
		if calls > opened {
			t.Fatalf("%d calls from %d opening ops", calls, opened)
		}
		finishes := strings.Count(kinds.String(), "f")

		switch {
		case stopAfter > 0 && len(events) == stopAfter:
			// The consumer stopped; the sequence may have had more.
		case err != nil:
			if finishes != 0 {
				t.Fatalf("error %v after a Finish", err)
			}
			// Cut short or past MaxToolCallBytes is ErrConnection; a failed
			// source may also be what classify made of it.
			if !errors.Is(err, providers.ErrConnection) && (src.err == nil || !errors.Is(err, providers.ErrUnavailable)) {
				t.Fatalf("error %v from a source failing with %v", err, src.err)
			}
		default:
			if !finishOp || src.err != nil || finishes != 1 {
				t.Fatalf("no error with a Finish op %v, a failing source %v and %d Finish events", finishOp, src.err != nil, finishes)
			}
		}
	})
}
