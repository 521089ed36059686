package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/blocks/uistream"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// The AI SDK route: POST /api/chat/ui speaks the Vercel AI SDK's UI
// message stream, so useChat({api: '/api/chat/ui'}) works against the
// Engine. The request is the body useChat sends ({id, messages, trigger,
// messageId}); the chat id names the user's thread (assistant.Request's
// CreateThread: the user's own, stored under an id of its own, which the
// start chunk's metadata names). Only the last message is read: the
// thread's stored state is the truth, never the client's copy of the
// history.
//
//   - A user message starts a turn (a new thread for the chat if there is
//     none). With messageId, it replaces that stored user message (an
//     edit).
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
// client, such as sendMessage's {body: {model, settings}}) are ignored,
// except those named here.
type uiRequest struct {
	ID        string
	Trigger   string
	MessageID string
	Last      uiMessage // the last of messages; the others are not kept
	Count     int       // how many messages there were
	Users     int       // how many of them were the user's

	Page        string
	PageContext string
	Entities    []assistant.EntityRef
	Model       string             // as in StreamRequest
	Settings    assistant.Settings // as in StreamRequest
	AutoApprove []string           // as in StreamRequest
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
		Reason   string `json:"reason"` // why a decline, as addToolApprovalResponse takes it
	} `json:"approval"`
}

// uiBodyFactor is how much larger than MaxBodyBytes a useChat body may be:
// the client sends the whole conversation, of which only the last message
// is kept. Each field and each message is held one at a time, and is
// bounded like a whole body of the other routes (see Handler.body).
const uiBodyFactor = 16

// decodeUI reads a useChat body. On failure it has answered the request,
// as every refusal of this route, with a status and the message as text.
func (h *Handler) decodeUI(w http.ResponseWriter, r *http.Request) (uiRequest, bool) {
	var req uiRequest
	body, ok := h.body(w, r, h.cfg.MaxBodyBytes*uiBodyFactor)
	if !ok {
		return req, false
	}
	dec := json.NewDecoder(body)
	err := decodeUIBody(dec, func() { body.next(dec.Buffered()) }, &req)
	if h.overLimit(w, r, body) {
		return req, false
	}
	if err != nil {
		h.invalid(w, r, err.Error())
		return req, false
	}
	return req, true
}

// uiDecodeErr words a decoding error, naming the key it was in.
func uiDecodeErr(key string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF) && key != "":
		return errors.New("the body ends early")
	case key != "":
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field == "" {
			got, _, _ := strings.Cut(te.Value, " ")
			return errors.New(clip(key, maxEchoBytes) + " must be " + article(jsonKind(te.Type)) + ", not " + article(got))
		}
	}
	return errors.New(describeJSONError(err))
}

