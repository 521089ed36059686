package assistant

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

// turn is one Stream call, from validation to the final write. It drives:
// begin, the first write, run and work pass values between its parts,
// each of which writes only its own fields, in its own file (see doc.go,
// "How a turn is built").
type turn struct {
	actor                   // the Engine, the user and the thread: the one tool-call site (actor.go)
	conn      *conn         // the model connection and its limits; read-only (conn.go, stream.go)
	past      []stretch     // the replay of the branch the turn continues (admit.go)
	topic     string        // what the topic filter reads (topic.go)
	in        input         // what the user says, as screened; read-only (input.go)
	cont      continuation  // what the turn answers that the last one left waiting (continuation.go)
	prompt    prompt        // the system prompt, as sections (prompt.go)
	tools     toolbox       // what the model may call, and the gate state (toolbox.go)
	know      knowledge     // what the thread's tool calls returned (knowledge.go)
	flow      workflow      // the workflow policy: ids the thread has seen, the verify round (workflow.go)
	out       transcript    // what the turn says: blocks, model messages, outcome (transcript.go)
	hold      *hold         // the open quota reservation, on its lease (quota.go)
	userID    string        // the user message stored by the first write
	reply     store.Message // the assistant placeholder stored with it
	firstTurn bool          // the thread had no messages before: a title may follow
	started   time.Time     // when the worker began (wall time, as TurnTimeout counts it)
	stop      stopper       // how the turn is told to stop (cancel.go)
	writes    replyWrites   // the reply's later writes (persist.go)
	judged    judgeSpend    // the tokens the guard's Judge used, charged with the turn's (guard.go)
	span      *turnSpan     // the turn's span and metrics (telemetry.go)
}

// begin runs the synchronous part of a turn under the caller's ctx: every
// check that can refuse the request, then the first write. Nothing is
// persisted on refusal.
//
// The cheap refusals come first: authorization, the request's shape and
// sizes, the per-user cap on turns in flight, then the quota, and only then
// the guard's scan, so a flood from one user costs little.
func (e *Engine) begin(ctx context.Context, u parley.User, req Request, span *turnSpan) (*turn, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	if err := e.validateRequest(&req); err != nil {
		return nil, err
	}
	if err := e.inFlight.acquire(u.ID, e.cfg.MaxTurnsPerUser); err != nil {
		return nil, err
	}
	started, t := false, &turn{}
	defer func() {
		if !started { // an error, or a panic in host code (Authorizer, Store, Ledger)
			e.inFlight.release(u.ID) // a turn that starts releases it when it ends
			e.release(context.WithoutCancel(ctx), u, t.hold)
		}
	}()
	adm, err := e.admit(ctx, u, req)
	if err != nil {
		return nil, err
	}
	// The admission is begin's: the worker keeps only the replay and the
	// topic text, so a parked turn does not hold the thread's messages.
	*t = turn{actor: actor{e: e, u: u, thread: adm.thread}, past: adm.past, cont: adm.cont, span: span}
	// The connection, model and settings are chosen once, here: nothing
	// later reads them from Config. The tools are computed before any
	// write: they consult the host's Registry and Authorizer, and a
	// failure there must leave nothing behind.
	if t.conn, err = e.connFor(ctx, u, adm.req); err != nil {
		return nil, err
	}
	t.tools = e.newToolbox(ctx, u, adm.req, adm.past, t.conn.window)
	if t.cont.changed {
		t.tools.changed()
	}
	t.know.start(adm.past, e.readOnly, adm.edit.changes)
	t.out.init(t.conn.maxTurnTokens, t.conn.maxTurnBytes, adm.prior, adm.past)
	deciding := ""
	if t.cont.decision != nil {
		deciding = t.cont.decision.Token
	}
	t.prompt.build(e, t.conn, u, &adm, &t.tools, deciding)
	// The quota is reserved before the guard scans anything, on what the
	// first call (and the topic filter's) will send: a user out of
	// allowance costs no scan.
	f := firstCall{system: tokensIn(t.prompt.size()), input: inputTokens(adm.text), defs: t.tools.defs()}
	est := reservation(t.conn, f, e.unscreenedRoom(adm.req), &adm) + e.topicReservation(t.conn, &adm)
	if t.hold, err = e.reserve(ctx, u, spendKey(t.conn, u), est); err != nil {
		// The user may still decide a card when out of budget: the
		// decision is carried out and reported without a model call.
		if !t.cont.quietly(err) {
			return nil, err
		}
	}
	t.in = e.screen(withJudgeSpend(ctx, &t.judged), u, &adm)
	t.topic = topicText(&adm, &t.in)
	if t.in.blocked() {
		t.tools.empty(e)
	}
	t.prompt.screened(&t.in, e.cfg.MaxPageContextBytes)
	t.flow.start(e, adm.past, t.in.forModel())
	if err := t.write(ctx, &adm); err != nil {
		return nil, err
	}
	// The new message supersedes a turn still running on the thread: here
	// at once, on other instances when their watcher sees LastSeq grow.
	e.live.stop(t.thread.ID, errSuperseded)
	e.running.add()
	started = true
	return t, nil
}

