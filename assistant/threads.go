package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

// The Engine's thread API: what a user may list, read, name, archive and
// delete, and the access check every thread path shares (thread).

// NewThread returns an empty thread for u to start a conversation in: an
// empty untitled thread among u's 50 most recently updated (a draft left by
// an earlier "new chat") if there is one, else a new one (E6). The first
// message on it names it. Two concurrent calls may each create one.
func (e *Engine) NewThread(ctx context.Context, u parley.User) (store.Thread, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return store.Thread{}, err
	}
	ts, err := e.cfg.Store.ListThreads(ctx, u.ID, store.ListOptions{})
	if err != nil {
		return store.Thread{}, e.storeErr("list threads", err)
	}
	for _, th := range ts {
		if th.LastSeq == 0 && th.Title == "" {
			return th, nil
		}
	}
	th := store.Thread{OwnerID: u.ID}
	if err := e.cfg.Store.CreateThread(ctx, &th); err != nil {
		return store.Thread{}, e.storeErr("create thread", err)
	}
	return th, nil
}

// Threads lists u's own threads, most recently updated first.
func (e *Engine) Threads(ctx context.Context, u parley.User, opts store.ListOptions) ([]store.Thread, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	ts, err := e.cfg.Store.ListThreads(ctx, u.ID, opts)
	if err != nil {
		return nil, wrap(CodeInternal, "list threads", err)
	}
	return ts, nil
}

// ThreadOptions selects what Engine.Thread returns.
type ThreadOptions struct {
	// Superseded includes the messages an edit or a regeneration replaced
	// (their SupersededAt is set), for audit. By default only the current
	// conversation is returned.
	Superseded bool
}

// Thread returns a thread and its messages in stored form, if u may read it.
// A thread u may not read is reported as not found, never as forbidden, so
// its existence does not leak. A reader other than the owner (staff) sees
// the confirm cards without their tokens, each under a stand-in that
// Proposals shows too: only the owner may decide a card.
func (e *Engine) Thread(ctx context.Context, u parley.User, id string, opts ThreadOptions) (store.Thread, []store.Message, error) {
	t, msgs, err := e.threadMessages(ctx, u, id, ReadThread, opts)
	if err != nil {
		return store.Thread{}, nil, err
	}
	if err := e.auditRead(ctx, u, t, ""); err != nil {
		return store.Thread{}, nil, err
	}
	if t.OwnerID != u.ID {
		msgs = redactCards(msgs)
	}
	return t, msgs, nil
}

// redactedToken stands in for a confirm card's token when someone other
// than its owner (staff) reads the thread. The token is the owner's
// capability to decide the card, so no one else is shown it; the stand-in
// is the same in the messages (Thread) and the proposals (Proposals), so a
// reader still sees each card with its state.
func redactedToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "redacted-" + hex.EncodeToString(sum[:12])
}

// redactCards is msgs with each confirm block's token replaced by its
// stand-in. Messages with a card get blocks of their own; msgs' are left
// as they are.
func redactCards(msgs []store.Message) []store.Message {
	for i := range msgs {
		if !slices.ContainsFunc(msgs[i].Blocks, func(b blocks.Block) bool { return b.Kind == blocks.Confirm }) {
			continue
		}
		bs := slices.Clone(msgs[i].Blocks)
		for j := range bs {
			if bs[j].Kind == blocks.Confirm {
				bs[j].ID = redactedToken(bs[j].ID)
			}
		}
		msgs[i].Blocks = bs
	}
	return msgs
}

// OwnThread is Thread for the thread's owner only: another user's thread
// is CodeNotFound, staff included, and nothing is audited. It is the read
// a continuation makes before it writes (what the thread waits on).
func (e *Engine) OwnThread(ctx context.Context, u parley.User, id string, opts ThreadOptions) (store.Thread, []store.Message, error) {
	return e.threadMessages(ctx, u, id, WriteThread, opts)
}

