package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/store"
)

// relayCases run only on a store that implements store.Relay, and skip
// when it does not support relaying on its database.
var relayCases = withCapability("store.Relay", []capabilityCase[store.Relay]{
	{"PublishReachesEverySubscriberOfTheTopicInOrderAndNoOther", testRelayOrder},
	{"PayloadsRoundTripEveryByte", testRelayBytes},
	{"SubscriptionEndsWithItsContext", testRelayContext},
	{"InvalidTopicOrPayloadIsInvalid", testRelayInvalid},
	{"SlowSubscriberIsDroppedAndBlocksNobody", testRelaySlow},
})

// subscribe subscribes to topic, skipping the test when the store does not
// support relaying; Publish must then say so too.
func subscribe(t *testing.T, r store.Relay, ctx context.Context, topic string) <-chan []byte {
	t.Helper()
	ch, err := r.Subscribe(ctx, topic)
	if errors.Is(err, errors.ErrUnsupported) {
		if perr := r.Publish(t.Context(), topic, []byte("x")); !errors.Is(perr, errors.ErrUnsupported) {
			t.Fatalf("Subscribe is unsupported but Publish returned %v, want errors.ErrUnsupported", perr)
		}
		t.Skipf("the store does not support relaying: %v", err)
	}
	must(t, err, "Subscribe "+topic)
	return ch
}

// receive returns the next payload of ch, failing if ch closes or nothing
// comes within watchWait.
func receive(t *testing.T, ch <-chan []byte, what string) []byte {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatalf("the subscription ended before %s", what)
		}
		return p
	case <-time.After(watchWait):
		t.Fatalf("%s did not arrive within %v", what, watchWait)
	}
	return nil
}

func testRelayOrder(t *testing.T, _ store.Store, r store.Relay) {
	a1 := subscribe(t, r, t.Context(), "storetest.a")
	a2 := subscribe(t, r, t.Context(), "storetest.a")
	b := subscribe(t, r, t.Context(), "storetest.b")
	ab := subscribe(t, r, t.Context(), "storetest.ab") // storetest.a is a prefix of it
	must(t, r.Publish(t.Context(), "storetest.ab", []byte("ab")), "Publish")
	const n = 40
	for i := range n {
		// Some payloads long enough to be delivered another way.
		p := fmt.Appendf(nil, "%d", i)
		if i%8 == 7 {
			p = append(p, bytes.Repeat([]byte{'.'}, store.MaxRelayPayload-len(p))...)
		}
		must(t, r.Publish(t.Context(), "storetest.a", p), "Publish")
	}
	must(t, r.Publish(t.Context(), "storetest.a", []byte("end")), "Publish")
	must(t, r.Publish(t.Context(), "storetest.b", []byte("b")), "Publish")
	for _, ch := range []<-chan []byte{a1, a2} {
		for i := range n {
			want := fmt.Sprint(i)
			if got := receive(t, ch, "payload "+want); !bytes.HasPrefix(got, []byte(want)) || len(got) > len(want) && got[len(want)] != '.' {
				t.Fatalf("a subscriber of storetest.a got %q, want %q: payloads out of order, or of another topic", trim(got), want)
			}
		}
		if got := receive(t, ch, "the last payload"); string(got) != "end" {
			t.Fatalf("a subscriber of storetest.a got %q after the %d payloads, want \"end\": a payload came twice", trim(got), n)
		}
	}
	if got := receive(t, b, "storetest.b's payload"); string(got) != "b" {
		t.Errorf("the subscriber of storetest.b got %q first, want only its topic's \"b\"", got)
	}
	if got := receive(t, ab, "storetest.ab's payload"); string(got) != "ab" {
		t.Errorf("the subscriber of storetest.ab got %q first, want only its topic's \"ab\"", trim(got))
	}
}