// write is the turn's first write, all or nothing: the decision's token is
// consumed, the thread created (or named, or its stale cancel cleared), and
// the user message and the assistant placeholder appended together. On
// failure it releases the hold (charging only what the guard's judge
// spent), gives a consumed card back and removes a thread it created.
func (t *turn) write(ctx context.Context, adm *admission) error {
	e := t.e
	fail := func(err error) error {
		t.cont.reopen(ctx, e, t.thread.ID, err)
		if n := t.judged.tokens.Load(); n > 0 {
			e.charge(ctx, t.u, t.hold, spendKey(t.conn, t.u), n)
		} else {
			e.release(context.WithoutCancel(ctx), t.u, t.hold)
		}
		t.hold = nil
		if adm.fresh && t.thread.ID != "" {
			e.discardThread(ctx, t.thread.ID)
		}
		return err
	}
	if t.cont.decision != nil {
		// The token is consumed before the turn is written: a decision that
		// loses a race, or comes twice, leaves nothing behind.
		if err := t.cont.consume(ctx, e); err != nil {
			return fail(err)
		}
	}
	th, first, err := e.openThread(ctx, t.u, adm, t.in.stored())
	t.actor, t.firstTurn = actor{e: e, u: t.u, thread: th}, first
	if err != nil {
		return fail(err)
	}
	user := userMessageRow(adm, &t.in, th.ID, e.guard != nil)
	t.reply = store.Message{ThreadID: th.ID, Role: store.RoleAssistant, Status: store.StatusStreaming}
	err = e.cfg.Store.AppendTurn(ctx, &user, &t.reply)
	t.userID = user.ID
	if err != nil {
		switch {
		case errors.Is(err, store.ErrConflict) && user.Seq != 0:
			return fail(conflict("persist turn", "That was already answered.", err))
		case errors.Is(err, store.ErrConflict) && user.Replaces != "":
			return fail(conflict("persist turn", "That message was already replaced.", err))
		}
		return fail(e.storeErr("persist turn", err))
	}
	if adm.edit.replaces != nil {
		e.withdrawCards(context.WithoutCancel(ctx), adm.edit, adm.pending)
	}
	return nil
}

// openThread readies the thread a turn of u writes to: created for a fresh
// turn, named after the user's stored text when it has no title (a draft
// from NewThread, or a first message edited), its stale cancel cleared. It
// returns the thread (on failure, as far as it got: with its id once
// created) and whether this is its first turn.
func (e *Engine) openThread(ctx context.Context, u parley.User, adm *admission, text string) (store.Thread, bool, error) {
	th := adm.thread
	if adm.fresh {
		th = store.Thread{ID: adm.req.ThreadID, OwnerID: u.ID, Title: heuristicTitle(text)}
		if err := e.cfg.Store.CreateThread(ctx, &th); err != nil {
			th.ID = ""
			if errors.Is(err, store.ErrConflict) {
				// Only u's own first messages of one chat, sent at once, meet
				// here: another user's chat of that name has another id.
				return th, false, conflict("create thread", "That conversation was just started by another request. Please send the message again.", err)
			}
			return th, false, wrap(CodeInternal, "create thread", err)
		}
	}
	first := th.LastSeq == 0
	if adm.edit.retitle {
		// An edit of the first message: a title made from the text the
		// user edited away goes with it. (A title the user set stays.)
		first, th.Title = true, ""
	}
	if first && th.Title == "" {
		title := heuristicTitle(text)
		if err := e.cfg.Store.RenameThread(ctx, th.ID, title); err != nil {
			return th, first, e.storeErr("name thread", err)
		}
		th.Title = title
	}
	if adm.req.ThreadID != "" && th.CancelRequestedAt != nil {
		// A cancel aimed at an earlier turn must not stop this one.
		if err := e.cfg.Store.ClearCancel(ctx, th.ID); err != nil {
			return th, first, e.storeErr("clear cancel", err)
		}
	}
	return th, first, nil
}

// userMessageRow is the user message a turn stores on thread threadID: the
// text as the guard redacted it (credentials and personal data it found
// never reach the store), its verdict, and what it answers or replaces.
func userMessageRow(adm *admission, in *input, threadID string, guarded bool) store.Message {
	m := store.Message{ThreadID: threadID, Role: store.RoleUser, Status: store.StatusComplete,
		Content: in.stored(), Guard: verdict(in.verdict, guarded)}
	if adm.edit.replaces != nil {
		m.Replaces = adm.edit.replaces.ID
	}
	switch {
	case adm.cont.decision != nil:
		m.Source = store.SourceDecision
	case adm.req.Form != nil:
		m.Source = store.SourceForm
	case len(adm.req.ToolResults) > 0 && adm.req.Message == "":
		m.Source = store.SourceToolResults
	}
	if len(adm.req.ToolResults) > 0 || adm.req.Form != nil {
		// Answer the last turn at most once: the append fails if anything
		// was added to the thread since it was read, here or elsewhere.
		m.Seq = adm.prior[len(adm.prior)-1].Seq + 1
	}
	return m
}

