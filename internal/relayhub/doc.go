// Package relayhub holds the subscriptions of a store.Relay in one
// process, shared by store/memstore and store/sqlstore: which channels
// take which topic's payloads, and what happens to a reader that falls
// behind.
package relayhub
