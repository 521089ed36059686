package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/blocks/uistream"
	"github.com/parleyhq/parley/store"
)

// The AI SDK route: POST /api/chat/ui speaks the Vercel AI SDK's UI
// message stream, so useChat({api: '/api/chat/ui'}) works against the
// Engine. The request is the body useChat sends ({id, messages, trigger,
// messageId}); the chat id names the thread. Only the last message is
// read: the thread's stored state is the truth, never the client's copy of
// the history.
//
//   - A user message starts a turn (a new thread under the chat id if
//     there is none). With messageId, it replaces that stored user message
//     (an edit).
//   - trigger regenerate-message answers the last user message again.
//   - An assistant message continues the turn that ended waiting on the
//     user: each tool part in state approval-responded decides its confirm
//     card (approval id = card token), one turn per decision; tool parts
//     with output-available or output-error answer the pending client-side
//     calls; an ask_user part with output answers the form. The reply keeps
//     the client's message id.
//
// A continuation that was already carried out (the same POST twice) is
// answered with an empty stream, not an error. GET /api/chat/ui/{id}/stream
// resumes a stream still running on this instance, replaying it from the
// start; it answers 204 when nothing is streaming here.

// uiRequest is the body useChat sends. Extra keys (body options of the
// client) are ignored, except those named here.
type uiRequest struct {
	ID        string
	Trigger   string
	MessageID string
	Last      uiMessage // the last of messages; the others are not kept
	Count     int       // how many messages there were

	Page        string
	PageContext string
	Entities    []assistant.EntityRef
}

type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

type uiPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
	} `json:"approval"`
}

// uiBodyFactor is how much larger than MaxBodyBytes a useChat body may be:
// the client sends the whole conversation, of which only the last message
// is kept, one message in memory at a time.
const uiBodyFactor = 16

// decodeUI reads a useChat body. On failure it has answered the request.
func (h *Handler) decodeUI(w http.ResponseWriter, r *http.Request) (uiRequest, bool) {
	var req uiRequest
	limit := h.cfg.MaxBodyBytes * uiBodyFactor
	if r.ContentLength > limit {
		h.tooLarge(w, r)
		return req, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	err := decodeUIBody(json.NewDecoder(r.Body), &req)
	if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
		h.tooLarge(w, r)
		return req, false
	}
	if err != nil {
		h.invalid(w, r, err.Error())
		return req, false
	}
	return req, true
}

