package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/store"
)

// proposalInsert is what CreateProposal writes: every column but
// decided_at, which a pending proposal leaves NULL.
const proposalInsert = `token, user_id, thread_id, message_id, call_id, tool, args, args_hash, summary,
	status, created_at, expires_at`

const proposalColumns = proposalInsert + `, decided_at`

func (s *Store) scanProposal(row rowScanner) (store.Proposal, error) {
	var p store.Proposal
	err := row.Scan(&p.Token, &p.UserID, &p.ThreadID, &p.MessageID, s.text(&p.CallID), &p.Tool,
		s.json((*[]byte)(&p.Args)), &p.ArgsHash, s.text(&p.Summary), &p.Status,
		timeDest{&p.CreatedAt}, timeDest{&p.ExpiresAt}, timePtrDest{&p.DecidedAt})
	return p, err
}

// noProposal is ErrNotFound for a token. The token is a credential, so it
// stays out of the error, as it stays out of logs.
func noProposal(op string) error {
	return fmt.Errorf("sqlstore: %s: no such proposal: %w", op, store.ErrNotFound)
}

// CreateProposal implements store.Proposals. Args are stored as the exact
// bytes given. The thread is looked up in the same transaction as the
// insert, since SQLite enforces the foreign key only on connections that
// asked for it; on PostgreSQL the foreign key also catches a thread deleted
// in between. The caller's proposal is filled in (Status, a zero CreatedAt)
// only when it is written.
func (s *Store) CreateProposal(ctx context.Context, p *store.Proposal) error {
	const op = "create proposal"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	switch {
	case p == nil:
		return invalid(op, "nil proposal")
	case p.Token == "" || p.UserID == "" || p.ThreadID == "" || p.Tool == "" || p.ExpiresAt.IsZero():
		return invalid(op, "token, user, thread, tool and expiry required")
	case p.Status != "" && p.Status != store.ProposalPending:
		return invalid(op, "status %q, want pending", p.Status)
	}
	row := *p
	row.Status = store.ProposalPending
	if row.CreatedAt.IsZero() {
		row.CreatedAt = s.clock()
	}
	a := s.args(12).add(row.Token, row.UserID, row.ThreadID, row.MessageID).text(row.CallID).add(row.Tool).
		exactJSON("args", row.Args).add(row.ArgsHash).text(row.Summary).add(string(row.Status)).
		time(row.CreatedAt).time(row.ExpiresAt)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	found := true
	err := s.write(ctx, func(q querier) error {
		var one int
		err := q.QueryRowContext(ctx, s.rebind(`SELECT 1 FROM parley_threads WHERE id = ?`), row.ThreadID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return err
		}
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, s.rebind(`INSERT INTO parley_proposals (`+proposalInsert+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), a.a...)
		return err
	})
	if !found {
		return notFound(op, "thread", row.ThreadID)
	}
	if err != nil {
		return fail(ctx, op, err)
	}
	p.Status, p.CreatedAt = row.Status, row.CreatedAt
	return nil
}

// GetProposal implements store.Proposals.
func (s *Store) GetProposal(ctx context.Context, token string) (store.Proposal, error) {
	const op = "get proposal"
	if err := ctx.Err(); err != nil {
		return store.Proposal{}, fail(ctx, op, err)
	}
	p, err := s.scanProposal(s.db.QueryRowContext(ctx,
		s.rebind(`SELECT `+proposalColumns+` FROM parley_proposals WHERE token = ?`), token))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Proposal{}, noProposal(op)
	}
	if err != nil {
		return store.Proposal{}, fail(ctx, op, err)
	}
	return p, nil
}

