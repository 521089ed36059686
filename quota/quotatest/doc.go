// Package quotatest is the conformance suite for the quota package's
// interfaces. Every implementation runs it:
//
//	func TestConformance(t *testing.T) {
//		quotatest.Run(t, func(t *testing.T, p quota.Policy) quota.Ledger {
//			l, err := myledger.New(db, p) // fresh schema, closed with t.Cleanup
//			if err != nil {
//				t.Fatal(err)
//			}
//			return l
//		})
//		quotatest.RunSpendLedger(t, func(t *testing.T) quota.SpendLedger { return mySpend(t) })
//		quotatest.RunRateLimiter(t, func(t *testing.T) quota.RateLimiter { return myLimiter(t) })
//	}
//
// Each subtest asks for a fresh, empty implementation, with the Policy
// (defaults, location, hold TTL) the case needs. The suite is the only
// clock: it passes every now explicitly, and for one ledger its clock never
// moves backwards. Subtests run one after another. Errors are checked with
// errors.Is and errors.As, never by text. The zone database is embedded
// (time/tzdata), so results do not depend on the machine.
//
// # What Run checks
//
//   - Periods: local midnight in a configured zone, nil location as UTC;
//     days of 23 and 25 hours on the America/New_York and Europe/Berlin
//     daylight-saving days; midnight skipped (America/Havana,
//     America/Santiago: the day starts at the transition) and repeated
//     (Havana: the first midnight); ISO weeks from Monday, Sunday in the
//     week before, a week across a year boundary; month ends, leap day,
//     months in a zone; a new period starting at zero; a hold charged to
//     the periods it was reserved in; an open hold not counting in the next
//     period. Expected instants are written out by hand.
//   - Limits: no limits is unlimited but counted; defaults; a positive
//     estimate admitted while used + held < limit with its hold capped at
//     what is left, refused at used + held == limit, a zero estimate
//     admitted there; the ExceededError's fields (used and held at the
//     refusal), and its period being the one that resets last (a week that
//     outlasts its month, ties to the longer period); a refusal holding
//     nothing; overrides replacing defaults, -1 and 0 overrides, unset
//     fields falling back, SetLimits replacing the whole override and
//     Limits{} restoring the defaults; overrides per user; limits copied on
//     set; a limit lowered below usage; Limits reporting the override
//     (not the effective limits) by copy.
//   - Holds: ids unique, expiry at now + HoldTTL or DefaultHoldTTL; held
//     tokens count and cap the next hold; Settle replaces the hold, charges
//     overshoot, uses the ledger's record rather than the caller's copy;
//     Release charges nothing; a second Settle or Release (any order) is
//     ErrHoldNotFound and changes nothing; unknown holds and another user's
//     hold are ErrHoldNotFound; users are independent.
//   - Caps: a 300-token limit admits an estimate of 1,500 with a hold of
//     300; a second reservation refused while the first holds the rest,
//     with used 0, held 300 and the reset in its ExceededError, then
//     admitted with what a Settle of less left, then refused as used up; a
//     zero limit refusing every positive estimate with the numbers true; a
//     zero estimate admitted at, over and under a zero limit, its Settle
//     charging; the hold capped by the tightest period (not the shortest)
//     and the refusal naming it; Settle, Release and Sweep taking out the
//     capped hold, not the estimate or the caller's copy.
//   - Expiry: Sweep voids holds at (not before) ExpiresAt, across users, and
//     reports how many; swept holds are ErrHoldNotFound; a hold past expiry
//     settles until a Sweep runs.
//   - Renewal (skipped for a ledger that is not a quota.Renewer): Renew
//     moves a hold's expiry earlier and later than its TTL, Sweep voiding
//     it at (not before) the renewed expiry; the held tokens stay the
//     ledger's record; settled, released, swept, unknown and another
//     user's holds are ErrHoldNotFound and unchanged; a hold past expiry
//     and not yet swept is kept by a renewal; a zero time is ErrInvalid;
//     renewals racing Settle and Release never revive a closed hold.
//   - Arguments: ErrInvalid for empty user ids, negative tokens and limits
//     below -1, changing nothing; a canceled context fails every method and
//     changes nothing (wrapping context.Canceled is preferred, not required).
//   - Concurrency: 64 goroutines reserving, settling and releasing keep exact
//     totals; under a limit with actual <= hold, usage never passes it and
//     used + held never does while turns run; with turns using more than
//     they hold, usage stays within limit + open holds × overshoot; 100
//     streams reserving at once admit exactly limit/estimate, then end at
//     limit + admitted × overshoot; 64 reserving at once without settling
//     hold exactly the tightest limit between them, at most one hold
//     capped. Run the suite with -race.
//
// RunSpendLedger checks caps off by default, the budget reached at (not
// above) Budget, the window (now - Window, now], RetryAt, independent keys,
// ErrInvalid for negative tokens, exact sums under concurrent Records and
// canceled contexts. RunRateLimiter checks the zero Rate, the limit and
// RetryAt, the sliding window, that refused calls are not counted,
// independent keys, exactly Calls admitted out of 256 concurrent Takes and
// canceled contexts.
//
// # What it leaves open
//
// Whether Usage reports periods before the latest now a ledger has seen
// (memquota does not keep them); the Location of returned times (the suite
// compares instants); the format of hold ids; whether Sweep also voids
// holds lazily elsewhere (it must not before ExpiresAt).
package quotatest