// decodeUIBody reads the body key by key, the messages one at a time.
func decodeUIBody(dec *json.Decoder, req *uiRequest) error {
	if tok, err := dec.Token(); err != nil {
		return errors.New(describeJSONError(err))
	} else if tok != json.Delim('{') {
		return errors.New("the body must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errors.New(describeJSONError(err))
		}
		key, _ := tok.(string)
		var dst any
		switch key {
		case "id":
			dst = &req.ID
		case "trigger":
			dst = &req.Trigger
		case "messageId":
			dst = &req.MessageID
		case "page":
			dst = &req.Page
		case "page_context", "pageContext":
			dst = &req.PageContext
		case "entities":
			dst = &req.Entities
		case "messages":
			if err := decodeMessages(dec, req); err != nil {
				return err
			}
			continue
		default:
			var skip json.RawMessage
			dst = &skip
		}
		if err := dec.Decode(dst); err != nil {
			return errors.New(describeJSONError(err))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return errors.New(describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailingData
	}
	return nil
}

func decodeMessages(dec *json.Decoder, req *uiRequest) error {
	if tok, err := dec.Token(); err != nil {
		return errors.New(describeJSONError(err))
	} else if tok != json.Delim('[') {
		return errors.New("messages must be an array")
	}
	for dec.More() {
		var m uiMessage
		if err := dec.Decode(&m); err != nil {
			return errors.New("messages: " + describeJSONError(err))
		}
		req.Last, req.Count = m, req.Count+1
	}
	_, err := dec.Token()
	return err
}

// uiStream serves POST /api/chat/ui.
func (h *Handler) uiStream(w http.ResponseWriter, r *http.Request, u parley.User) {
	body, ok := h.decodeUI(w, r)
	if !ok {
		return
	}
	switch {
	case body.ID == "":
		h.invalid(w, r, "id is required: the chat id")
		return
	case body.Count == 0:
		h.invalid(w, r, "messages is empty")
		return
	case body.Trigger != "submit-message" && body.Trigger != "regenerate-message":
		h.invalid(w, r, `trigger must be "submit-message" or "regenerate-message"`)
		return
	case strings.ContainsRune(body.ID+body.MessageID+body.Page+body.PageContext, 0):
		h.invalid(w, r, "the request contains a NUL character")
		return
	}
	reqs, continues, err := h.uiPlan(r, u, body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	opts := uistream.Options{}
	if continues {
		opts.MessageID = body.Last.ID // the client's message goes on
		for _, req := range reqs {
			// The client has the outputs it gave: the server's summary of
			// them must not replace them.
			for _, tr := range req.ToolResults {
				opts.Answered = append(opts.Answered, tr.ID)
			}
			if req.Form != nil {
				opts.Answered = append(opts.Answered, req.Form.ID)
			}
		}
	}
	h.serveUI(w, r, u, body.ID, opts, reqs)
}

// uiPlan turns the body into the Engine requests it stands for, in order;
// continues reports whether they continue the client's last message.
func (h *Handler) uiPlan(r *http.Request, u parley.User, body uiRequest) ([]assistant.Request, bool, error) {
	base := assistant.Request{ThreadID: body.ID, Page: body.Page, PageContext: body.PageContext, Entities: body.Entities}
	last := body.Last
	switch {
	case body.Trigger == "regenerate-message":
		base.Regenerate = true
		return []assistant.Request{base}, false, nil
	case last.Role == "user":
		base.Message = uiText(last)
		if body.MessageID != "" {
			base.Replaces = body.MessageID // an edit of that stored message
		} else {
			base.CreateThread = true
		}
		return []assistant.Request{base}, false, nil
	case last.Role != "assistant":
		return nil, false, invalidUI("the last message must be the user's or the assistant's")
	}
	// A continuation: what the client answered in its last message.
	_, msgs, err := h.eng.Thread(r.Context(), u, body.ID, assistant.ThreadOptions{})
	if err != nil {
		return nil, false, err
	}
	ps, err := h.eng.Proposals(r.Context(), u, body.ID)
	if err != nil {
		return nil, false, err
	}
	pending := map[string]bool{}
	for _, p := range ps {
		pending[p.Token] = p.Status == store.ProposalPending
	}
	wait := assistant.WaitingOn(msgs)
	var reqs []assistant.Request
	var results []assistant.ToolResult
	for _, p := range last.Parts {
		if !strings.HasPrefix(p.Type, "tool-") && p.Type != "dynamic-tool" {
			continue
		}
		switch {
		case p.State == "approval-responded" && p.Approval != nil && p.Approval.Approved != nil:
			if pending[p.Approval.ID] { // decided already: a repeated POST
				d := base
				d.Decision = &assistant.Decision{Token: p.Approval.ID, Apply: *p.Approval.Approved}
				reqs = append(reqs, d)
			}
		case p.ToolCallID != "" && p.ToolCallID == wait.Form && p.State == "output-available":
			f := base
			f.Form = &assistant.FormAnswer{ID: p.ToolCallID, Values: formValues(p.Output)}
			reqs = append(reqs, f)
		case slicesContains(wait.ToolCalls, p.ToolCallID) && (p.State == "output-available" || p.State == "output-error"):
			out := p.Output
			if p.State == "output-error" {
				out, _ = json.Marshal(map[string]string{"error": p.ErrorText})
			}
			if len(out) == 0 {
				out = json.RawMessage("null")
			}
			results = append(results, assistant.ToolResult{ID: p.ToolCallID, Output: out})
		}
	}
	if len(results) > 0 {
		tr := base
		tr.ToolResults = results
		reqs = append(reqs, tr)
	}
	return reqs, true, nil
}

func slicesContains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id && id != "" {
			return true
		}
	}
	return false
}

func invalidUI(what string) error {
	return &assistant.Error{Code: assistant.CodeInvalidRequest, Op: "ui request", Err: errors.New(what), Message: "The request is not valid: " + what + "."}
}

// uiText is the text of a message's text parts.
func uiText(m uiMessage) string {
	var parts []string
	for _, p := range m.Parts {
		if p.Type == "text" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// formValues reads form answers given as a tool output: {"values": {...}}
// or the values object itself.
func formValues(out json.RawMessage) map[string]json.RawMessage {
	var wrapped struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	if json.Unmarshal(out, &wrapped) == nil && wrapped.Values != nil {
		return wrapped.Values
	}
	var values map[string]json.RawMessage
	_ = json.Unmarshal(out, &values)
	return values
}

// serveUI runs the requests in order and writes their blocks as one UI
// message stream. A refusal before anything streamed is an HTTP status
// with the safe message as plain text (useChat shows a failed response's
// text as its error); later failures are error chunks. The stream is also
// kept for a resume until it ends, and is read to its end even if the
// client leaves.
func (h *Handler) serveUI(w http.ResponseWriter, r *http.Request, u parley.User, chatID string, opts uistream.Options, reqs []assistant.Request) {
	live := h.uiLive.start(chatID, u.ID)
	defer h.uiLive.end(chatID, live)
	out := &uiWriter{w: w, rc: http.NewResponseController(w), live: live}
	enc := uistream.NewEncoder(out, opts)
	started := false
	begin := func() {
		started = true
		for k, v := range uistream.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusOK)
	}
	ctx := r.Context()
	for i, req := range reqs {
		for b := range h.eng.Stream(ctx, u, req) {
			if !started {
				if b.Kind == blocks.Error && i == 0 {
					code := assistant.ErrorCode(b.ErrorCode)
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.Header().Set("X-Content-Type-Options", "nosniff")
					w.WriteHeader(StatusOf(code))
					_, _ = io.WriteString(w, b.Content)
					live.abandon()
					return
				}
				begin()
			}
			_ = enc.Block(b)
			if b.Kind == blocks.Error {
				_ = enc.Close()
				return
			}
		}
	}
	if !started {
		begin() // nothing left to do: an empty continuation
	}
	_ = enc.Close()
}

// uiWriter writes SSE to the client, flushing each event, and keeps a copy
// for a resume. A client that left is no error: the copy goes on.
type uiWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	live *uiLiveStream
	gone bool
}

func (u *uiWriter) Write(p []byte) (int, error) {
	u.live.append(p)
	if !u.gone {
		if _, err := u.w.Write(p); err != nil {
			u.gone = true
		} else if err := u.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			u.gone = true
		}
	}
	return len(p), nil
}

