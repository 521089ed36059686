package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Config configures a Handler. Authenticate is required; every other
// field's zero value is a documented default.
type Config struct {
	// Authenticate returns the user making the request. An error answers 401
	// and is logged, never shown.
	Authenticate func(*http.Request) (parley.User, error)
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes). A
	// larger body is refused with 413 before it is decoded past the limit.
	// The AI SDK route reads up to 16 times as much, the whole
	// conversation, but each field and message in it is bounded by
	// MaxBodyBytes alike.
	// The message limit itself is the Engine's
	// (assistant.Config.MaxMessageBytes).
	MaxBodyBytes int64
	// Execute says which tools POST /api/chat/tools/{name}/execute may run
	// (default ExecuteReadAndMutate: Destructive tools are refused).
	Execute ExecutePolicy
	// TrustedOrigins are origins ("https://app.example.com", scheme, host
	// and optional port) whose cross-origin requests are allowed through
	// the cross-origin protection, e.g. a UI served from another host. New
	// panics on a malformed origin.
	TrustedOrigins []string
	// DisableCrossOriginProtection turns off the default CSRF protection,
	// for hosts that already apply it (with http.CrossOriginProtection or
	// tokens) in front of the Handler. New panics if TrustedOrigins is set
	// too, as they would be ignored.
	DisableCrossOriginProtection bool
	Logger                       *slog.Logger // nil: discard
}

// DefaultMaxBodyBytes is the default Config.MaxBodyBytes: 512 KiB. It fits
// the Engine's defaults with room to spare: a continuation may carry client
// tool output up to 8 x MaxMessageBytes (256 KiB) plus a message (32 KiB),
// JSON escaping included.
const DefaultMaxBodyBytes = 512 << 10

// Error codes the Handler answers itself, beside the assistant.ErrorCode
// values the Engine's errors map to.
const (
	codeMethodNotAllowed     assistant.ErrorCode = "method_not_allowed"     // 405
	codeUnsupportedMediaType assistant.ErrorCode = "unsupported_media_type" // 415: a body that is not application/json
)

// Handler serves the chat API under /api/chat/. Mount it at the root of a
// mux or behind a prefix-preserving router. The package documentation lists
// its routes, with their requests and answers.
//
// A request that carries a body (POST, PUT, PATCH or DELETE) must send it as
// Content-Type: application/json (415 otherwise), which keeps HTML forms
// and text/plain posts out. Cross-origin browser requests of any method but
// GET, HEAD and OPTIONS are refused with 403 by http.CrossOriginProtection
// unless their origin is in Config.TrustedOrigins; requests without
// Sec-Fetch-Site or Origin (same-origin and non-browser clients) pass.
//
// The execute route runs what Config.Execute allows without a confirm
// card, because the user pressed the button themselves. By default
// (ExecuteReadAndMutate) that is Read and Mutate tools; a Destructive tool
// is refused with 403 and never runs unless the host opts in with
// ExecuteAll.
type Handler struct {
	eng  *assistant.Engine
	cfg  Config
	mux  *http.ServeMux
	root http.Handler // mux, behind the cross-origin protection unless disabled

	uiLive uiLiveStreams // AI SDK streams running here, for a resume
	live   uiLiveStreams // NDJSON streams running here, by thread, for a resume (resume.go)

	relay   store.Relay // the Engine's Store, if it relays: resumes across instances (relay.go)
	follows follows
}

