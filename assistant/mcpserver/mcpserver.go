package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/tools"
)

// Transport is the transport tag of the audit rows of calls made over MCP.
const Transport = "mcp"

// Defaults of Config's zero values.
const (
	DefaultName           = "parley"
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxSessionsPerUser is Config.MaxSessionsPerUser's default.
	DefaultMaxSessionsPerUser = 16
	DefaultElicitTimeout      = 5 * time.Minute
	DefaultMaxBodyBytes       = 1 << 20
)

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("mcpserver: invalid configuration")

// Config configures a Handler. Authenticate is required; every other
// field's zero value is a documented default.
type Config struct {
	// Authenticate returns the user making the request, as for
	// httpapi.Config.Authenticate. Every HTTP request of a session is
	// authenticated again; an error answers 401 and is logged, never
	// shown, and a session is only ever served to the user who opened it.
	Authenticate func(*http.Request) (parley.User, error)
	// Name and Version name the server in the MCP handshake (defaults
	// DefaultName and "1").
	Name, Version string
	// NoElicitation never asks the client to confirm a Mutate or
	// Destructive call: every such call waits for the user's decision in
	// the app. Set it when the clients cannot be trusted to put the
	// question to a person (a client may answer elicitations itself).
	NoElicitation bool
	// ElicitTimeout bounds how long a call waits for the user's answer to
	// an elicitation (default DefaultElicitTimeout); unanswered, the call
	// waits for a decision in the app.
	ElicitTimeout time.Duration
	// SessionTimeout closes a session idle this long (default
	// DefaultSessionTimeout).
	SessionTimeout time.Duration
	// MaxBodyBytes bounds an HTTP request body (default
	// DefaultMaxBodyBytes); a larger one is refused with 413 before it is
	// decoded. The Engine bounds the arguments again
	// (assistant.Config.MaxMessageBytes).
	MaxBodyBytes int64
	// TrustedOrigins are the browser origins ("https://app.example.com")
	// allowed to POST and DELETE across origins, for an MCP client that
	// runs in a page. Any other browser's cross-origin request is refused
	// with 403, as httpapi refuses it; clients that are not browsers send
	// no Origin and pass.
	TrustedOrigins []string
	// MaxSessionsPerUser bounds the MCP sessions one user holds open at
	// once (default DefaultMaxSessionsPerUser); an initialize past it is
	// answered 429. Each session keeps state until it closes or idles out.
	MaxSessionsPerUser int
	// Logger receives the handler's logs; nil discards them.
	Logger *slog.Logger
}

// Handler serves the Engine's tools over MCP streamable HTTP. It is safe
// for concurrent use.
type Handler struct {
	eng    *assistant.Engine
	cfg    Config
	server *mcp.Server
	next   http.Handler
	csrf   *http.CrossOriginProtection

	mu       sync.Mutex
	sessions map[string]string // session id -> user id, of the sessions ServeHTTP saw opened
}

