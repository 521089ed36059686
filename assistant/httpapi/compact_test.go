package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
)

// paced is an answer of n small text deltas, about 10 bytes each, a
// moment apart as a model streams them (without the pause the Engine hands
// its consumer the chunks it holds as one), and a last delta long enough to
// be sent at once, holding mark: a test reads up to it.
func paced(from, n int, mark string) []fake.Step {
	var steps []fake.Step
	for i := from; i < from+n; i++ {
		steps = append(steps, fake.Text(fmt.Sprintf("Item %03d. ", i)), fake.Delay(200*time.Microsecond))
	}
	return append(steps, fake.Text("and a sentence long enough to be sent at once: "+mark+". "))
}

// turn is the steps of a fake model's turn, in order.
func turn(steps ...[]fake.Step) fake.Turn {
	var t fake.Turn
	for _, s := range steps {
		t = append(t, s...)
	}
	return t
}

// readUpTo reads a stream up to the end of the frame that holds marker.
func readUpTo(t *testing.T, br *bufio.Reader, ndjson bool, marker string) []byte {
	t.Helper()
	var head []byte
	for seen := false; ; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before %q: %v", marker, err)
		}
		head = append(head, line...)
		seen = seen || strings.Contains(line, marker)
		if seen && (ndjson || line == "\n") {
			return head
		}
	}
}

// meaning is what a client makes of a stream: its frames in order, with
// consecutive text frames of one part joined (the AI SDK concatenates a
// text part's deltas, the page consecutive markdown blocks), and how many
// text frames there were.
func meaning(t *testing.T, ndjson bool, raw []byte) (frames []string, texts int) {
	t.Helper()
	if ndjson {
		var prev *blocks.Block
		var out []blocks.Block
		for _, b := range parseLines(t, raw) {
			if b.Kind == blocks.Markdown {
				texts++
				if prev != nil && prev.Kind == blocks.Markdown {
					prev.Content += b.Content
					continue
				}
			}
			out = append(out, b)
			prev = &out[len(out)-1]
		}
		for _, b := range out {
			frames = append(frames, string(blocks.AppendNDJSON(nil, &b)))
		}
		return frames, texts
	}
	var out []map[string]any
	for ev := range strings.SplitSeq(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("not one SSE data line: %q", ev)
		}
		var c map[string]any
		if data == "[DONE]" {
			c = map[string]any{"done": true}
		} else if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if c["type"] == "text-delta" {
			texts++
			if n := len(out); n > 0 && out[n-1]["type"] == "text-delta" && out[n-1]["id"] == c["id"] {
				out[n-1]["delta"] = out[n-1]["delta"].(string) + c["delta"].(string)
				continue
			}
		}
		out = append(out, c)
	}
	for _, c := range out {
		b, _ := json.Marshal(c)
		frames = append(frames, string(b))
	}
	return frames, texts
}

// sameMeaning fails t unless got means what want does.
func sameMeaning(t *testing.T, ndjson bool, what string, got, want []byte) {
	t.Helper()
	g, _ := meaning(t, ndjson, got)
	w, _ := meaning(t, ndjson, want)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s means something else than the client's stream:\ngot  %q\nwant %q", what, g, w)
	}
}

// resumeAtMark posts route's turn as alice on a harness over model, reads
// the stream up to MARK, resumes it there, opens the gate and reads both
// to their ends: what the client read before the resume and after it,
// and what the resume read.
func resumeAtMark(t *testing.T, route relayRoute, model *fake.Provider, open chan struct{}) (head, tail, resumed []byte) {
	t.Helper()
	ndjson := route.name == "NDJSON"
	h := newHarness(t, model)
	resp := h.request(t.Context(), "POST", route.post, "alice", route.body(t))
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	head = readUpTo(t, br, ndjson, "MARK")
	r := resumeOn(t, h, route, head)
	close(open)
	tail, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err = io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return head, tail, resumed
}

// A resume after many small deltas replays the same answer in fewer,
// longer deltas: the copy merged them while no one followed it.
func TestResumeReplaysTheSameTextInFewerFrames(t *testing.T) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			ndjson := route.name == "NDJSON"
			open := make(chan struct{})
			model := fake.New(turn(paced(0, 200, "MARK"), []fake.Step{gate(open), fake.Text(" The end.")}))
			head, tail, replay := resumeAtMark(t, route, model, open)
			whole := append(head, tail...)
			sameMeaning(t, ndjson, "the resume", replay, whole)
			_, sent := meaning(t, ndjson, whole)
			_, replayed := meaning(t, ndjson, replay)
			if replayed > 3 || sent < 20 {
				t.Errorf("the resume replays %d text frames of the %d the client got, want at most 3", replayed, sent)
			}
			t.Logf("text frames: %d sent, %d replayed; bytes: %d sent, %d replayed", sent, replayed, len(whole), len(replay))
		})
	}
}