// New returns a Handler serving eng. It panics on a programming error
// caught at start-up: a nil eng or cfg.Authenticate, an unknown
// cfg.Execute, a malformed trusted origin, or trusted origins with the
// protection disabled.
func New(eng *assistant.Engine, cfg Config) *Handler {
	if eng == nil || cfg.Authenticate == nil {
		panic("httpapi: New needs an Engine and Config.Authenticate")
	}
	if !cfg.Execute.valid() {
		panic(fmt.Sprintf("httpapi: Config.Execute: unknown ExecutePolicy %d", int(cfg.Execute)))
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{eng: eng, cfg: cfg, mux: http.NewServeMux(), relay: eng.Relay()}
	h.uiLive.text, h.live.text = sseText, ndjsonText
	if h.relay != nil {
		h.uiLive.counted, h.live.counted = h.liveCount, h.liveCount
	}
	routes := []struct {
		method, path string
		h            http.HandlerFunc
	}{
		{"POST", "/api/chat/stream", h.jsonBody(h.authed(h.stream))},
		{"POST", "/api/chat/ui", h.jsonBody(h.authed(h.uiStream))},
		{"GET", "/api/chat/ui/{id}/stream", h.authed(h.uiResume)},
		{"GET", "/api/chat/ui/{id}", h.authed(h.uiMessages)},
		{"GET", "/api/chat/threads", h.authed(h.listThreads)},
		{"POST", "/api/chat/threads", h.jsonBody(h.authed(h.newThread))},
		{"GET", "/api/chat/threads/{id}", h.authed(h.getThread)},
		{"PATCH", "/api/chat/threads/{id}", h.jsonBody(h.authed(h.renameThread))},
		{"DELETE", "/api/chat/threads/{id}", h.jsonBody(h.authed(h.archiveThread))},
		{"GET", "/api/chat/threads/{id}/stream", h.authed(h.resumeStream)},
		{"POST", "/api/chat/threads/{id}/cancel", h.jsonBody(h.authed(h.cancelTurn))},
		{"PUT", "/api/chat/threads/{id}/messages/{message_id}/feedback", h.jsonBody(h.authed(h.setFeedback))},
		{"DELETE", "/api/chat/threads/{id}/messages/{message_id}/feedback", h.jsonBody(h.authed(h.deleteFeedback))},
		{"GET", "/api/chat/models", h.authed(h.listModels)},
		{"PUT", "/api/chat/models/preference", h.jsonBody(h.authed(h.setModelPreference))},
		{"GET", "/api/chat/auto-approve", h.authed(h.getAutoApprovals)},
		{"PUT", "/api/chat/auto-approve", h.jsonBody(h.authed(h.setAutoApprovals))},
		{"GET", "/api/chat/tools", h.authed(h.listTools)},
		{"POST", "/api/chat/tools/{name}/execute", h.jsonBody(h.authed(h.executeTool))},
		{"GET", "/api/chat/quota", h.authed(h.getUsage)},
		{"GET", "/api/chat/quota/{user_id}", h.authed(h.getUsage)},
		{"PUT", "/api/chat/quota/{user_id}", h.jsonBody(h.authed(h.setLimits))},
		{"GET", "/api/chat/prompts", h.authed(h.listPrompts)},
		{"POST", "/api/chat/prompts", h.jsonBody(h.authed(h.createPrompt))},
		{"POST", "/api/chat/prompts/deactivate", h.jsonBody(h.authed(h.deactivatePrompts))},
		{"POST", "/api/chat/prompts/{prompt_id}/activate", h.jsonBody(h.authed(h.activatePrompt))},
		{"DELETE", "/api/chat/prompts/{prompt_id}", h.jsonBody(h.authed(h.deletePrompt))},
	}
	for _, rt := range routes {
		if !slices.Contains(routeMethods[:], rt.method) {
			panic("httpapi: route method " + rt.method + " is not in routeMethods")
		}
		h.mux.HandleFunc(rt.method+" "+rt.path, rt.h)
	}
	// The mux's own 404 and 405 answers are plain text; this keeps every
	// error in the JSON shape. It loses to every route above.
	h.mux.HandleFunc(unrouted, h.notRouted)
	h.root = h.mux
	if cfg.DisableCrossOriginProtection {
		if len(cfg.TrustedOrigins) > 0 {
			panic("httpapi: Config.TrustedOrigins has no effect with DisableCrossOriginProtection")
		}
	} else {
		h.root = h.crossOriginProtection().Handler(h.mux)
	}
	return h
}

// unrouted is the pattern of every /api/chat/ request no route matches.
const unrouted = "/api/chat/"

// routeMethods are the methods routes use, in the order an Allow header
// lists them.
var routeMethods = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// notRouted answers a request no route took: 405 with an Allow header if
// its path has routes for other methods, else 404. It asks the mux which
// methods would match rather than registering a method-less pattern per
// path, which the mux refuses as a conflict beside a more specific path of
// another method (POST /api/chat/prompts/deactivate beside DELETE
// /api/chat/prompts/{prompt_id}).
func (h *Handler) notRouted(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range routeMethods {
		if _, pattern := h.mux.Handler(&http.Request{Method: m, Host: r.Host, URL: r.URL}); pattern != unrouted {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		h.refuse(w, r, http.StatusNotFound, assistant.CodeNotFound, "There is nothing here.")
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	h.refuse(w, r, http.StatusMethodNotAllowed, codeMethodNotAllowed, "This method is not allowed here.")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.root.ServeHTTP(w, r) }

type userHandler func(w http.ResponseWriter, r *http.Request, u parley.User)

func (h *Handler) authed(next userHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, err := h.cfg.Authenticate(r)
		if err == nil && u.ID == "" {
			err = errors.New("Authenticate returned a user with no ID")
		}
		if err != nil {
			h.cfg.Logger.Info("httpapi: unauthenticated", "path", r.URL.Path, "err", err)
			closeUnread(w, r)
			h.writeError(w, r, assistant.CodeUnauthenticated)
			return
		}
		next(w, r, u)
	}
}

// closeUnread drops the connection of a request refused before its body
// was read (401, 403, 415), once the refusal is sent. Go's HTTP/1 server
// otherwise reads up to 256 KiB of an unread body, before it sends the
// response and again when the handler returns, so a client that sends its
// body slowly, or never, would delay the refusal and hold the connection.
// Connection: close skips the first read; a read deadline already past
// ends the second at once. Under HTTP/2 the header would close every
// stream of the connection, so only the deadline applies (to this
// stream's body).
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 { // -1: chunked, of unknown length
		return
	}
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// StatusOf maps an error code to its HTTP status. It is the one mapping.
func StatusOf(code assistant.ErrorCode) int {
	switch code {
	case assistant.CodeInvalidRequest:
		return http.StatusBadRequest
	case assistant.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case assistant.CodeUnauthenticated:
		return http.StatusUnauthorized
	case assistant.CodeForbidden:
		return http.StatusForbidden
	case assistant.CodeNotFound:
		return http.StatusNotFound
	case assistant.CodeQuotaExceeded, assistant.CodeSpendCapExceeded, assistant.CodeTooManyTurns:
		return http.StatusTooManyRequests
	case assistant.CodeCancelled, assistant.CodeConflict:
		return http.StatusConflict
	case assistant.CodeModelBusy:
		return http.StatusServiceUnavailable
	case assistant.CodeModelTimeout:
		return http.StatusGatewayTimeout
	case assistant.CodeModelUnavailable:
		return http.StatusBadGateway
	case assistant.CodeUnsupported:
		return http.StatusNotImplemented
	default:
		return http.StatusInternalServerError
	}
}

type errorBody struct {
	Error struct {
		Code    assistant.ErrorCode `json:"code"`
		Message string              `json:"message"`
	} `json:"error"`
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, code assistant.ErrorCode) {
	h.refuse(w, r, StatusOf(code), code, assistant.SafeMessage(code))
}

// refuse answers a refusal: {"error": {"code", "message"}} with status,
// except on the routes the AI SDK's chat transport calls (POST
// /api/chat/ui and its resume), whose refusals are msg alone as
// text/plain. That client (DefaultChatTransport) throws a failed
// response's text as its error, and useChat shows that error's message:
// a sentence, where JSON would show as a raw string. Every refusal goes
// through here, those of the middleware (401, 403, 415) included, so
// each route has one error shape.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, code assistant.ErrorCode, msg string) {
	if h.textRoute(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, msg)
		return
	}
	var body errorBody
	body.Error.Code = code
	body.Error.Message = msg
	h.writeJSON(w, status, body)
}