// New returns a Handler serving eng's tools. It returns an error wrapping
// ErrConfig for a nil eng or Authenticate, or a malformed trusted origin.
func New(eng *assistant.Engine, cfg Config) (*Handler, error) {
	if eng == nil || cfg.Authenticate == nil {
		return nil, fmt.Errorf("%w: New needs an Engine and Config.Authenticate", ErrConfig)
	}
	cfg.Name = cmp.Or(cfg.Name, DefaultName)
	cfg.Version = cmp.Or(cfg.Version, "1")
	cfg.ElicitTimeout = cmp.Or(max(cfg.ElicitTimeout, 0), DefaultElicitTimeout)
	cfg.SessionTimeout = cmp.Or(max(cfg.SessionTimeout, 0), DefaultSessionTimeout)
	cfg.MaxBodyBytes = cmp.Or(max(cfg.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	cfg.MaxSessionsPerUser = cmp.Or(max(cfg.MaxSessionsPerUser, 0), DefaultMaxSessionsPerUser)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handler{eng: eng, cfg: cfg, csrf: http.NewCrossOriginProtection(), sessions: map[string]string{}}
	for i, origin := range cfg.TrustedOrigins {
		if err := h.csrf.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("%w: TrustedOrigins[%d]: %v", ErrConfig, i, err)
		}
	}
	h.server = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{
		Logger: cfg.Logger,
		// Tools are listed per user by the middleware, never registered.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	h.server.AddReceivingMiddleware(h.tools)
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &mcp.StreamableHTTPOptions{
		Logger: cfg.Logger, SessionTimeout: cfg.SessionTimeout, MaxRequestBodyBytes: cfg.MaxBodyBytes,
	})
	// The SDK binds a session to the user of the request that opened it
	// (auth.TokenInfo.UserID) and refuses it to anyone else; it learns the
	// user only from a bearer token's verifier, so ServeHTTP hands it the
	// user it authenticated through one.
	h.next = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		u, ok := ctx.Value(userKey{}).(parley.User)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: u.ID, Extra: map[string]any{userExtra: u}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(stream)
	return h, nil
}

var _ http.Handler = (*Handler)(nil)

type userKey struct{}

// userExtra is the key of the user in auth.TokenInfo.Extra.
const userExtra = "parley.user"

// ServeHTTP refuses a browser's cross-origin request (see
// Config.TrustedOrigins), authenticates the request with
// Config.Authenticate and serves it. An unauthenticated request is
// answered 401 and reaches nothing.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.csrf.Check(r); err != nil {
		h.cfg.Logger.Info("mcpserver: cross-origin request refused", "method", r.Method)
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	u, err := h.cfg.Authenticate(r)
	if err == nil && u.ID == "" {
		err = errors.New("Authenticate returned a user with no ID")
	}
	if err != nil {
		h.cfg.Logger.Info("mcpserver: unauthenticated", "err", err)
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" {
		// A POST without a session opens one: at most MaxSessionsPerUser
		// each, for a session holds state until it closes or idles out.
		if !h.admitSession(u.ID) {
			h.cfg.Logger.Info("mcpserver: too many sessions", "user", u.ID)
			http.Error(w, "too many open MCP sessions; close one (DELETE) or wait for one to expire", http.StatusTooManyRequests)
			return
		}
		w = &sessionRecorder{ResponseWriter: w, h: h, user: u.ID}
	}
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer parley") // read by the verifier above, which ignores it
	h.next.ServeHTTP(w, r)
}

const sessionHeader = "Mcp-Session-Id"

// admitSession reports whether user may open another session. It first
// forgets the sessions the server no longer holds (closed or idled out).
func (h *Handler) admitSession(user string) bool {
	live := map[string]bool{}
	for ss := range h.server.Sessions() {
		live[ss.ID()] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for id, owner := range h.sessions {
		switch {
		case !live[id]:
			delete(h.sessions, id)
		case owner == user:
			n++
		}
	}
	return n < h.cfg.MaxSessionsPerUser
}

// sessionRecorder notes the session a response opens, by its header.
type sessionRecorder struct {
	http.ResponseWriter
	h     *Handler
	user  string
	noted bool
}

func (s *sessionRecorder) note() {
	if s.noted {
		return
	}
	s.noted = true
	if id := s.Header().Get(sessionHeader); id != "" {
		s.h.mu.Lock()
		s.h.sessions[id] = s.user
		s.h.mu.Unlock()
	}
}

func (s *sessionRecorder) WriteHeader(code int) { s.note(); s.ResponseWriter.WriteHeader(code) }

func (s *sessionRecorder) Write(b []byte) (int, error) { s.note(); return s.ResponseWriter.Write(b) }

// Flush passes a flush on: the SDK streams events.
func (s *sessionRecorder) Flush() {
	s.note()
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer.
func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// userOf is the user ServeHTTP authenticated for req.
func userOf(req mcp.Request) (parley.User, bool) {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return parley.User{}, false
	}
	u, ok := extra.TokenInfo.Extra[userExtra].(parley.User)
	return u, ok && u.ID != ""
}

// tools answers tools/list and tools/call from the Engine, for the user of
// each request; every other method goes to the SDK.
func (h *Handler) tools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return h.list(ctx, r)
		case *mcp.CallToolRequest:
			return h.call(ctx, r)
		}
		return next(ctx, method, req)
	}
}

var errUnauthenticated = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthenticated"}