// A follower that joins mid-stream gets the copy so far, compacted, then
// exactly the bytes the client got from there on: while it follows, the
// copy's tail is never rewritten, though the deltas go on.
func TestAFollowerJoiningMidStreamGetsTheClientsBytesFromThere(t *testing.T) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			ndjson := route.name == "NDJSON"
			open := make(chan struct{})
			model := fake.New(turn(paced(0, 100, "MARK"), []fake.Step{gate(open)}, paced(100, 200, "END")))
			head, tail, followed := resumeAtMark(t, route, model, open)
			replay, ok := bytes.CutSuffix(followed, tail)
			if !ok {
				t.Fatalf("the follower's stream does not end with the client's bytes since it joined:\nfollower %q\nclient   %q", followed, tail)
			}
			sameMeaning(t, ndjson, "the replay up to the join", replay, head)
			if _, n := meaning(t, ndjson, replay); n > 1 {
				t.Errorf("the replay up to the join has %d text frames, want them merged into 1", n)
			}
			if _, n := meaning(t, ndjson, tail); n < 20 {
				t.Errorf("only %d text frames after the join: too few to show the copy kept them apart", n)
			}
		})
	}
}

// Followers joining and leaving while the answer streams, under -race:
// each that stays to the end gets the client's answer, whatever it came
// to merged or not; the copy's tail is rewritten only between followers.
func TestFollowersComingAndGoingWhileTheCopyMerges(t *testing.T) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			ndjson := route.name == "NDJSON"
			open := make(chan struct{})
			model := fake.New(turn([]fake.Step{fake.Text("Start. ")}, paced(0, 400, "MARK"), []fake.Step{gate(open), fake.Text(" The end.")}))
			h := newHarness(t, model)
			resp := h.request(t.Context(), "POST", route.post, "alice", route.body(t))
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			head := readUpTo(t, br, ndjson, "Start")
			path := route.resume(route.idOf(t, head))
			client := make(chan []byte, 1)
			go func() { // the client reads on while the followers come and go
				rest, _ := io.ReadAll(br)
				client <- append(head, rest...)
			}()
			var wg, ready sync.WaitGroup
			var mu sync.Mutex
			var stayed [][]byte
			for f := range 6 {
				ready.Add(1)
				wg.Go(func() {
					for k := range 4 { // three times a follower leaves after a moment, then it stays
						ctx, cancel := context.WithCancel(context.Background())
						r := h.request(ctx, "GET", path, "alice", "")
						if r.StatusCode != http.StatusOK {
							cancel()
							t.Errorf("follower %d: %d", f, discard(r))
							ready.Done()
							return
						}
						if k < 3 {
							time.AfterFunc(time.Duration(f*k)*time.Millisecond, cancel)
							_, _ = io.Copy(io.Discard, r.Body)
							r.Body.Close()
							continue
						}
						ready.Done()
						all, err := io.ReadAll(r.Body)
						r.Body.Close()
						cancel()
						if err != nil {
							t.Errorf("follower %d: %v", f, err)
						}
						mu.Lock()
						stayed = append(stayed, all)
						mu.Unlock()
					}
				})
			}
			ready.Wait() // every follower follows to the end: the answer may end
			close(open)
			wg.Wait()
			whole := <-client
			if len(stayed) != 6 {
				t.Fatalf("%d followers stayed to the end, want 6", len(stayed))
			}
			for _, got := range stayed {
				sameMeaning(t, ndjson, "a follower's stream", got, whole)
			}
		})
	}
}

// The resume copy of a long answer of small deltas, at its end, is a
// fraction of the bytes its stream wrote: about the answer's text, once,
// and the frames around it.
func TestTheResumeCopyOfALongAnswerIsAFractionOfItsStream(t *testing.T) {
	for _, route := range relayRoutes {
		t.Run(route.name, func(t *testing.T) {
			ndjson := route.name == "NDJSON"
			size := map[bool]int{}
			for _, whole := range []bool{true, false} {
				open := make(chan struct{})
				model := fake.New(turn(paced(0, 200, "MARK"), []fake.Step{gate(open)}))
				var api *httpapi.Handler
				h := newHarness(t, model, withMiddleware(func(h http.Handler) http.Handler {
					api = h.(*httpapi.Handler)
					if whole {
						httpapi.KeepWholeCopies(api)
					}
					return h
				}))
				resp := h.request(t.Context(), "POST", route.post, "alice", route.body(t))
				head := readUpTo(t, bufio.NewReader(resp.Body), ndjson, "MARK")
				transport := map[bool]string{false: "ui", true: "ndjson"}[ndjson]
				size[whole] = httpapi.CopyLen(api, transport, "alice", route.idOf(t, head))
				if whole && size[whole] != len(head) {
					t.Errorf("the whole copy holds %d bytes, the client got %d", size[whole], len(head))
				}
				close(open)
				discard(resp)
			}
			t.Logf("copy of a 200-delta answer at its end: %d bytes whole, %d compacted", size[true], size[false])
			if size[false] <= 0 || size[false]*3 > size[true] {
				t.Errorf("the compacted copy holds %d bytes of the %d streamed, want under a third", size[false], size[true])
			}
		})
	}
}
