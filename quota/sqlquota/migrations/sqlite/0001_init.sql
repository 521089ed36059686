-- Parley quota ledger, version 1. Instants are INTEGER Unix nanoseconds:
-- exact on both dialects, so windows such as (now - Per, now] and hold
-- expiry compare exactly as the quota package specifies.

-- One row per (user, period, period start): a new period is a new row
-- starting at zero, so there is no reset job.
CREATE TABLE parley_quota_usage (
    user_id         TEXT   NOT NULL,
    period          TEXT   NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly')),
    period_start_ns INTEGER NOT NULL,
    used            INTEGER NOT NULL DEFAULT 0,
    held            INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, period, period_start_ns)
) STRICT;

-- Open holds. A row exists exactly while its hold is open: Settle, Release
-- and Sweep delete it, which is what makes each take effect at most once.
CREATE TABLE parley_quota_holds (
    id               TEXT   NOT NULL PRIMARY KEY,
    user_id          TEXT   NOT NULL,
    estimate         INTEGER NOT NULL CHECK (estimate >= 0),
    daily_start_ns   INTEGER NOT NULL,
    weekly_start_ns  INTEGER NOT NULL,
    monthly_start_ns INTEGER NOT NULL,
    expires_at_ns    INTEGER NOT NULL
) STRICT;
CREATE INDEX parley_quota_holds_expires ON parley_quota_holds (expires_at_ns);

-- Per-user overrides; NULL is unset (the policy default applies).
CREATE TABLE parley_quota_limits (
    user_id TEXT   NOT NULL PRIMARY KEY,
    daily   INTEGER CHECK (daily >= -1),
    weekly  INTEGER CHECK (weekly >= -1),
    monthly INTEGER CHECK (monthly >= -1)
) STRICT;

-- Spend per model call, summed over a trailing window by Allow.
CREATE TABLE parley_quota_spend (
    connection TEXT   NOT NULL,
    principal  TEXT   NOT NULL,
    at_ns      INTEGER NOT NULL,
    tokens     INTEGER NOT NULL CHECK (tokens >= 0)
) STRICT;
CREATE INDEX parley_quota_spend_key_at ON parley_quota_spend (connection, principal, at_ns);

-- The longest window Allow was asked about per key: how long records stay.
CREATE TABLE parley_quota_spend_windows (
    connection TEXT   NOT NULL,
    principal  TEXT   NOT NULL,
    window_ns  INTEGER NOT NULL,
    PRIMARY KEY (connection, principal)
) STRICT;

-- Rate limiting: Take locks the key's row, then counts and logs calls.
CREATE TABLE parley_quota_rate_keys (
    key TEXT NOT NULL PRIMARY KEY
) STRICT;
CREATE TABLE parley_quota_rate_calls (
    key   TEXT   NOT NULL,
    at_ns INTEGER NOT NULL
) STRICT;
CREATE INDEX parley_quota_rate_calls_key_at ON parley_quota_rate_calls (key, at_ns);