// threadMessages reads a thread u may act on as kind, and its messages.
func (e *Engine) threadMessages(ctx context.Context, u parley.User, id string, kind ActionKind, opts ThreadOptions) (store.Thread, []store.Message, error) {
	t, err := e.thread(ctx, u, id, kind)
	if err != nil {
		return store.Thread{}, nil, err
	}
	msgs, err := e.cfg.Store.ListMessages(ctx, t.ID)
	if err != nil {
		return store.Thread{}, nil, e.storeErr("list messages", err)
	}
	if !opts.Superseded {
		msgs = slices.DeleteFunc(msgs, func(m store.Message) bool { return m.SupersededAt != nil })
	}
	return t, endInterrupted(msgs), nil
}

// interruptedNote ends a reply whose worker died (SweepInterrupted).
const interruptedNote = "This answer was interrupted: the server stopped while writing it. Regenerate it to try again."

// endInterrupted gives each interrupted reply of msgs the error block its
// worker never wrote, as every other failed reply has: readers see why it
// stops where it does. msgs' own blocks are left as they are.
func endInterrupted(msgs []store.Message) []store.Message {
	for i, m := range msgs {
		if m.Status != store.StatusInterrupted || len(m.Blocks) > 0 && m.Blocks[len(m.Blocks)-1].Terminal() {
			continue
		}
		msgs[i].Blocks = append(slices.Clip(m.Blocks), blocks.Block{Kind: blocks.Error, ErrorCode: string(CodeInternal), Content: interruptedNote})
	}
	return msgs
}

// auditRead records u reading another user's thread t: every read path
// that shows another user's conversation goes through it. what names a
// read other than the transcript itself ("proposals").
func (e *Engine) auditRead(ctx context.Context, u parley.User, t store.Thread, what string) error {
	if t.OwnerID == u.ID {
		return nil
	}
	fields := map[string]string{"owner": t.OwnerID}
	if what != "" {
		fields["read"] = what
	}
	data, _ := json.Marshal(fields)
	ev := store.AuditEvent{Kind: AuditThreadRead, ActorID: u.ID, ThreadID: t.ID, Data: data}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		return wrap(CodeInternal, "audit thread read", err)
	}
	return nil
}

// Proposals returns the proposals of a thread u may read, oldest first, so
// a client reloading the thread can tell which confirm cards still wait for
// a decision. A pending proposal past its expiry is reported expired. A
// reader other than the owner sees each Token replaced by the stand-in
// Thread shows on its card.
func (e *Engine) Proposals(ctx context.Context, u parley.User, threadID string) ([]store.Proposal, error) {
	t, err := e.thread(ctx, u, threadID, ReadThread)
	if err != nil {
		return nil, err
	}
	if err := e.auditRead(ctx, u, t, "proposals"); err != nil {
		return nil, err
	}
	ps, err := e.cfg.Store.ListProposals(ctx, t.ID)
	if err != nil {
		return nil, wrap(CodeInternal, "list proposals", err)
	}
	now := e.cfg.Now()
	for i := range ps {
		if ps[i].Status == store.ProposalPending && !now.Before(ps[i].ExpiresAt) {
			ps[i].Status = store.ProposalExpired
		}
	}
	if slices.ContainsFunc(ps, func(p store.Proposal) bool { return p.Status == store.ProposalPending }) {
		msgs, err := e.cfg.Store.ListMessages(ctx, t.ID)
		if err != nil {
			return nil, e.storeErr("list messages", err)
		}
		e.withdrawSuperseded(ctx, ps, msgs)
	}
	if t.OwnerID != u.ID {
		for i := range ps {
			ps[i].Token = redactedToken(ps[i].Token)
		}
	}
	return ps, nil
}

// ExpireProposals marks every pending proposal past its expiry expired and
// returns how many it changed: housekeeping, since a late decision is
// refused either way. Run it now and then, as the example server does.
func (e *Engine) ExpireProposals(ctx context.Context) (int, error) {
	n, err := e.cfg.Store.ExpireProposals(ctx, e.cfg.Now())
	if err != nil {
		return 0, wrap(CodeInternal, "expire proposals", err)
	}
	return n, nil
}

// ArchiveThread archives (soft-deletes) u's thread.
func (e *Engine) ArchiveThread(ctx context.Context, u parley.User, id string) error {
	t, err := e.thread(ctx, u, id, WriteThread)
	if err != nil {
		return err
	}
	if err := e.cfg.Store.ArchiveThread(ctx, t.ID, e.cfg.Now()); err != nil {
		return e.storeErr("archive thread", err)
	}
	return nil
}

