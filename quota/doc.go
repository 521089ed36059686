// Package quota limits what users spend on the model: per-user token
// budgets (Ledger), a rolling-window spend cap per model connection
// (SpendLedger) and a tool-call rate limit (RateLimiter).
//
// quota/memquota implements all three in memory; quota/quotatest is the
// conformance suite every implementation passes:
//
//	func TestConformance(t *testing.T) {
//		quotatest.Run(t, func(t *testing.T, p quota.Policy) quota.Ledger {
//			return myledger.New(db, p)
//		})
//	}
//
// # Token budgets
//
// A user has a daily, a weekly (ISO, from Monday) and a monthly budget,
// computed on the local calendar of the Policy's Location (see
// Period.Start). Usage is kept per (user, period, period start), so a new
// period starts at zero with no reset job and no reset race.
//
// A period's limit is the user's override (SetLimits) if set, else the
// policy default, else Unlimited (-1). A limit of 0 refuses every request
// with a positive estimate.
//
// A turn reserves an estimate before the model call; Reserve admits it only
// if every period has room for used + held + estimate. After the turn,
// Settle replaces the estimate with the actual usage, or Release drops it if
// the model never ran. Holds live HoldTTL (DefaultHoldTTL by default);
// Sweep voids expired ones, so a crashed worker frees its room at the next
// sweep.
//
// # Overshoot
//
// Tokens a model consumed are always counted, so a turn that uses more than
// it reserved pushes usage past the limit. That overshoot is bounded by what
// was admitted: every admission leaves used + held <= limit, and after the
// last admission only the holds then open can add more than they reserved.
// Usage therefore never ends above limit + the summed overshoot (actual -
// estimate) of the holds open together at the last admission: with k
// concurrent turns of one user each overshooting by at most x, limit + k·x.
// When estimates are upper bounds (prompt tokens + max output tokens, with
// the prompt counted generously), usage never passes the limit at all.
//
// A hold is charged to the periods it was reserved in: a turn that starts at
// 23:59 and settles at 00:01 counts toward the day it started.
//
// # Spend caps and rate limits
//
// SpendLedger records the tokens each model call spent per (connection,
// principal) and refuses a new turn once the trailing window's spend
// reaches the connection's SpendCap. It checks rather than reserves (see
// SpendLedger). RateLimiter counts calls per key in a sliding window, with
// check and count in one atomic step; the Engine uses it for tool calls per
// principal.
//
// # Errors
//
// Reserve refuses with an *ExceededError (errors.Is ErrExceeded) naming the
// period that resets last among those exceeded, its limit, usage and
// ResetsAt; Settle and Release of a hold that is not open return
// ErrHoldNotFound; invalid arguments return ErrInvalid. SpendLedger.Allow
// refuses with a *SpendCapError (ErrSpendCapExceeded) and RateLimiter.Take
// with a *RateLimitError (ErrRateLimited), both carrying RetryAt. Any other
// error is an infrastructure failure. Implementations return these raw;
// the Engine wraps them once.
//
// The Error texts are for logs. A message for the user is built from the
// typed error's fields, localized, with times shown in the user's zone.
//
// # Concurrency
//
// All three interfaces must be safe for concurrent use by many goroutines
// and, when backed by a shared database, by many processes: Reserve's check
// and hold are one atomic step, as are Settle's release and charge, and
// Take's check and count. Every method takes its clock as an argument (now)
// and fails, changing nothing, when its context is done.
//
// # Writing a Ledger
//
// Keep usage rows keyed by (user, period, Period.Start(now, loc)) holding
// used and held, and hold rows holding the estimate, the three period
// starts, the expiry and an open flag. A SQL ledger can then be:
//
//   - Reserve: in one transaction, insert missing usage rows, then per
//     period UPDATE usage SET held = held + $est WHERE key = ... AND ($limit
//     < 0 OR $limit - used - held >= $est) RETURNING used, held; if a
//     limited period updates no row, roll back, read the rows, and return
//     Usage.Check's error. Resolve limits with Policy.Limit.
//   - Settle and Release: UPDATE holds SET open = false WHERE id = $1 AND
//     user_id = $2 AND open RETURNING estimate, starts; no row is
//     ErrHoldNotFound; else move estimate out of held and add actual to used
//     in the same transaction.
//   - Sweep: the same for every open hold with expires_at <= $now.
//
// Then run quotatest.Run against it. The suite passes now explicitly and
// compares instants with time.Time.Equal, so a ledger may store times in
// UTC.
package quota
