package mcptools

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
)

// Live is a registry of an MCP server's tools that follows the server's
// list: Refresh imports it again, and a client created with
// ToolListChangedHandler set to OnListChanged refreshes it whenever the
// server says its tools changed. An Engine reads its registry at every
// turn, so a tool the server adds is offered from the next turn on, and a
// tool it removes is no longer offered or run. Put it beside the host's
// own tools with tools.Join. It is safe for concurrent use.
type Live struct {
	opts Options
	mu   sync.RWMutex
	set  *tools.Set
	// Refreshes may end out of order: a list is put in place only if it
	// was asked for after the one in place.
	asked, placed uint64
}

var _ tools.Registry = (*Live)(nil)

// NewLive returns an empty Live registry that imports with opts.
func NewLive(opts Options) *Live {
	set, _ := tools.NewSet()
	return &Live{opts: opts, set: set}
}

// Refresh imports the tools of the server cs is connected to (see Import)
// and puts them in place of the registry's. On an error the registry keeps
// the tools it had.
func (l *Live) Refresh(ctx context.Context, cs *mcp.ClientSession) error {
	l.mu.Lock()
	l.asked++
	n := l.asked
	l.mu.Unlock()
	set, err := NewRegistry(ctx, cs, l.opts)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.placed {
		l.set, l.placed = set, n
	}
	return nil
}

// refreshTimeout bounds a refresh that a notification started.
const refreshTimeout = 30 * time.Second

// OnListChanged is a ToolListChangedHandler for the client whose session
// the tools call: it refreshes the registry from that session, in a
// goroutine of its own (the handler runs on the session's reading loop,
// which the listing needs), within 30 s. A failed refresh keeps the tools
// it had, and is logged to Options.Logger.
func (l *Live) OnListChanged(ctx context.Context, req *mcp.ToolListChangedRequest) {
	if req == nil || req.Session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	go func() {
		defer cancel()
		if err := l.Refresh(ctx, req.Session); err != nil && l.opts.Logger != nil {
			l.opts.Logger.Warn("mcptools: refresh the tool list", "err", err)
		}
	}()
}

// Lookup returns the tool named name, or false.
func (l *Live) Lookup(name string) (tools.BaseTool, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.set.Lookup(name)
}

// All returns the server's tools as last imported.
func (l *Live) All() []tools.BaseTool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.set.All()
}
