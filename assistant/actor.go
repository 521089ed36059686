package assistant

import (
	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
)

// actor is who acts and where: the Engine, the user and the thread. The
// steps every tool call takes whoever makes it — the argument guard, the
// rate limit, the invocation and the audit rows — are its methods, shared
// by a turn (which embeds it) and by Engine.ExecuteTool.
type actor struct {
	e      *Engine
	u      parley.User
	thread store.Thread // zero until the thread exists (a turn's begin sets it)
}
