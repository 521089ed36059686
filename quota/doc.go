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
// A turn reserves an estimate before the model call. Reserve admits it while
// the user has allowance left, that is while used + held < limit in every
// period with a limit, and holds min(estimate, the smallest limit - used -
// held): a user with 300 tokens a day and a turn estimated at 1,500 is
// admitted with a hold of 300, and a second turn is refused while the first
// holds the rest. A zero estimate is always admitted and holds nothing (it
// charges tokens already spent; see Ledger.Reserve). After the turn, Settle
// replaces the hold with the actual usage, or Release drops it if the model
// never ran. Holds live HoldTTL (DefaultHoldTTL by default); Sweep voids
// expired ones, so a crashed worker frees its room at the next sweep. A
// Ledger that is also a Renewer lets its caller keep a hold on a short
// lease instead, renewed while the caller lives: then a crashed worker's
// hold expires a lease after its last renewal, not a whole TTL after it
// was reserved.
//
// # Overshoot
//
// Tokens a model consumed are always counted, so a turn that uses more than
// it holds pushes usage past the limit. That overshoot is bounded by what
// was admitted: every admission leaves used + held <= limit, and after the
// last admission only the holds then open can add more than they hold.
// Usage therefore never ends above limit + the summed overshoot (actual -
// hold, where the hold is Hold.Estimate, the capped amount) of the holds
// open together at the last admission: with k concurrent turns of one user
// each using at most x more than it holds, limit + k·x.
//
// Capping makes holds smaller than estimates, so an estimate that is an
// upper bound (prompt tokens + max output tokens) no longer keeps usage
// under the limit: the turn admitted with the last of the allowance may use
// its whole estimate, up to estimate - hold past the limit. That is the
// price of admitting a turn the whole estimate does not fit. A caller that
// wants usage to stay near the limit bounds the turn by its hold (for
// instance the model's output tokens by Hold.Estimate minus the prompt);
// then usage passes the limit only by what that bound leaves out.
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
// period that resets last among those with no room left, with its limit,
// used and held tokens at the refusal, and ResetsAt; Held > 0 with Used <
// Limit means the user's other turns in progress hold the rest, and room
// may come back before ResetsAt (see ExceededError). Settle and Release of
// a hold that is not open return ErrHoldNotFound; invalid arguments return
// ErrInvalid. SpendLedger.Allow refuses with a *SpendCapError
// (ErrSpendCapExceeded) and RateLimiter.Take with a *RateLimitError
// (ErrRateLimited), both carrying RetryAt. Any other error is an
// infrastructure failure. Implementations return these raw; the Engine wraps
// them once.
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
// used and held, and hold rows holding the held amount (the capped
// estimate), the three period starts, the expiry and an open flag. A SQL ledger can then be:
//
//   - Reserve: in one transaction, insert missing usage rows and lock the
//     three rows (SELECT ... FOR UPDATE, in the order daily, weekly,
//     monthly), read used and held, and call Usage.Admit with the limits
//     resolved by Policy.Limit. If it refuses, roll back and return its
//     error; else UPDATE usage SET held = held + $hold for the three rows
//     and insert the hold row with $hold, the capped amount Admit returned.
//     The hold depends on all three rows, so they must be locked together
//     before it is computed: per-row conditional updates cannot cap it.
//   - Settle and Release: UPDATE holds SET open = false WHERE id = $1 AND
//     user_id = $2 AND open RETURNING estimate, starts; no row is
//     ErrHoldNotFound; else move the held amount out of held and add actual
//     to used in the same transaction.
//   - Sweep: the same for every open hold with expires_at <= $now.
//   - Renew (optional, quota.Renewer): UPDATE holds SET expires_at = $3
//     WHERE id = $1 AND user_id = $2 AND open; no row is ErrHoldNotFound.
//
// Then run quotatest.Run against it. The suite passes now explicitly and
// compares instants with time.Time.Equal, so a ledger may store times in
// UTC.
package quota
