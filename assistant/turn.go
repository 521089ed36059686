package assistant

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// turn is the state of one Stream call, from validation to the final write,
// as a few named parts: actor (who and where; the steps every tool call
// takes), conn (the model connection), in (the screened input: admit fills
// it, screen scans it), prompt, tools, cont (what the last turn left
// waiting), out (the transcript), writes and stop. begin runs admit,
// reserve, screen and write in order; the worker runs the loop, then
// persist and settle.
type turn struct {
	actor       // the Engine, the user and the thread
	conn  *conn // the model connection and its limits
	req   Request
	user  store.Message // persisted user message
	reply store.Message // persisted assistant placeholder, filled as the turn runs

	in     input        // what the user says this turn, as screened
	prompt prompt       // the system prompt and the history replayed to the model
	tools  toolbox      // the tools offered this turn, and what their calls did so far
	know   knowledge    // what the thread's tool calls returned
	cont   continuation // what the turn answers that the last one left waiting

	// out is what the turn says: to the user, to the store and to the model.
	out  transcript
	hold *quota.Hold // the open quota reservation, until settled or released

	firstTurn bool // the thread had no messages before this turn: a title may follow
	fresh     bool // the turn creates its thread

	writes replyWrites // orders the reply's writes
	stop   stopper     // how the turn is told to stop
}

// begin runs the synchronous part of a turn under the caller's ctx: every
// check that can refuse the request, then the atomic write of the user
// message and the assistant placeholder. Nothing is persisted on refusal.
//
// The cheap refusals come first: authorization, the request's shape and
// sizes, the per-user cap on turns in flight, then the quota, and only then
// the guard's scan, so a flood from one user costs little.
func (e *Engine) begin(ctx context.Context, u parley.User, req Request) (*turn, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	if err := e.validateRequest(&req); err != nil {
		return nil, err
	}
	if err := e.inFlight.acquire(u.ID, e.cfg.MaxTurnsPerUser); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started { // an error, or a panic in host code (Authorizer, Store, Ledger)
			e.inFlight.release(u.ID) // a turn that starts releases it when it ends
		}
	}()
	t := &turn{actor: actor{e: e, u: u}, req: req}
	prior, scan, err := t.admit(ctx)
	if err != nil {
		return nil, err
	}
	// The connection, model and settings are chosen once, here: nothing
	// later reads them from Config.
	t.conn = e.connFor(ctx, u, &req)
	t.out.init(t.conn.maxTurnTokens, t.conn.maxTurnBytes, prior, t.prompt.past)
	// The quota is reserved before the guard scans anything, on an estimate
	// from the prompt as it would be unscanned (the page context is already
	// cut): a user out of allowance costs no scan.
	// Computed before any write: it consults the host's Registry and
	// Authorizer, and a failure there must leave nothing behind.
	t.tools = e.newToolbox(ctx, u, req.Page, req.Autonomous, t.prompt.past)
	t.prompt.system = t.systemPrompt()
	if err := t.reserve(ctx); err != nil {
		if t.cont.decision == nil || !errors.Is(err, ErrQuotaExceeded) && !errors.Is(err, ErrSpendCapExceeded) {
			return nil, err
		}
		// The user may still decide a card when out of budget: the decision
		// is carried out and reported without a model call.
		t.cont.quiet = err
	}
	t.screen(ctx, scan, prior)
	if err := t.write(ctx, prior); err != nil {
		return nil, err
	}
	// The new message supersedes a turn still running on the thread: here
	// at once, on other instances when their poll sees LastSeq grow.
	e.live.stop(t.thread.ID, errSuperseded)
	e.running.add()
	started = true
	return t, nil
}

