package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/store"
)

// Resuming a stream that runs on another instance. When the Engine's Store
// is a store.Relay (sqlstore on PostgreSQL: LISTEN/NOTIFY), a resume that
// finds no live stream here, for a thread of the caller's whose last
// answer is still streaming, asks the other instances for it: it
// subscribes to a reply topic of its own, publishes a follow request
// (transport, owner, id, reply topic) on followTopic, and waits up to
// followWait for the first frame. The instance running the stream relays
// it there, from its first byte and then live, as numbered frames, and
// ends with an end frame. Nothing crosses the database unless someone
// resumes elsewhere: an instance listens for follow requests only while it
// has live streams (and followLinger after), and relays only on request.
//
// A frame is one byte of kind, the sequence number (uvarint, from 0) and,
// for a data frame, the stream's next bytes. A gap in the numbers, a lost
// subscription or followLost of silence ends the resumed response with the
// transport's "too long" chunk, as a stream past maxReplayBytes does, never
// as if it were complete.

const (
	// followTopic is the topic of follow requests.
	followTopic = "parley.follow"
	// replyPrefix begins each reply topic; a random suffix follows.
	replyPrefix = "parley.reply."
	// followWait bounds the wait for another instance's first frame: a
	// resume of a stream that runs nowhere answers 204 after it. The
	// request is repeated every followRetry meanwhile, in case the
	// instance running the stream was not listening yet (it begins with
	// its first live stream).
	followWait  = 2 * time.Second
	followRetry = 250 * time.Millisecond
	// followLinger is how long a Handler keeps listening for follow
	// requests after its last live stream ended.
	followLinger = 3 * time.Second
	// relayGather lets the writes of a stream gather into one frame.
	relayGather = 20 * time.Millisecond
	// relayQuiet is the silence after which the relaying instance sends a
	// heartbeat frame, and followLost the one after which the resumed
	// response gives up on it.
	relayQuiet = 10 * time.Second
	followLost = 3 * relayQuiet
	// maxRelays bounds the streams one Handler relays at once, and
	// maxRelaysPerOwner those of one user: one user's resumes cannot take
	// every slot.
	maxRelays         = 64
	maxRelaysPerOwner = 4
	// maxFrameData is the most stream bytes one frame carries.
	maxFrameData = store.MaxRelayPayload - 1 - binary.MaxVarintLen64
)

// The kinds of frame.
const (
	frameData = 'd' // the stream's next bytes
	frameEnd  = 'e' // the stream ended: nothing follows
	frameOver = 'x' // the stream passed maxReplayBytes: it cannot be followed further
	frameBeat = 'h' // nothing new; the stream goes on
)

// Transports of a follow request.
const (
	transportUI     = "ui"
	transportNDJSON = "ndjson"
)

// followRequest asks the instance running a stream to relay it.
type followRequest struct {
	Transport string `json:"t"`
	Owner     string `json:"u"`
	ID        string `json:"id"`
	Reply     string `json:"r"`
	// Stop says the follower left: the relay to Reply ends.
	Stop bool `json:"s,omitempty"`
}

var errRelayFrame = errors.New("httpapi: malformed relay message")

// parseFollow decodes a follow request, refusing one that is not whole.
func parseFollow(p []byte) (followRequest, error) {
	var req followRequest
	if err := json.Unmarshal(p, &req); err != nil {
		return followRequest{}, errRelayFrame
	}
	if req.Transport != transportUI && req.Transport != transportNDJSON || req.Owner == "" || req.ID == "" ||
		!strings.HasPrefix(req.Reply, replyPrefix) || !store.ValidRelayTopic(req.Reply) {
		return followRequest{}, errRelayFrame
	}
	return req, nil
}

// appendFrame appends a frame to dst.
func appendFrame(dst []byte, kind byte, seq uint64, data []byte) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, seq)
	return append(dst, data...)
}

// parseFrame decodes a frame; data aliases p.
func parseFrame(p []byte) (kind byte, seq uint64, data []byte, err error) {
	if len(p) < 2 {
		return 0, 0, nil, errRelayFrame
	}
	kind = p[0]
	seq, n := binary.Uvarint(p[1:])
	if n <= 0 || n != len(binary.AppendUvarint(nil, seq)) { // one encoding per number
		return 0, 0, nil, errRelayFrame
	}
	data = p[1+n:]
	switch {
	case kind == frameData && len(data) > 0:
	case (kind == frameEnd || kind == frameOver || kind == frameBeat) && len(data) == 0:
	default:
		return 0, 0, nil, errRelayFrame
	}
	return kind, seq, data, nil
}

// follows is a Handler's side of relaying its live streams: whether it
// listens for follow requests, and how many streams it relays.
type follows struct {
	mu      sync.Mutex
	live    int                  // streams in uiLive and live
	stop    context.CancelFunc   // ends the listening; nil when not listening
	endings int                  // times live fell to 0: names the linger that may stop
	replies map[string]*relaying // the reply topics relayed to now: one relay each
	off     bool                 // the Store does not support relaying
}

