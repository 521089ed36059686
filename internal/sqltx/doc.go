// Package sqltx holds the transaction plumbing Parley's SQL components share
// on SQLite: an in-process write lock, BEGIN IMMEDIATE transactions, and
// the retry for the first setup of a file others are creating too.
package sqltx