// write is the turn's first write, all or nothing: the decision's token is
// consumed, the thread created (or its stale cancel cleared), and the user
// message and the assistant placeholder appended together. On failure it
// releases the hold, gives a consumed card back and removes a thread it
// created.
func (t *turn) write(ctx context.Context, prior []store.Message) error {
	e, req := t.e, t.req
	fail := func(err error) error {
		if t.cont.decision != nil && t.cont.decision.DecidedAt != nil {
			// Decided, but nothing ran: give the card back so the user can
			// decide again once the store recovers.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
			if rerr := e.cfg.Store.ReopenProposal(rctx, t.cont.decision.Token, *t.cont.decision.DecidedAt); rerr != nil {
				e.cfg.Logger.Error("assistant: a decided proposal's turn could not be written and the proposal could not be reopened; its tool did not run",
					"thread", t.thread.ID, "tool", t.cont.decision.Tool, "err", err, "reopen_err", rerr)
			}
			cancel()
		}
		t.release(context.WithoutCancel(ctx))
		if t.fresh && t.thread.ID != "" {
			t.discardThread(ctx)
		}
		return err
	}
	if t.cont.decision != nil {
		// The token is consumed before the turn is written: a decision that
		// loses a race, or comes twice, leaves nothing behind.
		if err := t.consume(ctx); err != nil {
			return fail(err)
		}
	}
	if t.fresh {
		t.thread = store.Thread{ID: req.ThreadID, OwnerID: t.u.ID, Title: heuristicTitle(t.in.verdict.Redacted)}
		if err := e.cfg.Store.CreateThread(ctx, &t.thread); err != nil {
			t.thread.ID = ""
			if errors.Is(err, store.ErrConflict) {
				return fail(conflict("create thread", "That conversation id is taken.", err))
			}
			return fail(wrap(CodeInternal, "create thread", err))
		}
	}
	t.firstTurn = t.thread.LastSeq == 0
	if t.cont.retitle {
		// An edit of the first message: a title made from the text the
		// user edited away goes with it. (A title the user set stays.)
		t.firstTurn, t.thread.Title = true, ""
	}
	if t.firstTurn && t.thread.Title == "" {
		// A draft from NewThread, or a first message edited: named by
		// its (new) first message.
		title := heuristicTitle(t.in.verdict.Redacted)
		if err := e.cfg.Store.RenameThread(ctx, t.thread.ID, title); err != nil {
			return fail(e.storeErr("name thread", err))
		}
		t.thread.Title = title
	}
	if req.ThreadID != "" && t.thread.CancelRequestedAt != nil {
		// A cancel aimed at an earlier turn must not stop this one.
		if err := e.cfg.Store.ClearCancel(ctx, t.thread.ID); err != nil {
			return fail(e.storeErr("clear cancel", err))
		}
	}
	// The stored text is redacted: credentials and personal data the guard
	// found never reach the store.
	t.user = store.Message{ThreadID: t.thread.ID, Role: store.RoleUser, Status: store.StatusComplete,
		Content: t.in.verdict.Redacted, Guard: verdict(t.in.verdict, e.guard != nil)}
	t.reply = store.Message{ThreadID: t.thread.ID, Role: store.RoleAssistant, Status: store.StatusStreaming}
	if t.cont.replaces != nil {
		t.user.Replaces = t.cont.replaces.ID
	}
	switch {
	case t.cont.decision != nil:
		t.user.Source = store.SourceDecision
	case req.Form != nil:
		t.user.Source = store.SourceForm
	case len(req.ToolResults) > 0 && req.Message == "":
		t.user.Source = store.SourceToolResults
	}
	if len(req.ToolResults) > 0 || req.Form != nil {
		// Answer the last turn at most once: the append fails if anything
		// was added to the thread since it was read, here or elsewhere.
		t.user.Seq = prior[len(prior)-1].Seq + 1
	}
	if err := e.cfg.Store.AppendTurn(ctx, &t.user, &t.reply); err != nil {
		if errors.Is(err, store.ErrConflict) && t.user.Seq != 0 {
			return fail(conflict("persist turn", "That was already answered.", err))
		}
		if errors.Is(err, store.ErrConflict) && t.user.Replaces != "" {
			return fail(conflict("persist turn", "That message was already replaced.", err))
		}
		return fail(e.storeErr("persist turn", err))
	}
	if t.cont.replaces != nil {
		t.withdrawCards(context.WithoutCancel(ctx))
	}
	return nil
}

// blocked reports whether the input guard refused the message.
func (t *turn) blocked() bool { return t.in.verdict.Action >= guard.Block }

// discardThread deletes the thread begin created for a turn that was then
// refused, so no empty thread is left behind.
func (t *turn) discardThread(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := t.e.cfg.Store.DeleteThread(ctx, t.thread.ID); err != nil {
		t.e.cfg.Logger.Error("assistant: remove empty thread", "thread", t.thread.ID, "err", err)
	}
}