// maxReplayBytes bounds the copy of one stream kept for a resume; a longer
// stream is not resumable (the GET answers 204).
const maxReplayBytes = 4 << 20

// uiLiveStreams are the UI streams running on this instance, by chat id.
type uiLiveStreams struct {
	mu sync.Mutex
	m  map[string]*uiLiveStream
}

type uiLiveStream struct {
	owner string
	mu    sync.Mutex
	buf   []byte
	done  bool
	over  bool          // past maxReplayBytes: not resumable
	wake  chan struct{} // closed and replaced on every change
}

func (l *uiLiveStreams) start(id, owner string) *uiLiveStream {
	s := &uiLiveStream{owner: owner, wake: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*uiLiveStream{}
	}
	l.m[id] = s
	return s
}

func (l *uiLiveStreams) end(id string, s *uiLiveStream) {
	s.finish()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[id] == s {
		delete(l.m, id)
	}
}

func (l *uiLiveStreams) get(id, owner string) *uiLiveStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.m[id]; s != nil && s.owner == owner {
		return s
	}
	return nil
}

func (s *uiLiveStream) append(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf)+len(p) > maxReplayBytes {
		s.over, s.buf = true, nil
	}
	if !s.over {
		s.buf = append(s.buf, p...)
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *uiLiveStream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.done = true
		close(s.wake)
		s.wake = make(chan struct{})
	}
}

// abandon marks a stream that never started: there is nothing to resume.
func (s *uiLiveStream) abandon() {
	s.mu.Lock()
	s.over = true
	s.mu.Unlock()
	s.finish()
}

// from returns what was written from offset on, whether the stream has
// ended, whether it can be replayed, and a channel closed on the next
// change.
func (s *uiLiveStream) from(off int) ([]byte, bool, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return nil, s.done, false, s.wake
	}
	return s.buf[off:], s.done, true, s.wake
}

// uiResume serves GET /api/chat/ui/{id}/stream: the stream of the chat
// running on this instance, replayed from its start, or 204.
func (h *Handler) uiResume(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	s := h.uiLive.get(id, u.ID)
	if s == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p, done, replayable, wake := s.from(0)
	if !replayable || done {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	for k, v := range uistream.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
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
		p, done, replayable, wake = s.from(off)
		if !replayable {
			return
		}
	}
}