// transportRoutes are the routes the AI SDK's chat transport calls, as
// their mux patterns: their refusals are text.
var transportRoutes = [...]string{"POST /api/chat/ui", "GET /api/chat/ui/{id}/stream"}

// textRoute reports whether r is for a route whose refusals are text. A
// request refused before routing (the cross-origin check) is matched here.
func (h *Handler) textRoute(r *http.Request) bool {
	pattern := r.Pattern
	if pattern == "" {
		_, pattern = h.mux.Handler(r)
	}
	return slices.Contains(transportRoutes[:], pattern)
}

// fail logs err and answers with its code and the Engine's safe message.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := h.safeError(r, err)
	h.refuse(w, r, StatusOf(code), code, msg)
}

// safeError is err's code and the message a user may read, logging an
// internal failure.
func (h *Handler) safeError(r *http.Request, err error) (assistant.ErrorCode, string) {
	code := assistant.Code(err)
	if code == assistant.CodeInternal {
		h.cfg.Logger.Error("httpapi: request failed", "path", r.URL.Path, "err", err)
	}
	msg := assistant.SafeMessage(code)
	if e, ok := errors.AsType[*assistant.Error](err); ok {
		msg = e.UserMessage()
	}
	return code, msg
}

// invalid answers 400 invalid_request naming what is wrong. detail is
// built by the Handler, never copied from input beyond a clipped name; it
// is logged at Debug with the path, never with the body.
func (h *Handler) invalid(w http.ResponseWriter, r *http.Request, detail string) {
	h.cfg.Logger.Debug("httpapi: invalid request", "path", r.URL.Path, "err", detail)
	h.refuse(w, r, http.StatusBadRequest, assistant.CodeInvalidRequest, "The request is not valid: "+detail+".")
}

