package assistant

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// The Engine's log lines use these keys: "turn" (the turn's reply message
// id), "thread", "tool", "code" (an ErrorCode or a tool error's code) and
// "err". Inside a turn every line is logged with the turn's context, and
// logHandler adds "turn" and, while a span is recording, "trace_id" and
// "span_id", so a line can be found from its trace and the other way round.

// logTurnKey is the context key of the turn's id for log lines.
type logTurnKey struct{}

// withLogTurn returns ctx whose log lines name the turn id.
func withLogTurn(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, logTurnKey{}, id)
}

// logHandler adds the turn's id and the trace and span ids in the context
// of each record to it.
type logHandler struct{ slog.Handler }

// Handle adds the context's ids to r and passes it on.
func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(logTurnKey{}).(string); ok && id != "" {
		r.AddAttrs(slog.String("turn", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper on the derived handler.
func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper on the derived handler.
func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.Handler.WithGroup(name)}
}