// list lists exactly the tools the Authorizer lets the user use (on no
// page: page-tagged tools are not served) that the server runs.
func (h *Handler) list(ctx context.Context, req *mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	u, ok := userOf(req)
	if !ok {
		return nil, errUnauthenticated
	}
	specs, err := h.eng.Tools(ctx, u, "")
	if err != nil {
		if assistant.Code(err) != assistant.CodeForbidden {
			h.cfg.Logger.Error("mcpserver: list tools", "user", u.ID, "err", err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: userMessage(err)}
	}
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	for _, s := range specs {
		if s.ClientSide {
			continue
		}
		res.Tools = append(res.Tools, toolOf(s))
	}
	return res, nil
}

// toolOf is a tool as MCP lists it: its annotations say what the Engine
// enforces (a Read tool runs at once; any other needs the user's approval).
func toolOf(s tools.Spec) *mcp.Tool {
	read := s.Effect == "" || s.Effect == tools.Read
	destructive := s.Effect == tools.Destructive
	open := false
	return &mcp.Tool{
		Name:        s.Name,
		Description: s.Description,
		InputSchema: s.Schema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: read, DestructiveHint: &destructive, OpenWorldHint: &open},
	}
}

// call runs one tool through the Engine's gated path (Engine.ExecuteTool),
// audited with transport "mcp". A tool u may not use, or that does not
// exist, is a protocol error, as MCP asks; the tool's own failures, and
// the gate's refusals, are error results the client's model can read.
func (h *Handler) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u, ok := userOf(req)
	if !ok {
		return nil, errUnauthenticated
	}
	if req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
	}
	args := req.Params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	r, err := h.eng.ExecuteTool(ctx, u, assistant.ExecuteRequest{
		Tool: req.Params.Name, Args: args, Transport: Transport, Confirm: h.confirm(req),
	})
	switch {
	case assistant.Code(err) == assistant.CodeNotFound:
		// The name is not echoed: it is the caller's text, of any size.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}
	case err != nil:
		if c := assistant.Code(err); c == assistant.CodeInternal || c == "" {
			h.cfg.Logger.Error("mcpserver: call tool", "user", u.ID, "err", err)
		}
		return errorResult(err), nil
	}
	// The result goes to the client's model: screened as a turn's model
	// reads a tool result, a planted instruction withheld or fenced.
	text, _ := h.eng.ScreenForModel(ctx, u, req.Params.Name, r)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: !r.OK}, nil
}

// resultOf is the tool's result envelope as the client's model reads it
// ({"ok", "summary", "data", "error"}, as a chat turn's model reads it),
// an error result when it failed.
func resultOf(r tools.Result) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(tools.MarshalForModel(r))}}, IsError: !r.OK}
}

// errorResult is the gate's refusal err as an error result: the envelope
// of a failed call, with the tool error code nearest to err's and a
// message safe to show.
func errorResult(err error) *mcp.CallToolResult {
	code := tools.CodeInternal
	switch assistant.Code(err) {
	case assistant.CodeInvalidRequest, assistant.CodeTooLarge:
		code = tools.CodeInvalidArgs
	case assistant.CodeForbidden, assistant.CodeUnauthenticated:
		code = tools.CodeNotAuthorized
	case assistant.CodeQuotaExceeded, assistant.CodeSpendCapExceeded, assistant.CodeTooManyTurns:
		code = tools.CodeRateLimited
	}
	return resultOf(tools.Fail(code, userMessage(err)))
}

// userMessage is the text a user may see for err: never a cause's.
func userMessage(err error) string {
	if e, ok := errors.AsType[*assistant.Error](err); ok {
		return e.UserMessage()
	}
	return assistant.SafeMessage(assistant.Code(err))
}

// confirmSchema asks for nothing but the answer: accept or decline.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// confirm asks the client's user, through an elicitation, to approve a
// Mutate or Destructive call. A client that cannot ask (no elicitation
// capability), an error or a timeout leave the call to the app.
func (h *Handler) confirm(req *mcp.CallToolRequest) assistant.ConfirmFunc {
	return func(ctx context.Context, c assistant.Confirmation) assistant.Consent {
		if h.cfg.NoElicitation || req.Session == nil {
			return assistant.NoAnswer
		}
		if p := req.Session.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
			return assistant.NoAnswer
		}
		ctx, cancel := context.WithTimeout(ctx, h.cfg.ElicitTimeout)
		defer cancel()
		msg := "Approve this action? " + c.Summary
		if c.Effect == tools.Destructive {
			msg = "Approve this destructive action? It may not be undone. " + c.Summary
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: confirmSchema})
		if err != nil {
			h.cfg.Logger.Info("mcpserver: elicitation failed; the call waits for approval in the app", "tool", c.Tool, "err", err)
			return assistant.NoAnswer
		}
		switch res.Action {
		case "accept":
			return assistant.Approved
		case "decline", "cancel":
			return assistant.Declined
		}
		return assistant.NoAnswer
	}
}