// decodeUIBody reads the body key by key, the messages one at a time,
// calling next before each key and each message: the bound on what is held
// at once is per key and per message.
func decodeUIBody(dec *json.Decoder, next func(), req *uiRequest) error {
	if tok, err := dec.Token(); err != nil {
		return errors.New(describeJSONError(err))
	} else if tok != json.Delim('{') {
		return errors.New("the body must be a JSON object")
	}
	for dec.More() {
		next()
		tok, err := dec.Token()
		if err != nil {
			return uiDecodeErr("body", err)
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
		case "model":
			dst = &req.Model
		case "settings":
			dst = &req.Settings
		case "auto_approve", "autoApprove":
			dst = &req.AutoApprove
		case "messages":
			if err := decodeMessages(dec, next, req); err != nil {
				return err
			}
			continue
		default:
			var skip json.RawMessage
			dst = &skip
		}
		if err := dec.Decode(dst); err != nil {
			return uiDecodeErr(key, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return uiDecodeErr("body", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailingData
	}
	return nil
}

func decodeMessages(dec *json.Decoder, next func(), req *uiRequest) error {
	if tok, err := dec.Token(); err != nil {
		return errors.New(describeJSONError(err))
	} else if tok != json.Delim('[') {
		return errors.New("messages must be an array")
	}
	for dec.More() {
		next()
		var m uiMessage
		if err := dec.Decode(&m); err != nil {
			return errors.New("messages: " + uiDecodeErr("message", err).Error())
		}
		req.Last, req.Count = m, req.Count+1
		if m.Role == "user" {
			req.Users++
		}
	}
	if _, err := dec.Token(); err != nil {
		return uiDecodeErr("messages", err)
	}
	return nil
}

// uiStream serves POST /api/chat/ui.
func (h *Handler) uiStream(w http.ResponseWriter, r *http.Request, u parley.User) {
	body, ok := h.decodeUI(w, r)
	if !ok {
		return
	}
	bad := func(what string) { h.invalid(w, r, what) }
	switch {
	case body.ID == "":
		bad("id is required: the chat id")
		return
	case body.Count == 0:
		bad("messages is empty")
		return
	case body.Trigger != "submit-message" && body.Trigger != "regenerate-message":
		bad(`trigger must be "submit-message" or "regenerate-message"`)
		return
	case strings.ContainsRune(body.ID+body.MessageID+body.Page+body.PageContext+body.Model, 0):
		bad("the request contains a NUL character")
		return
	}
	plan, err := h.uiPlan(r, u, body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.serveUI(w, r, u, body.ID, plan)
}

// uiPlanned is what a useChat request comes to.
type uiPlanned struct {
	reqs      []assistant.Request // the Engine requests, in order
	continues bool                // they continue the client's last message
	opts      uistream.Options
	// settled are the outcomes of approval parts carried out or refused
	// already (another tab, a repeated POST, an expired card), sent first
	// so the client's parts leave approval-responded; with no reqs, note
	// ends the stream, so the client's automatic resend stops.
	settled []blocks.Block
	note    string
	// threadID is the chat's thread, once the plan has resolved it: ""
	// for a new message, whose thread the Engine resolves or creates.
	threadID string
}

// uiPlan turns the body into the Engine requests it stands for.
func (h *Handler) uiPlan(r *http.Request, u parley.User, body uiRequest) (uiPlanned, error) {
	ctx := r.Context()
	base := assistant.Request{ThreadID: body.ID, Page: body.Page, PageContext: body.PageContext, Entities: body.Entities,
		Model: body.Model, Settings: body.Settings, AutoApprove: body.AutoApprove}
	last := body.Last
	var plan uiPlanned
	one := func(req assistant.Request) (uiPlanned, error) {
		plan.reqs = []assistant.Request{req}
		return plan, nil
	}
	switch {
	case body.Trigger == "submit-message" && last.Role == "user" && body.MessageID == "":
		// A new message: the Engine resolves the chat id, and creates the
		// chat's thread if it has none.
		base.Message, base.CreateThread = uiText(last), true
		return one(base)
	case last.Role != "user" && last.Role != "assistant":
		return plan, invalidUI("the last message must be the user's or the assistant's")
	}
	// Everything else acts on the chat's thread, which must exist. Only
	// its owner may act on it; nothing is read for anyone else.
	th, msgs, err := h.eng.OwnThread(ctx, u, body.ID, assistant.ThreadOptions{})
	if err != nil {
		return plan, err
	}
	base.ThreadID, plan.threadID = th.ID, th.ID
	switch {
	case body.Trigger == "regenerate-message" && body.MessageID == "":
		base.Regenerate = true
		return one(base)
	case body.Trigger == "regenerate-message":
		// An earlier answer: the user message before it is asked again.
		q, ok := questionOf(msgs, body.MessageID)
		if !ok {
			return plan, uiNotFound("That answer does not exist.")
		}
		base.Replaces, base.Message = q.ID, q.Content
		return one(base)
	case last.Role == "user":
		// An edit: the client names its own id for the message, which is
		// the stored id when it loaded the thread, else only its position.
		id, ok := editedID(msgs, body.MessageID, body.Users)
		if !ok {
			return plan, uiNotFound("That message does not exist.")
		}
		base.Replaces, base.Message = id, uiText(last)
		return one(base)
	}
	// A continuation: what the client answered in its last message.
	ps, err := h.eng.Proposals(ctx, u, th.ID)
	if err != nil {
		return plan, err
	}
	cards := map[string]store.Proposal{}
	for _, p := range ps {
		cards[p.Token] = p
	}
	plan.continues = true
	plan.opts.MessageID = last.ID
	wait := assistant.WaitingOn(msgs)
	var decisions []assistant.Request
	var results []assistant.ToolResult
	for _, p := range last.Parts {
		if !strings.HasPrefix(p.Type, "tool-") && p.Type != "dynamic-tool" {
			continue
		}
		switch {
		case p.State == "approval-responded" && p.Approval != nil && p.Approval.Approved != nil:
			card, known := cards[p.Approval.ID]
			if known && card.Status == store.ProposalPending {
				d := base
				d.Decision = &assistant.Decision{Token: p.Approval.ID, Apply: *p.Approval.Approved, Reason: p.Approval.Reason}
				decisions = append(decisions, d)
				continue
			}
			plan.settled = append(plan.settled, settledCard(p.ToolCallID, card, known))
		case p.ToolCallID != "" && p.ToolCallID == wait.Form && p.State == "output-available":
			f := base
			f.Form = &assistant.FormAnswer{ID: p.ToolCallID, Values: formValues(p.Output)}
			plan.reqs = append(plan.reqs, f)
			plan.opts.Answered = append(plan.opts.Answered, p.ToolCallID)
		case p.ToolCallID != "" && slices.Contains(wait.ToolCalls, p.ToolCallID) && (p.State == "output-available" || p.State == "output-error"):
			out := p.Output
			if p.State == "output-error" {
				out, _ = json.Marshal(map[string]string{"error": p.ErrorText})
			}
			if len(out) == 0 {
				out = json.RawMessage("null")
			}
			results = append(results, assistant.ToolResult{ID: p.ToolCallID, Output: out})
			plan.opts.Answered = append(plan.opts.Answered, p.ToolCallID)
		}
	}
	if len(results) > 0 {
		// Results and forms first: a decision's turn would leave the calls
		// they answer no longer the thread's last.
		tr := base
		tr.ToolResults = results
		plan.reqs = append(plan.reqs, tr)
	}
	plan.reqs = append(plan.reqs, decisions...)
	if len(plan.reqs) == 0 {
		plan.note = latestAnswer(msgs)
	}
	return plan, nil
}

// settledCard is the outcome of a card that was no longer pending, as the
// tool result the client's approval-responded part needs.
func settledCard(callID string, p store.Proposal, known bool) blocks.Block {
	b := blocks.Block{Kind: blocks.ToolResult, ID: callID, Name: p.Tool}
	switch {
	case !known:
		b.Content = "That approval does not exist."
	case p.Status == store.ProposalApplied:
		b.OK, b.Content = true, p.Summary
	case p.Status == store.ProposalDeclined:
		b.ErrorCode, b.Content = string(tools.CodeDeclined), "Declined: "+p.Summary
	default:
		b.Content = "This approval expired; nothing was done."
	}
	return b
}

// latestAnswer is the text of the thread's last answer: what a repeated
// continuation shows, since the first one already brought it.
func latestAnswer(msgs []store.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != store.RoleAssistant {
			continue
		}
		var b strings.Builder
		for _, bl := range msgs[i].Blocks {
			if bl.Kind == blocks.Markdown {
				b.WriteString(bl.Content)
			}
		}
		if t := strings.TrimSpace(b.String()); t != "" {
			return t
		}
	}
	return "There is nothing left to answer here."
}

// questionOf is the typed user message an answer answered.
func questionOf(msgs []store.Message, answerID string) (store.Message, bool) {
	var q store.Message
	found := false
	for _, m := range msgs {
		switch {
		case m.Role == store.RoleUser && m.Source == store.SourceTyped:
			q, found = m, true
		case m.Role == store.RoleAssistant && m.ID == answerID:
			return q, found
		}
	}
	return store.Message{}, false
}

// editedID is the stored id of the user message an edit replaces: the id
// the client sent if the thread has it, else the k-th message the user
// typed (the client's user messages are those, in order).
func editedID(msgs []store.Message, id string, k int) (string, bool) {
	n := 0
	var at string
	for _, m := range msgs {
		if m.Role != store.RoleUser {
			continue
		}
		if m.ID == id {
			return id, true
		}
		if m.Source == store.SourceTyped {
			if n++; n == k {
				at = m.ID
			}
		}
	}
	return at, at != ""
}

func uiNotFound(msg string) error {
	return &assistant.Error{Code: assistant.CodeNotFound, Op: "ui request", Err: errors.New(msg), Message: msg}
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

// serveUI runs the plan's requests in order and writes their blocks as
// one UI message stream. A refusal before anything streamed is an HTTP
// status with the safe message as plain text (useChat shows a failed
// response's text as its error); later failures are error chunks. A new
// message's stream is also kept for a resume until it ends (a
// continuation's is not: its replay would lack the parts it continues),
// and every request is carried out, and read to its end, even if the
// client leaves.
func (h *Handler) serveUI(w http.ResponseWriter, r *http.Request, u parley.User, chatID string, plan uiPlanned) {
	out := &uiWriter{w: w, rc: http.NewResponseController(w)}
	enc := uistream.NewEncoder(out, plan.opts)
	started := false
	begin := func() {
		started = true
		if !plan.continues {
			out.live = h.uiLive.start(u.ID, chatID)
		}
		for k, v := range uistream.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusOK)
	}
	defer func() {
		if out.live != nil {
			h.uiLive.end(u.ID, chatID, out.live)
		}
	}()
	if len(plan.settled) > 0 || len(plan.reqs) == 0 {
		begin()
		for _, b := range plan.settled {
			_ = enc.Block(b)
		}
	}
	if len(plan.reqs) == 0 {
		_ = enc.Block(blocks.Block{Kind: blocks.Markdown, Content: plan.note})
		_ = enc.Block(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{ThreadID: plan.threadID, Finish: blocks.FinishStop}})
	}
	ctx := r.Context()
	for i, req := range plan.reqs {
		if i > 0 {
			// The first request began; the others are the user's too, and
			// are carried out whether or not the client stays.
			ctx = context.WithoutCancel(ctx)
		}
		for b := range h.eng.Stream(ctx, u, req) {
			if !started {
				if b.Kind == blocks.Error {
					code := assistant.ErrorCode(b.ErrorCode)
					h.refuse(w, r, StatusOf(code), code, b.Content)
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
	_ = enc.Close()
}

// uiWriter writes SSE to the client, flushing each event, and keeps a copy
// for a resume. A client that left is no error: the copy goes on. Each
// Write is one whole frame (uistream.Encoder writes a chunk at a time, the
// NDJSON route a line), which lets the copy merge frames (compact.go).
type uiWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	live *uiLiveStream
	gone bool
}

func (u *uiWriter) Write(p []byte) (int, error) {
	if u.live != nil {
		u.live.append(p)
	}
	if !u.gone {
		if _, err := u.w.Write(p); err != nil {
			u.gone = true
		} else if err := u.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			u.gone = true
		}
	}
	return len(p), nil
}

// maxReplayBytes bounds the copy of one stream kept for a resume, as
// compacted (compact.go); a longer stream is not resumable (the GET
// answers 204). A variable only so that this package's tests pass it with
// a stream a quarter the size (export_test.go); nothing else sets it.
var maxReplayBytes = 4 << 20

// uiLiveStreams are the UI streams running on this instance, by owner and
// chat id: another user's request on the same id never touches them.
type uiLiveStreams struct {
	mu sync.Mutex
	m  map[string]*uiLiveStream
	// counted, if set, learns of each stream starting (+1) and ending
	// (-1), outside mu (relay.go).
	counted func(delta int)
	// text is the shape of the frames a stream's copy merges; nil: none.
	text *textFrame
}

// A uiLiveStream is the copy of a running stream, for a resume. Followers
// (follow, relayStream) read it by byte offset, and hold slices of buf
// while they write them out: while any follows, the copy is only appended
// to. With none, a frame that continues the last one's text is merged
// into it instead (mergeFrame), rewriting the tail no one holds; a new
// follower reads from the start, so it never sees an earlier form.
type uiLiveStream struct {
	mu        sync.Mutex
	buf       []byte
	text      *textFrame // the frames merged; nil: none
	last      int        // where buf's last frame begins, if text may continue it; else -1
	followers int        // joined and not yet left
	done      bool
	over      bool          // past maxReplayBytes: not resumable
	wake      chan struct{} // closed and replaced on every change
}

func liveKey(owner, chat string) string { return owner + "\x00" + chat }

func (l *uiLiveStreams) start(owner, chat string) *uiLiveStream {
	s := &uiLiveStream{wake: make(chan struct{}), text: l.text, last: -1}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*uiLiveStream{}
	}
	l.m[liveKey(owner, chat)] = s
	l.mu.Unlock()
	if l.counted != nil {
		l.counted(+1)
	}
	return s
}

// end ends s, which start returned: every start is ended once.
func (l *uiLiveStreams) end(owner, chat string, s *uiLiveStream) {
	s.finish()
	l.mu.Lock()
	if k := liveKey(owner, chat); l.m[k] == s {
		delete(l.m, k)
	}
	l.mu.Unlock()
	if l.counted != nil {
		l.counted(-1)
	}
}

func (l *uiLiveStreams) get(owner, chat string) *uiLiveStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[liveKey(owner, chat)]
}

// append adds p, one whole frame, to the copy: merged into the last frame
// if no one follows and p continues its text, else as it is.
func (s *uiLiveStream) append(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.over {
		s.add(p)
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

// add is append's work, under s.mu.
func (s *uiLiveStream) add(p []byte) {
	if s.followers == 0 && s.last >= 0 {
		if buf, ok := mergeFrame(s.buf, s.last, s.text, p); ok {
			s.buf = buf
			if len(s.buf) > maxReplayBytes {
				s.over, s.buf = true, nil
			}
			return
		}
	}
	if len(s.buf)+len(p) > maxReplayBytes {
		s.over, s.buf = true, nil
		return
	}
	// Only a frame that begins a line may be continued: one that came
	// after a partial write is kept as it is.
	s.last = -1
	if s.text != nil && (len(s.buf) == 0 || s.buf[len(s.buf)-1] == '\n') {
		if _, _, ok := s.text.split(p); ok {
			s.last = len(s.buf)
		}
	}
	s.buf = append(s.buf, p...)
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

// join returns what from(0) does, and counts the caller as a follower
// until it calls leave, which it must once it holds no slice that join or
// from returned: till then the copy is only appended to, so those slices
// and the caller's offset stay true.
func (s *uiLiveStream) join() ([]byte, bool, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.followers++
	return s.fromLocked(0)
}

// leave ends what join began.
func (s *uiLiveStream) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.followers--
}

// from returns what was written from offset on, whether the stream has
// ended, whether it can be replayed, and a channel closed on the next
// change. Only a follower (join) may call it.
func (s *uiLiveStream) from(off int) ([]byte, bool, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fromLocked(off)
}

func (s *uiLiveStream) fromLocked(off int) ([]byte, bool, bool, <-chan struct{}) {
	if s.over {
		return nil, s.done, false, s.wake
	}
	return s.buf[off:], s.done, true, s.wake
}

// uiResume serves GET /api/chat/ui/{id}/stream: the stream of the chat
// running on this instance, or on another sharing a relaying Store,
// replayed from its start, or 204.
func (h *Handler) uiResume(w http.ResponseWriter, r *http.Request, u parley.User) {
	h.resume(w, r, u, transportUI, uistream.Headers,
		[]byte(`data: {"type":"error","errorText":"This answer is too long to resume here. Reload the conversation to see it."}`+"\n\ndata: [DONE]\n\n"))
}
