package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/store"
)

// FuzzParseFollow: any payload on the follow topic is a whole request or
// refused, never a panic; a request it takes names a transport, an owner,
// an id and a reply topic of this package's, and encodes back to itself.
func FuzzParseFollow(f *testing.F) {
	f.Add([]byte(`{"t":"ui","u":"alice","id":"chat-1","r":"parley.reply.ABC"}`))
	f.Add([]byte(`{"t":"ndjson","u":"a\u0000b","id":"x","r":"parley.reply.a b"}`))
	f.Add([]byte(`{"t":"ui","u":"","id":"x","r":"parley.follow"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"t":"ui","u":"alice","id":"chat-1","r":"parley.reply.ABC","s":true}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		req, err := parseFollow(p)
		if err != nil {
			return
		}
		if req.Transport != transportUI && req.Transport != transportNDJSON || req.Owner == "" || req.ID == "" {
			t.Fatalf("took an incomplete request %+v from %q", req, p)
		}
		if !strings.HasPrefix(req.Reply, replyPrefix) || !store.ValidRelayTopic(req.Reply) {
			t.Fatalf("took reply topic %q from %q", req.Reply, p)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := parseFollow(again); err != nil || back != req {
			t.Fatalf("%+v did not round-trip: %+v, %v", req, back, err)
		}
	})
}

// FuzzParseFrame: any relayed payload is a frame or refused, never a
// panic; a frame it takes encodes back to the same bytes, and only a data
// frame carries data.
func FuzzParseFrame(f *testing.F) {
	f.Add(appendFrame(nil, frameData, 0, []byte("data: {}\n\n")))
	f.Add(appendFrame(nil, frameEnd, 1<<40, nil))
	f.Add(appendFrame(nil, frameBeat, 7, nil))
	f.Add([]byte{frameData, 0x80})
	f.Add([]byte{frameEnd, 0x80, 0x00})
	f.Add([]byte{frameOver, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, p []byte) {
		kind, seq, data, err := parseFrame(p)
		if err != nil {
			return
		}
		if (kind == frameData) != (len(data) > 0) {
			t.Fatalf("frame %q of %q carries %d bytes", kind, p, len(data))
		}
		if back := appendFrame(nil, kind, seq, data); !bytes.Equal(back, p) {
			t.Fatalf("frame %q %d %q encodes to %q, not %q", kind, seq, data, back, p)
		}
	})
}