func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		h.cfg.Logger.Debug("httpapi: write response", "err", err)
	}
}

// StreamRequest is the body of POST /api/chat/stream.
//
// A request carries a message, or answers what the thread's last turn left
// waiting: a decision on a confirm card, the results of client-side tool
// calls, or the answers to an ask_user form (with an optional message).
type StreamRequest struct {
	ThreadID    string           `json:"thread_id,omitempty"`
	Message     string           `json:"message,omitempty"`
	Page        string           `json:"page,omitempty"`
	PageContext string           `json:"page_context,omitempty"`
	Decision    *DecisionBody    `json:"decision,omitempty"`
	ToolResults []ToolResultBody `json:"tool_results,omitempty"`
	Form        *FormAnswerBody  `json:"form,omitempty"`
	Autonomous  bool             `json:"autonomous,omitempty"`
	// AutoApprove names tools, or "category:<name>", the user runs without
	// an approval card this turn: the client's "always allow" choices (see
	// assistant.Request.AutoApprove).
	AutoApprove []string `json:"auto_approve,omitempty"`
	// Replaces edits the conversation: message replaces the user message
	// with this id (see assistant.Request.Replaces).
	Replaces string `json:"replaces,omitempty"`
	// Regenerate asks for a new answer to the last user message.
	Regenerate bool `json:"regenerate,omitempty"`
	// Entities name objects of the host application the message is about:
	// [{"type", "id"}] (see assistant.Request.Entities).
	Entities []assistant.EntityRef `json:"entities,omitempty"`
	// Model picks the model: "connection/model", "connection/" or a
	// model's name (see assistant.Request.Model); one no connection
	// offers is 400 invalid_request.
	Model string `json:"model,omitempty"`
	// Settings are completion settings: {"temperature"?, "top_p"?,
	// "max_tokens"?, "reasoning_effort"?}; those the connection does not
	// allow are dropped, the others clamped.
	Settings *assistant.Settings `json:"settings,omitempty"`
}

// DecisionBody applies or declines a confirm card: {"token", "apply",
// "reason"?}. apply is required, so a missing key never reads as a
// decline; reason is why the user declines (see assistant.Decision).
type DecisionBody struct {
	Token  string `json:"token"`
	Apply  *bool  `json:"apply"`
	Reason string `json:"reason,omitempty"`
}

// ToolResultBody is one client-side tool's output: {"id", "output"}.
type ToolResultBody struct {
	ID     string          `json:"id"`
	Output json.RawMessage `json:"output"`
}

// FormAnswerBody answers an ask_user form: {"id", "values": {question id: answer}}.
type FormAnswerBody struct {
	ID     string                     `json:"id"`
	Values map[string]json.RawMessage `json:"values"`
}

