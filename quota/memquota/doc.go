// Package memquota implements quota.Ledger, quota.SpendLedger and
// quota.RateLimiter in memory: for tests, examples and single-process
// deployments that need no usage history across restarts. All three are
// full implementations and pass the quota/quotatest conformance suites.
//
// A memory ledger sees only its own process. Several processes serving the
// same users need a shared (SQL) ledger, or each process grants the whole
// budget.
//
// # Errors
//
// The methods return the quota package's errors: *quota.ExceededError,
// quota.ErrHoldNotFound, quota.ErrInvalid, *quota.SpendCapError,
// *quota.RateLimitError, and ctx.Err() when the context is done.
//
// # Concurrency
//
// Ledger shards its users over 64 mutexes by a hash of the user id, so
// Reserve, Settle and Usage of different users rarely contend and those of
// one user are serialized: a reservation's check and hold are one step.
// Sweep visits every shard. SpendLedger and RateLimiter each hold one mutex.
//
// # Memory
//
// Ledger keeps, per user, the usage rows of the periods containing the
// latest now it was given, rows older periods still need for open holds,
// the override and the open holds. Sweep forgets users left with none of
// these, so memory follows active users; past periods' usage is not kept.
// SpendLedger keeps each key's records for the longest window Allow was
// asked about (an hour before the first Allow); RateLimiter keeps each
// key's calls for one window.
package memquota
