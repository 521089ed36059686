package httpapi

import (
	"net/http"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
)

// ndjsonType is the content type of the NDJSON stream and of its resume.
const ndjsonType = "application/x-ndjson"

// resumeStream serves GET /api/chat/threads/{id}/stream: the NDJSON
// stream of the thread's turn running on this instance, or on another
// sharing a relaying Store (relay.go), replayed from its first block and
// followed to its end, or 204 when none runs (it ended, it runs on another
// instance that the Store cannot reach, or it is not this user's). A page
// reloaded mid-answer uses it to show the answer growing again; on a 204
// it reads the thread, and polls while its last answer is still streaming.
// Only the owner's own streams are found: a thread id is looked up under
// the caller's user id, so a staff reader or another user gets 204.
func (h *Handler) resumeStream(w http.ResponseWriter, r *http.Request, u parley.User) {
	b := blocks.Block{Kind: blocks.Error, ErrorCode: string(assistant.CodeUnsupported),
		Content: "This answer is too long to follow here. Reload the conversation to see it."}
	h.resume(w, r, u, transportNDJSON, ndjsonHeaders, blocks.AppendNDJSON(nil, &b))
}

// ndjsonHeaders are the response headers of an NDJSON stream and of its
// resume.
var ndjsonHeaders = map[string]string{
	"Content-Type":           ndjsonType,
	"Cache-Control":          "no-cache",
	"X-Content-Type-Options": "nosniff",
	"X-Accel-Buffering":      "no",
}

// resume serves a resume route of either transport: the stream of u's
// id running on this instance, with headers, replayed from its start and
// followed to its end (see follow, which ends it with tooLong past the
// replay limit), or 204 when it has ended or is not resumable. With no
// such stream here, it asks the instances sharing the Store
// (resumeElsewhere).
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, u parley.User, transport string, headers map[string]string, tooLong []byte) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	s := h.liveOf(transport).get(u.ID, id)
	if s == nil {
		h.resumeElsewhere(w, r, u, transport, id, headers, tooLong)
		return
	}
	p, done, replayable, wake := s.join()
	defer s.leave()
	if !replayable || done {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	follow(w, r, s, p, done, wake, tooLong)
}

// follow writes a live stream to w from p, what it held when read, on:
// then what it gains, until it is done or the client leaves. A stream that
// passes maxReplayBytes meanwhile is not followed further: tooLong, which
// says so, ends the response rather than letting it end as if complete.
func follow(w http.ResponseWriter, r *http.Request, s *uiLiveStream, p []byte, done bool, wake <-chan struct{}, tooLong []byte) {
	rc := http.NewResponseController(w)
	off := 0
	for {
		if len(p) > 0 {
			if _, err := w.Write(p); err != nil {
				return
			}
			_ = rc.Flush()
			off += len(p)
		}
		if done {
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		}
		var replayable bool
		p, done, replayable, wake = s.from(off)
		if !replayable {
			_, _ = w.Write(tooLong)
			return
		}
	}
}