// request converts the body to the Engine's Request.
func (req *StreamRequest) request() (assistant.Request, error) {
	out := assistant.Request{
		ThreadID: req.ThreadID, Message: req.Message, Page: req.Page, PageContext: req.PageContext,
		Autonomous: req.Autonomous, Replaces: req.Replaces, Regenerate: req.Regenerate, Entities: req.Entities,
		Model: req.Model, AutoApprove: req.AutoApprove,
	}
	if req.Settings != nil {
		out.Settings = *req.Settings
	}
	if d := req.Decision; d != nil {
		if d.Apply == nil {
			return out, errors.New(`decision needs "apply": true or false`)
		}
		out.Decision = &assistant.Decision{Token: d.Token, Apply: *d.Apply, Reason: d.Reason}
	}
	for _, r := range req.ToolResults {
		out.ToolResults = append(out.ToolResults, assistant.ToolResult{ID: r.ID, Output: r.Output})
	}
	if f := req.Form; f != nil {
		out.Form = &assistant.FormAnswer{ID: f.ID, Values: f.Values}
	}
	return out, nil
}

func (h *Handler) stream(w http.ResponseWriter, r *http.Request, u parley.User) {
	var req StreamRequest
	if !h.decode(w, r, &req) {
		return
	}
	if field := req.nulField(); field != "" {
		h.invalid(w, r, field+" contains a NUL character")
		return
	}
	areq, err := req.request()
	if err != nil {
		h.invalid(w, r, err.Error())
		return
	}
	// The stream is written through a uiWriter, which keeps a copy for GET
	// /api/chat/threads/{id}/stream once the first meta block names the
	// thread, and reads the turn to its end when the client leaves (a
	// reload), so the copy is whole for the page that comes back.
	out := &uiWriter{w: w, rc: http.NewResponseController(w)}
	var threadID string
	defer func() {
		if out.live != nil {
			h.live.end(u.ID, threadID, out.live)
		}
	}()
	buf := make([]byte, 0, 512)
	started := false
	for b := range h.eng.Stream(r.Context(), u, areq) {
		if !started {
			// A stream that fails before its first meta block was refused:
			// answer with a status, not a 200 stream.
			if b.Kind == blocks.Error {
				// The block's text is the Engine's safe message, which may be
				// specific (a quota refusal names when it resets).
				code := assistant.ErrorCode(b.ErrorCode)
				h.refuse(w, r, StatusOf(code), code, b.Content)
				return
			}
			started = true
			for k, v := range ndjsonHeaders {
				w.Header().Set(k, v)
			}
			w.WriteHeader(http.StatusOK)
			if b.Kind == blocks.Meta && b.Meta != nil && b.Meta.ThreadID != "" {
				threadID = b.Meta.ThreadID
				out.live = h.live.start(u.ID, threadID)
			}
		}
		buf = blocks.AppendNDJSON(buf[:0], &b)
		_, _ = out.Write(buf)
		if out.gone && out.live == nil {
			return // the client is gone and nothing keeps a copy; the turn goes on and persists
		}
	}
}