// discardThread deletes a thread begin created for a turn that was then
// refused, so no empty thread is left behind.
func (e *Engine) discardThread(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := e.cfg.Store.DeleteThread(ctx, id); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: remove empty thread", "thread", id, "err", err)
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
	e := t.e
	wctx, cancel := context.WithTimeout(withJudgeSpend(withLogTurn(context.WithoutCancel(ctx), t.reply.ID), &t.judged), e.cfg.TurnTimeout)
	t.stop.start(wctx)
	t.writes.start(e, &t.reply)
	t.started = time.Now()
	// A stopped turn's reply is stored as the user's stream ends, not after
	// the drain; the AfterFunc also fires, harmlessly, when the turn ends.
	unstop := context.AfterFunc(t.stop.ctx, func() {
		defer t.stop.markStored()
		t.writes.stopWrite(&t.out, t.stop.err())
	})
	e.live.add(t.thread.ID, &t.stop, t.reply)
	unlink := func() bool { return false }
	if e.cfg.CancelOnDetach {
		unlink = context.AfterFunc(ctx, cancel)
	}
	r := newRelay(&t.stop)
	go func() {
		// Closing the relay comes before cancel: a relay that sees the
		// turn's context end then always finds it closed if the turn
		// finished.
		defer e.running.done()
		defer e.inFlight.release(t.u.ID)
		defer unlink()
		defer cancel()
		defer r.close()
		defer t.stop.markStored()
		defer unstop()
		defer e.live.remove(t.thread.ID, &t.stop)
		t.work(wctx, r.send)
	}()
	detach := func() {
		if e.cfg.CancelOnDetach {
			cancel()
		}
	}
	r.forward(yield, detach, func() blocks.Block { return e.errorBlockContext(wctx, t.stop.err()) })
}

// work runs the turn to completion and persists it, whatever happens.
func (t *turn) work(ctx context.Context, emit func(blocks.Block)) {
	emit(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{
		ThreadID: t.thread.ID, MessageID: t.reply.ID, UserMessageID: t.userID, Title: t.thread.Title,
		Connection: t.conn.name, Model: t.conn.model,
	}})
	t.auditGuard(ctx, AuditGuardInput, t.in.verdict, nil)
	t.auditContext(ctx, &t.in)
	firstKept := false
	keep := func(b blocks.Block) {
		t.out.keep(b)
		// Signal after the keep: a checkpoint taken on the signal must
		// hold the block, or it writes an empty reply and the next one is
		// a heartbeat away.
		if !firstKept { // keep runs on the worker goroutine only
			firstKept = true
			t.writes.kept()
			t.span.firstBlock(ctx)
		}
		emit(b)
	}
	record := func(b blocks.Block) {
		if !t.stop.stopped() { // the user's stream ended with the stop: the stored reply stays what they saw
			keep(b)
		}
	}
	t.writes.startBeat(ctx, &t.out, &t.stop)
	if w, ok := t.in.warning(ctx, t.e.cfg.Logger, t.u, t.e.cfg.GuardMessage); ok {
		record(w)
	}
	func() {
		defer t.writes.endBeat()
		defer func() {
			if r := recover(); r != nil {
				t.out.fail(wrap(CodeInternal, "turn", fmt.Errorf("panic: %v\n%s", r, debug.Stack())))
			}
		}()
		// What a decision or the client's results did is stored even if the
		// turn is stopped meanwhile: it happened, and the thread must say so.
		t.resume(t.stop.ctx, keep)
		t.loop(ctx, record)
		correct(ctx, &t.actor, &t.out, t.tools.wrote, record)
	}()
	if err := t.writes.persist(ctx, &t.out); err != nil {
		t.out.fail(err)
	}
	// The quota is charged after the reply is written, on a window of its
	// own: a failing ledger cannot use up the reply's time. The stream ends
	// once both are done, so a caller that saw the end sees the usage.
	// The span ends first: with RecordContent its redaction may ask the
	// guard's judge, whose tokens the charge then counts.
	t.span.end(withJudgeSpend(ctx, &t.judged), t.e.guard, t.thread.ID, t.conn, &t.out, t.in.stored())
	t.e.charge(ctx, t.u, t.hold, spendKey(t.conn, t.u), t.out.usage.Total()+t.judged.tokens.Load())
	if t.firstTurn && t.out.err == nil && !t.in.blocked() && !t.stop.stopped() && t.out.finish != FinishOffTopic {
		t.e.startTitle(t.conn, t.u, t.thread, t.in.stored(), t.out.answerText())
	}
	if t.out.err != nil {
		emit(t.e.errorBlockContext(ctx, t.out.err))
		return
	}
	emit(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{
		ThreadID: t.thread.ID, MessageID: t.reply.ID,
		InputTokens: t.out.usage.InputTokens, OutputTokens: t.out.usage.OutputTokens, Finish: t.out.finish,
	}})
}