// DecideProposal implements store.Proposals. The decision is one
// conditional UPDATE: only a pending row matches, and the database lets
// one writer at a time change a row (PostgreSQL re-checks the condition
// after waiting for the row's lock; SQLite has one writer), so of any
// number of deciders, in any number of processes, one matches and the
// others find the row decided. The same statement marks a late decision
// expired, which is stored, and reported as ErrConflict. When nothing
// matched, a read of the row tells an unknown token from a decided one.
// That read may find the row pending (on PostgreSQL, which reads with a
// new snapshot per statement): it was created, or reopened by
// ReopenProposal, after the UPDATE looked. The read locks the row, so the
// UPDATE, run once more, decides it.
func (s *Store) DecideProposal(ctx context.Context, token string, status store.ProposalStatus, at time.Time) (store.Proposal, error) {
	const op = "decide proposal"
	if err := ctx.Err(); err != nil {
		return store.Proposal{}, fail(ctx, op, err)
	}
	if status != store.ProposalApplied && status != store.ProposalDeclined {
		return store.Proposal{}, invalid(op, "status %q, want applied or declined", status)
	}
	a := s.args(6).time(at).add(string(status), string(store.ProposalExpired)).time(at).
		add(token, string(store.ProposalPending))
	if a.err != nil {
		return store.Proposal{}, invalid(op, "%v", a.err)
	}
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	var (
		p              store.Proposal
		updated, found bool
	)
	err := s.write(ctx, func(q querier) error {
		for range 2 {
			var err error
			p, err = s.scanProposal(q.QueryRowContext(ctx, s.rebind(`UPDATE parley_proposals
				SET status = CASE WHEN expires_at > ? THEN ? ELSE ? END, decided_at = ?
				WHERE token = ? AND status = ?
				RETURNING `+proposalColumns), a.a...))
			if !errors.Is(err, sql.ErrNoRows) {
				updated = err == nil
				return err
			}
			p, err = s.scanProposal(q.QueryRowContext(ctx,
				s.rebind(`SELECT `+proposalColumns+` FROM parley_proposals WHERE token = ?`+lock), token))
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			found = err == nil
			if err != nil || p.Status != store.ProposalPending {
				return err
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return store.Proposal{}, fail(ctx, op, err)
	case updated && p.Status == status:
		return p, nil
	case updated:
		return p, fmt.Errorf("sqlstore: %s: expired at %v: %w", op, p.ExpiresAt, store.ErrConflict)
	case !found:
		return store.Proposal{}, noProposal(op)
	case p.Status == store.ProposalPending:
		// Not reached: the locked row matches the second UPDATE.
		return p, fmt.Errorf("sqlstore: %s: pending, yet not decided: %w", op, store.ErrConflict)
	}
	return p, fmt.Errorf("sqlstore: %s: already %s: %w", op, p.Status, store.ErrConflict)
}

// ReopenProposal implements store.Proposals with one conditional UPDATE,
// atomic against DecideProposal for the same reason DecideProposal is
// atomic against itself. decidedAt is compared as it is stored: in UTC at
// microsecond precision, which is what DecideProposal returns. When nothing
// matched, a read of the row tells an unknown token from one in another
// state.
func (s *Store) ReopenProposal(ctx context.Context, token string, decidedAt time.Time) error {
	const op = "reopen proposal"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	a := s.args(5).add(string(store.ProposalPending), token,
		string(store.ProposalApplied), string(store.ProposalDeclined)).time(decidedAt)
	if a.err != nil {
		// Outside the years a decision can be stored with.
		return fmt.Errorf("sqlstore: %s: decided at another time: %w", op, store.ErrConflict)
	}
	n, err := s.exec(ctx, `UPDATE parley_proposals SET status = ?, decided_at = NULL
		WHERE token = ? AND status IN (?, ?) AND decided_at = ?`, a.a...)
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 1 {
		return nil
	}
	var status store.ProposalStatus
	err = s.db.QueryRowContext(ctx, s.rebind(`SELECT status FROM parley_proposals WHERE token = ?`), token).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return noProposal(op)
	}
	if err != nil {
		return fail(ctx, op, err)
	}
	if status == store.ProposalApplied || status == store.ProposalDeclined {
		return fmt.Errorf("sqlstore: %s: %s at another time: %w", op, status, store.ErrConflict)
	}
	return fmt.Errorf("sqlstore: %s: %s: %w", op, status, store.ErrConflict)
}

// ListProposals implements store.Proposals. Proposals created at the same
// instant list in the order they were inserted. The index on (thread_id,
// created_at, n) serves the query.
func (s *Store) ListProposals(ctx context.Context, threadID string) ([]store.Proposal, error) {
	const op = "list proposals"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	out, err := queryAll(ctx, s.db, s.rebind(`SELECT `+proposalColumns+` FROM parley_proposals
		WHERE thread_id = ? ORDER BY created_at, n`), []any{threadID}, s.scanProposal)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	return out, nil
}

// ExpireProposals implements store.Proposals. An expired proposal's
// DecidedAt is before, the time the caller swept at. The partial index on
// pending proposals' expires_at serves the query, and it is safe to run
// from many processes: a proposal another process decides meanwhile no
// longer matches.
func (s *Store) ExpireProposals(ctx context.Context, before time.Time) (int, error) {
	const op = "expire proposals"
	if err := ctx.Err(); err != nil {
		return 0, fail(ctx, op, err)
	}
	a := s.args(4).add(string(store.ProposalExpired)).time(before).add(string(store.ProposalPending)).time(before)
	if a.err != nil {
		return 0, invalid(op, "%v", a.err)
	}
	n, err := s.exec(ctx, `UPDATE parley_proposals SET status = ?, decided_at = ?
		WHERE status = ? AND expires_at <= ?`, a.a...)
	if err != nil {
		return 0, fail(ctx, op, err)
	}
	return int(n), nil
}
