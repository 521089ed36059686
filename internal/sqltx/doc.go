// Package sqltx holds the transaction plumbing Parley's SQL components
// share: an in-process write lock and BEGIN IMMEDIATE transactions on
// SQLite, one write transaction for both dialects, a statement whose row
// count is read before its connection goes back to the pool, and the
// driver's dialect and error codes read without importing a driver.
package sqltx