// threadJSON is a thread as the API shows it.
//
// SummarizedThrough tells a client that the model now sees the messages up
// to that seq only as a summary, so it can mark them ("earlier messages
// summarized"). The summary itself is left out: it is the model's working
// note, not part of the conversation the user had, and its wording may
// change at every compaction.
type threadJSON struct {
	ID                string     `json:"id"`
	OwnerID           string     `json:"owner_id"` // whose thread it is: a staff reader sees another user's
	Title             string     `json:"title"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	ArchivedAt        *time.Time `json:"archived_at,omitempty"`
	SummarizedThrough int        `json:"summarized_through,omitempty"`
}

func toThreadJSON(t store.Thread) threadJSON {
	return threadJSON{ID: t.ID, OwnerID: t.OwnerID, Title: t.Title, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, ArchivedAt: t.ArchivedAt,
		SummarizedThrough: t.SummaryThrough}
}

// messageJSON is a message in stored form: Blocks use the verbose keys.
type messageJSON struct {
	ID           string         `json:"id"`
	Seq          int            `json:"seq"`
	Role         store.Role     `json:"role"`
	Status       store.Status   `json:"status"`
	Content      string         `json:"content,omitempty"`
	Blocks       []blocks.Block `json:"blocks"`
	InputTokens  int64          `json:"input_tokens,omitempty"`
	OutputTokens int64          `json:"output_tokens,omitempty"`
	Source       string         `json:"source,omitempty"`        // a user message not typed: decision, form or tool_results
	Replaces     string         `json:"replaces,omitempty"`      // the user message this one replaced
	SupersededAt *time.Time     `json:"superseded_at,omitempty"` // set when an edit replaced it (?superseded=1)
	CreatedAt    time.Time      `json:"created_at"`
}

func toMessageJSON(m store.Message) messageJSON {
	bs := m.Blocks
	if bs == nil {
		bs = []blocks.Block{}
	}
	return messageJSON{ID: m.ID, Seq: m.Seq, Role: m.Role, Status: m.Status, Content: m.Content,
		Blocks: bs, InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
		Source: string(m.Source), Replaces: m.Replaces, SupersededAt: m.SupersededAt, CreatedAt: m.CreatedAt}
}

func (h *Handler) listThreads(w http.ResponseWriter, r *http.Request, u parley.User) {
	opts := store.ListOptions{}
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 200 {
			h.invalid(w, r, "limit must be a whole number from 1 to 200")
			return
		}
		opts.Limit = n
	}
	if s := q.Get("before"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			h.invalid(w, r, "before must be a time in RFC 3339 form, such as 2025-01-02T15:04:05Z")
			return
		}
		opts.Before = t
	}
	ts, err := h.eng.Threads(r.Context(), u, opts)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]threadJSON, len(ts))
	for i, t := range ts {
		out[i] = toThreadJSON(t)
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"threads": out})
}

// newThread takes no body (or {}) and answers 200 {"thread"}: an empty
// thread to start a conversation in, the user's untitled draft if one is
// left from an earlier "new chat", else a new one. Always 200, since the
// Engine does not say which it was.
func (h *Handler) newThread(w http.ResponseWriter, r *http.Request, u parley.User) {
	if !h.decodeOptional(w, r, &struct{}{}) {
		return
	}
	t, err := h.eng.NewThread(r.Context(), u)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"thread": toThreadJSON(t)})
}

func (h *Handler) getThread(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	superseded, ok := h.boolQuery(w, r, "superseded")
	if !ok {
		return
	}
	t, msgs, err := h.eng.Thread(r.Context(), u, id, assistant.ThreadOptions{Superseded: superseded})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]messageJSON, len(msgs))
	for i, m := range msgs {
		out[i] = toMessageJSON(m)
	}
	ps, err := h.eng.Proposals(r.Context(), u, t.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	props := make([]proposalJSON, len(ps))
	for i, p := range ps {
		props[i] = toProposalJSON(p)
	}
	wait := assistant.WaitingOn(msgs)
	waiting := waitingJSON{Form: wait.Form, ToolCalls: wait.ToolCalls}
	if waiting.ToolCalls == nil {
		waiting.ToolCalls = []string{}
	}
	fb, err := h.eng.Feedback(r.Context(), u, t.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	feedback := make([]feedbackJSON, len(fb))
	for i, f := range fb {
		feedback[i] = toFeedbackJSON(f)
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"thread": toThreadJSON(t), "messages": out, "proposals": props, "waiting": waiting, "feedback": feedback})
}

// waitingJSON is what the thread's last turn waits on besides cards: an
// ask_user form to answer, client-side calls to run.
type waitingJSON struct {
	Form      string   `json:"form,omitempty"`
	ToolCalls []string `json:"tool_calls"`
}

// proposalJSON is a confirm card's state, keyed by its token (the confirm
// block's id): pending, applied, declined or expired.
type proposalJSON struct {
	Token     string    `json:"token"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

func toProposalJSON(p store.Proposal) proposalJSON {
	return proposalJSON{Token: p.Token, Tool: p.Tool, Summary: p.Summary, Status: string(p.Status), ExpiresAt: p.ExpiresAt}
}

func (h *Handler) cancelTurn(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	if err := h.eng.Cancel(r.Context(), u, id); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// boolQuery reads an optional boolean query parameter (1, true, 0,
// false, ...); a value that is not one answers 400 and ok is false.
func (h *Handler) boolQuery(w http.ResponseWriter, r *http.Request, name string) (v, ok bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, true
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		h.invalid(w, r, name+" must be true or false")
		return false, false
	}
	return v, true
}

// archiveThread archives the thread, or with ?hard=true deletes it and its
// messages for good.
func (h *Handler) archiveThread(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	hard, ok := h.boolQuery(w, r, "hard")
	if !ok {
		return
	}
	del := h.eng.ArchiveThread
	if hard {
		del = h.eng.DeleteThread
	}
	if err := del(r.Context(), u, id); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// renameThread takes {"title"} and answers with the thread as renamed.
func (h *Handler) renameThread(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	var body struct {
		Title *string `json:"title"`
	}
	if !h.decode(w, r, &body) {
		return
	}
	if body.Title == nil {
		h.invalid(w, r, "title is required")
		return
	}
	t, err := h.eng.RenameThread(r.Context(), u, id, *body.Title)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"thread": toThreadJSON(t)})
}