// liveCount counts a live stream starting (+1) or ending (-1): the first
// starts listening for follow requests, and the listening stops
// followLinger after the last ends, unless another starts meanwhile.
func (h *Handler) liveCount(delta int) {
	f := &h.follows
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live += delta
	switch {
	case f.live > 0 && f.stop == nil && !f.off:
		ctx, stop := context.WithCancel(context.Background())
		f.stop = stop
		go h.serveFollows(ctx)
	case f.live == 0 && f.stop != nil:
		f.endings++
		n := f.endings
		time.AfterFunc(followLinger, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.live == 0 && f.endings == n && f.stop != nil {
				f.stop()
				f.stop = nil
			}
		})
	}
}

// serveFollows answers follow requests until ctx ends, subscribing again
// when a subscription ends early.
func (h *Handler) serveFollows(ctx context.Context) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		reqs, err := h.relay.Subscribe(ctx, followTopic)
		if errors.Is(err, errors.ErrUnsupported) {
			h.relayUnsupported()
			return
		}
		if err == nil {
			wait = 100 * time.Millisecond
			for p := range reqs {
				h.answerFollow(p)
			}
			continue
		}
		if ctx.Err() == nil {
			h.cfg.Logger.Warn("httpapi: listening for follow requests", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// relayUnsupported notes that the Store cannot relay on its database, so
// that resumes answer 204 at once and nothing listens for follows.
func (h *Handler) relayUnsupported() {
	f := &h.follows
	f.mu.Lock()
	defer f.mu.Unlock()
	f.off = true
}

// relayOff reports whether resumes must not ask other instances.
func (h *Handler) relayOff() bool {
	f := &h.follows
	f.mu.Lock()
	defer f.mu.Unlock()
	return h.relay == nil || f.off
}

// answerFollow starts relaying the stream a follow request names, if it
// is live here, of that transport and owner (the key the local resume
// uses), and resumable.
func (h *Handler) answerFollow(p []byte) {
	req, err := parseFollow(p)
	if err != nil {
		return
	}
	s := h.liveOf(req.Transport).get(req.Owner, req.ID)
	if s == nil {
		return
	}
	f := &h.follows
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.replies[req.Reply]; r != nil || req.Stop {
		if r != nil && req.Stop && r.owner == req.Owner {
			r.stopOnce.Do(func() { close(r.stop) })
		}
		return // a repeated request: the stream is on its way
	}
	owned := 0
	for _, r := range f.replies {
		if r.owner == req.Owner {
			owned++
		}
	}
	switch {
	case len(f.replies) >= maxRelays, owned >= maxRelaysPerOwner:
		h.cfg.Logger.Warn("httpapi: follow request ignored: too many streams relayed", "max", maxRelays, "per_user", maxRelaysPerOwner)
		return
	case f.replies == nil:
		f.replies = map[string]*relaying{}
	}
	r := &relaying{owner: req.Owner, stop: make(chan struct{})}
	f.replies[req.Reply] = r
	go func() {
		h.relayStream(s, req.Reply, r.stop)
		f.mu.Lock()
		delete(f.replies, req.Reply)
		f.mu.Unlock()
	}()
}

// relaying is one stream relayed to a follower: stop is closed when the
// follower says it left.
type relaying struct {
	owner    string
	stop     chan struct{}
	stopOnce sync.Once
}

// liveOf returns the live streams of a transport.
func (h *Handler) liveOf(transport string) *uiLiveStreams {
	if transport == transportUI {
		return &h.uiLive
	}
	return &h.live
}

// relayStream publishes s on reply as frames, from its first byte, then
// live, until it ends (an end frame), passes maxReplayBytes (an over
// frame) or a publish fails. A stream already ended or too long sends
// nothing: the resume answers 204, as it would here.
func (h *Handler) relayStream(s *uiLiveStream, reply string, stop <-chan struct{}) {
	var seq uint64
	send := func(kind byte, data []byte) bool {
		ctx, cancel := context.WithTimeout(context.Background(), followLost)
		defer cancel()
		err := h.relay.Publish(ctx, reply, appendFrame(nil, kind, seq, data))
		seq++
		return err == nil
	}
	p, done, replayable, wake := s.join()
	defer s.leave()
	if done || !replayable {
		return
	}
	off := 0
	for {
		for len(p) > 0 {
			n := min(len(p), maxFrameData)
			if !send(frameData, p[:n]) {
				return
			}
			p, off = p[n:], off+n
		}
		if done {
			send(frameEnd, nil)
			return
		}
		select {
		case <-stop:
			return // the follower left
		case <-wake:
			time.Sleep(relayGather)
		case <-time.After(relayQuiet):
			if !send(frameBeat, nil) {
				return
			}
		}
		p, done, replayable, wake = s.from(off)
		if !replayable {
			send(frameOver, nil)
			return
		}
	}
}

// resumeElsewhere serves a resume with no live stream here: the stream
// relayed from the instance running it, or 204 when the caller's thread
// id has no answer streaming or no instance answers within followWait.
// A Store that fails to say whether the thread streams, or to carry the
// follow request, is an error (500), not "nothing streams": the client
// would take the answer for ended.
func (h *Handler) resumeElsewhere(w http.ResponseWriter, r *http.Request, u parley.User, transport, id string, headers map[string]string, tooLong []byte) {
	if h.relayOff() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	switch streaming, err := h.eng.Streaming(r.Context(), u, id); {
	case err != nil && r.Context().Err() == nil && assistant.Code(err) != assistant.CodeNotFound:
		h.fail(w, r, err)
		return
	case !streaming: // a thread deleted meanwhile streams nothing
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	req := followRequest{Transport: transport, Owner: u.ID, ID: id, Reply: replyPrefix + rand.Text()}
	frames, first, err := h.requestFollow(ctx, cancel, req)
	if frames == nil {
		h.stopFollow(req)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	if !relayed(w, r, frames, first, tooLong) {
		h.stopFollow(req)
	}
}

// stopFollow tells the instance relaying req's stream that its follower
// left, so it stops publishing: best effort, within a second.
func (h *Handler) stopFollow(req followRequest) {
	req.Stop = true
	msg, err := json.Marshal(req)
	if err != nil || len(msg) > store.MaxRelayPayload {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.relay.Publish(ctx, followTopic, msg)
}

// requestFollow publishes req with a fresh reply topic, subscribed first,
// and returns the reply's frames and its first, a data frame numbered 0,
// if one comes within followWait (which cancel enforces on ctx). With no
// such frame it returns nil frames, and the Store's error if its relay
// failed; no answer in time, or a relay the Store does not support, is
// no error.
func (h *Handler) requestFollow(ctx context.Context, cancel context.CancelFunc, req followRequest) (<-chan []byte, []byte, error) {
	msg, err := json.Marshal(req)
	if err != nil || len(msg) > store.MaxRelayPayload {
		return nil, nil, nil
	}
	timer := time.AfterFunc(followWait, cancel)
	frames, err := h.relay.Subscribe(ctx, req.Reply)
	var first []byte
	if err == nil {
		first, err = h.askFollow(ctx, msg, frames)
	}
	if !timer.Stop() || err != nil {
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			h.relayUnsupported()
		case err != nil && ctx.Err() == nil:
			return nil, nil, fmt.Errorf("httpapi: ask other instances for a stream: %w", err)
		}
		return nil, nil, nil
	}
	if kind, seq, _, err := parseFrame(first); err != nil || kind != frameData || seq != 0 {
		return nil, nil, nil
	}
	return frames, first, nil
}

// errRelayLost is a subscription the Store closed early: it lost its
// connection, or the reader fell behind.
var errRelayLost = errors.New("httpapi: the Store's relay closed the subscription")

// askFollow publishes the follow request msg, again every followRetry,
// until the first frame comes on frames; frames closed first is ctx's
// error, or errRelayLost while ctx is live.
func (h *Handler) askFollow(ctx context.Context, msg []byte, frames <-chan []byte) ([]byte, error) {
	retry := time.NewTicker(followRetry)
	defer retry.Stop()
	for {
		if err := h.relay.Publish(ctx, followTopic, msg); err != nil {
			return nil, err
		}
		select {
		case first, ok := <-frames:
			switch {
			case ok:
				return first, nil
			case ctx.Err() != nil:
				return nil, ctx.Err()
			}
			return nil, errRelayLost
		case <-retry.C:
		}
	}
}

// relayed writes the relayed stream to w, from its first frame on, until
// its end frame or the client leaves. Anything but the next frame in
// order, or followLost of silence, ends it with tooLong: the client then
// reads the stored thread rather than take a partial stream for a whole.
// It reports whether the stream came to its end (or the relaying instance
// gave up on it), so the caller need not ask it to stop.
func relayed(w http.ResponseWriter, r *http.Request, frames <-chan []byte, p []byte, tooLong []byte) bool {
	rc := http.NewResponseController(w)
	lost := time.NewTimer(followLost)
	defer lost.Stop()
	for next := uint64(0); ; next++ {
		kind, seq, data, err := parseFrame(p)
		if err != nil || seq != next || kind == frameOver {
			_, _ = w.Write(tooLong)
			return kind == frameOver && err == nil && seq == next
		}
		switch kind {
		case frameEnd:
			return true
		case frameData:
			if _, err := w.Write(data); err != nil {
				return false
			}
			_ = rc.Flush()
		}
		lost.Reset(followLost)
		var ok bool
		select {
		case p, ok = <-frames:
		case <-lost.C:
		}
		if r.Context().Err() != nil {
			return false
		}
		if !ok {
			_, _ = w.Write(tooLong)
			return false
		}
	}
}