// MaxTitleBytes bounds a thread title set with RenameThread.
const MaxTitleBytes = 200

// RenameThread sets the title of u's thread: one line, control characters
// and runs of white space made single spaces, cut to MaxTitleBytes. An
// empty title is CodeInvalidRequest; only the owner may rename a thread.
// It is audited (AuditThreadRenamed): a title the user set is never
// replaced by an automatic one.
func (e *Engine) RenameThread(ctx context.Context, u parley.User, id, title string) (store.Thread, error) {
	if strings.IndexByte(title, 0) >= 0 {
		return store.Thread{}, invalidRequest("rename thread", "title contains a NUL character")
	}
	title = plainLine(strings.ToValidUTF8(title, "\uFFFD"), MaxTitleBytes)
	if title == "" {
		return store.Thread{}, invalidRequest("rename thread", "title is empty")
	}
	t, err := e.thread(ctx, u, id, WriteThread)
	if err != nil {
		return store.Thread{}, err
	}
	if err := e.cfg.Store.RenameThread(ctx, t.ID, title); err != nil {
		return store.Thread{}, e.storeErr("rename thread", err)
	}
	ev := store.AuditEvent{Kind: AuditThreadRenamed, ActorID: u.ID, ThreadID: t.ID}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: audit a rename", "thread", t.ID, "err", err)
	}
	t.Title = title
	return t, nil
}

// titledByUser reports whether the thread's owner ever set its title.
func (e *Engine) titledByUser(ctx context.Context, threadID string) (bool, error) {
	evs, err := e.cfg.Store.ListAudit(ctx, store.AuditFilter{Kind: AuditThreadRenamed, ThreadID: threadID, Limit: 1})
	if err != nil {
		return false, e.storeErr("read renames", err)
	}
	return len(evs) > 0, nil
}

// DeleteThread removes u's thread and its messages for good, archived or
// not: for retention and for a user's "delete my data". A turn running on
// it is stopped first. Only the owner may delete a thread; the deletion is
// audited (AuditThreadDeleted). Archiving (ArchiveThread) is the reversible
// kind of delete.
func (e *Engine) DeleteThread(ctx context.Context, u parley.User, id string) error {
	t, err := e.thread(ctx, u, id, ReadThread)
	if err != nil {
		return err
	}
	if t.OwnerID != u.ID {
		return wrap(CodeNotFound, "delete thread", errors.New("not the owner"))
	}
	// A turn running here stops and stores what it has before the rows go;
	// on other instances, their next poll finds the thread gone.
	if err := e.live.stopWait(ctx, t.ID, errThreadDeleted); err != nil {
		return wrap(CodeInternal, "delete thread", err)
	}
	if err := e.cfg.Store.DeleteThread(ctx, t.ID); err != nil {
		return e.storeErr("delete thread", err)
	}
	ev := store.AuditEvent{Kind: AuditThreadDeleted, ActorID: u.ID, ThreadID: t.ID}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: audit thread deletion", "thread", t.ID, "err", err)
	}
	return nil
}

// thread loads a thread and checks u may perform kind on it. id is a
// thread's id or the name of u's chat (see ownThread): callers use the
// returned thread's ID from here on, never id. The owner may read and write
// it; nobody else may ever write it; another user may read it only if the
// Authorizer allows ReadThread. Both a missing thread and a refused one are
// CodeNotFound, so existence never leaks.
func (e *Engine) thread(ctx context.Context, u parley.User, id string, kind ActionKind) (store.Thread, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return store.Thread{}, err
	}
	if !validID(id) {
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", store.ErrNotFound)
	}
	t, own, err := e.ownThread(ctx, u, id)
	switch {
	case err != nil:
		return store.Thread{}, err
	case own:
	case t.ID == "":
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", store.ErrNotFound)
	case kind != ReadThread:
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", errors.New("not the owner"))
	default:
		if err := e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: ReadThread, Thread: &t}); err != nil {
			return store.Thread{}, wrap(CodeNotFound, "resolve thread", err)
		}
	}
	if t.ArchivedAt != nil && kind == WriteThread {
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", store.ErrNotFound)
	}
	return t, nil
}