// toolJSON is a tool as the API lists it. InputSchema is the JSON Schema
// of its arguments object, so a host UI can build them.
type toolJSON struct {
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Category      string          `json:"category,omitempty"`
	Effect        tools.Effect    `json:"effect"`
	NeedsApproval bool            `json:"needs_approval"`
	ClientSide    bool            `json:"client_side,omitempty"`
	InputSchema   json.RawMessage `json:"input_schema"`
}

func (h *Handler) listTools(w http.ResponseWriter, r *http.Request, u parley.User) {
	page := r.URL.Query().Get("page")
	if hasNUL(page) {
		h.invalid(w, r, "page contains a NUL character")
		return
	}
	specs, err := h.eng.Tools(r.Context(), u, page)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]toolJSON, len(specs))
	for i, s := range specs {
		out[i] = toolJSON{Name: s.Name, Description: s.Description, Category: s.Category, Effect: effectOf(s),
			NeedsApproval: s.NeedsApproval(), ClientSide: s.ClientSide, InputSchema: s.Schema()}
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"tools": out})
}

// usageJSON is a user's usage as the API shows it.
type usageJSON struct {
	UserID  string            `json:"user_id"`
	Daily   quota.PeriodUsage `json:"daily"`
	Weekly  quota.PeriodUsage `json:"weekly"`
	Monthly quota.PeriodUsage `json:"monthly"`
}

func toUsageJSON(us quota.Usage) usageJSON {
	return usageJSON{UserID: us.UserID, Daily: us.Daily, Weekly: us.Weekly, Monthly: us.Monthly}
}

func (h *Handler) getUsage(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "user_id")
	if !ok {
		return
	}
	if id == "" {
		id = u.ID
	}
	us, err := h.eng.Usage(r.Context(), u, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, toUsageJSON(us))
}

// setLimits takes {"daily": n, "weekly": n, "monthly": n}: each key optional
// (absent leaves the period as it is), a number sets the override (-1 is
// unlimited), null restores the system default.
func (h *Handler) setLimits(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "user_id")
	if !ok {
		return
	}
	var body map[string]json.RawMessage
	if !h.decode(w, r, &body) {
		return
	}
	var up assistant.LimitsUpdate
	// In a fixed order, so a body with several faults is always refused
	// for the same one.
	for _, key := range slices.Sorted(maps.Keys(body)) {
		var field ***int64
		switch key {
		case "daily":
			field = &up.Daily
		case "weekly":
			field = &up.Weekly
		case "monthly":
			field = &up.Monthly
		default:
			h.invalid(w, r, "unknown field "+quoteName(key)+" (want daily, weekly or monthly)")
			return
		}
		var v *int64 // null decodes to nil: back to the default
		if err := json.Unmarshal(body[key], &v); err != nil {
			h.invalid(w, r, key+" must be a whole number or null")
			return
		}
		*field = &v
	}
	us, err := h.eng.SetLimits(r.Context(), u, id, up)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, toUsageJSON(us))
}