// run starts the turn's worker and relays its blocks to yield. The worker
// runs in its own goroutine, detached from ctx: a consumer that stops
// reading, leaves or panics never holds the turn back, and the turn always
// finishes and persists. When the turn is stopped (Cancel, a newer message,
// TurnTimeout) the consumer's stream ends at once with the stop's error
// block, while the worker drains the model's stream for usage and writes
// the partial answer on its own.
func (t *turn) run(ctx context.Context, yield func(blocks.Block) bool) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.e.cfg.TurnTimeout)
	t.stop.ctx, t.stop.cancel = context.WithCancelCause(wctx)
	t.writes.first, t.stop.stored = make(chan struct{}, 1), make(chan struct{})
	// A stopped turn's reply is stored as the user's stream ends, not after
	// the drain; the AfterFunc also fires, harmlessly, when the turn ends.
	var once sync.Once
	stopStored := func() { once.Do(func() { close(t.stop.stored) }) }
	unstop := context.AfterFunc(t.stop.ctx, func() {
		defer stopStored()
		t.stopWrite()
	})
	t.e.live.add(t)
	unlink := func() bool { return false }
	if t.e.cfg.CancelOnDetach {
		unlink = context.AfterFunc(ctx, cancel)
	}
	out := make(chan blocks.Block, relayBuffer)
	detached := make(chan struct{})
	go func() {
		// Closing out comes before cancel: a relay that sees the turn's
		// context end then always finds out closed if the turn finished.
		defer t.e.running.done()
		defer t.e.inFlight.release(t.u.ID)
		defer unlink()
		defer cancel()
		defer close(out)
		defer stopStored()
		defer unstop()
		defer t.e.live.remove(t)
		t.work(wctx, func(b blocks.Block) {
			select {
			case out <- b:
				if len(out) == 0 {
					// A waiting consumer took it directly: let it run now
					// rather than when this goroutine next blocks.
					runtime.Gosched()
				}
				return
			default:
			}
			// The consumer is behind. Wait for it, unless it left or the turn
			// was stopped: a stopped turn never waits on a stalled reader.
			select {
			case out <- b:
			case <-detached:
			case <-t.stop.ctx.Done():
			}
		})
	}()
	defer close(detached)
	for {
		select {
		case b, ok := <-out:
			if !ok {
				return
			}
			if !yield(b) || b.Kind == blocks.Error {
				if t.e.cfg.CancelOnDetach {
					cancel()
				}
				return
			}
		case <-t.stop.ctx.Done():
			// Deliver what was produced before the stop. If the turn has
			// finished, that is everything; if it is still draining, end the
			// stream now with the stop's error, the block the worker persists.
			for {
				select {
				case b, ok := <-out:
					if !ok || !yield(b) || b.Kind == blocks.Error {
						return
					}
					continue
				default:
				}
				break
			}
			yield(t.e.errorBlock(t.stopErr()))
			return
		}
	}
}

// work runs the turn to completion and persists it, whatever happens.
func (t *turn) work(ctx context.Context, emit func(blocks.Block)) {
	emit(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{
		ThreadID: t.thread.ID, MessageID: t.reply.ID, UserMessageID: t.user.ID, Title: t.thread.Title,
		Connection: t.conn.name, Model: t.conn.model,
	}})
	t.auditGuard(ctx, AuditGuardInput, t.in.verdict, nil)
	t.auditContext(ctx)
	firstKept := false
	keep := func(b blocks.Block) {
		t.out.keep(b)
		// Signal after the add: a checkpoint taken on the signal must
		// hold the block, or it writes an empty reply and the next one is
		// a heartbeat away.
		if !firstKept { // keep runs on the worker goroutine only
			firstKept = true
			t.writes.first <- struct{}{} // buffered; watch checkpoints
		}
		emit(b)
	}
	record := func(b blocks.Block) {
		if t.stopped() {
			// The user's stream ended with the stop; keep the stored reply
			// equal to what they saw.
			return
		}
		keep(b)
	}
	if w, ok := inputWarning(t.in.verdict); ok {
		record(w)
	}
	func() {
		done := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			t.watch(ctx, done)
		}()
		defer func() {
			close(done)
			<-watched
		}()
		defer func() {
			if r := recover(); r != nil {
				t.out.fail(wrap(CodeInternal, "turn", fmt.Errorf("panic: %v\n%s", r, debug.Stack())))
			}
		}()
		// What a decision or the client's results did is stored even if the
		// turn is stopped meanwhile: it happened, and the thread must say so.
		switch {
		case t.cont.decision != nil:
			t.runDecision(t.stop.ctx, keep)
		case len(t.cont.clientCalls) > 0:
			t.runToolResults(t.stop.ctx, keep)
		}
		t.loop(ctx, record)
	}()
	t.persist(ctx)
	// The quota is settled after the reply is written, on a window of its
	// own: a failing ledger cannot use up the reply's time. The stream ends
	// once both are done, so a caller that saw the end sees the usage.
	t.settleQuota(ctx)
	t.startTitle()
	if t.out.err != nil {
		emit(t.e.errorBlock(t.out.err))
		return
	}
	emit(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{
		ThreadID: t.thread.ID, MessageID: t.reply.ID,
		InputTokens: t.out.usage.InputTokens, OutputTokens: t.out.usage.OutputTokens, Finish: t.out.finish,
	}})
}