func testRelayBytes(t *testing.T, _ store.Store, r store.Relay) {
	ch := subscribe(t, r, t.Context(), "storetest.bytes")
	other := subscribe(t, r, t.Context(), "storetest.bytes")
	// A payload is the reader's own: the publisher may reuse its buffer,
	// and one reader's changes do not reach another.
	buf := []byte("mine")
	must(t, r.Publish(t.Context(), "storetest.bytes", buf), "Publish")
	copy(buf, "XXXX")
	got := receive(t, ch, "the first payload")
	if string(got) != "mine" {
		t.Fatalf("the payload came back as %q: the Relay kept the publisher's buffer", got)
	}
	copy(got, "YYYY")
	if got := receive(t, other, "the first payload"); string(got) != "mine" {
		t.Fatalf("another reader's payload came back as %q: readers share one buffer", got)
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	payloads := [][]byte{
		{}, {0}, []byte("a\x00b"), all, []byte("\xff\xfe not UTF-8 \xc3"), []byte("'; NOTIFY x; --"),
		bytes.Repeat([]byte{0, '\n', 0xff}, store.MaxRelayPayload/3+1)[:store.MaxRelayPayload],
	}
	for _, p := range payloads {
		must(t, r.Publish(t.Context(), "storetest.bytes", p), fmt.Sprintf("Publish %d bytes", len(p)))
	}
	for i, want := range payloads {
		if got := receive(t, ch, fmt.Sprintf("payload %d", i)); !bytes.Equal(got, want) {
			t.Errorf("payload %d of %d bytes came back as %d bytes %q", i, len(want), len(got), trim(got))
		}
	}
}

func trim(p []byte) []byte { return p[:min(len(p), 40)] }

func testRelayContext(t *testing.T, _ store.Store, r store.Relay) {
	ctx, stop := context.WithCancel(t.Context())
	ch := subscribe(t, r, ctx, "storetest.ctx")
	stop()
	if drained(ch) < 0 {
		t.Fatalf("the channel was not closed within %v of its context ending", watchWait)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Subscribe(done, "storetest.ctx"); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a canceled context: %v, want context.Canceled", err)
	}
}

func testRelayInvalid(t *testing.T, _ store.Store, r store.Relay) {
	subscribe(t, r, t.Context(), "storetest.valid")
	for _, topic := range []string{"", "has space", "nul\x00", "tab\t", "é", strings.Repeat("t", store.MaxRelayTopic+1)} {
		if err := r.Publish(t.Context(), topic, nil); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Publish on topic %q: %v, want store.ErrInvalid", topic, err)
		}
		if _, err := r.Subscribe(t.Context(), topic); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Subscribe to topic %q: %v, want store.ErrInvalid", topic, err)
		}
	}
	if err := r.Publish(t.Context(), strings.Repeat("t", store.MaxRelayTopic), nil); err != nil {
		t.Errorf("Publish on a topic of MaxRelayTopic bytes: %v", err)
	}
	if err := r.Publish(t.Context(), "storetest.valid", make([]byte, store.MaxRelayPayload+1)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Publish of MaxRelayPayload+1 bytes: %v, want store.ErrInvalid", err)
	}
}

func testRelaySlow(t *testing.T, _ store.Store, r store.Relay) {
	slow := subscribe(t, r, t.Context(), "storetest.slow")
	fast := subscribe(t, r, t.Context(), "storetest.slow")
	// The publisher waits for the reading subscriber after every half
	// buffer, so only the other one falls behind.
	n, half := store.RelayBuffer+20, store.RelayBuffer/2
	caught := make(chan struct{})
	published := make(chan error, 1)
	go func() {
		for i := range n {
			if err := r.Publish(t.Context(), "storetest.slow", fmt.Appendf(nil, "%d", i)); err != nil {
				published <- err
				return
			}
			if (i+1)%half == 0 {
				select {
				case <-caught:
				case <-t.Context().Done():
				}
			}
		}
		published <- nil
	}()
	for i := range n {
		if got := receive(t, fast, fmt.Sprintf("payload %d", i)); string(got) != fmt.Sprint(i) {
			t.Fatalf("the reading subscriber got %q, want %d", got, i)
		}
		if (i+1)%half == 0 {
			caught <- struct{}{}
		}
	}
	must(t, <-published, "Publish")
	switch got := drained(slow); {
	case got < 0:
		t.Fatalf("the subscriber that fell %d payloads behind was not dropped (its channel closed) within %v", n-store.RelayBuffer, watchWait)
	case got >= n:
		t.Errorf("the subscriber that never read got all %d payloads, past RelayBuffer (%d)", got, store.RelayBuffer)
	}
}

// drained reads ch until it is closed and returns how many payloads it
// held, or -1 if it is not closed within watchWait.
func drained(ch <-chan []byte) int {
	timeout := time.After(watchWait)
	for n := 0; ; n++ {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
		case <-timeout:
			return -1
		}
	}
}
