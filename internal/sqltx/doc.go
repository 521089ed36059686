// Package sqltx holds the transaction plumbing Parley's SQL components share
// on SQLite: an in-process write lock and BEGIN IMMEDIATE transactions.
package sqltx
