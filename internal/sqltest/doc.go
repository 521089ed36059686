// Package sqltest opens throwaway databases for the tests of Parley's SQL
// implementations (store/sqlstore, a SQL quota ledger): a SQLite file in
// t.TempDir, an in-memory SQLite database, and a fresh PostgreSQL schema per
// test in the database named by PARLEY_TEST_POSTGRES_DSN.
//
// Every PostgreSQL test gets a schema of its own, named parley_test_ and
// random hex, selected through the connection's search_path and dropped
// (CASCADE) when the test ends, so runs and parallel tests never collide.
// Without PARLEY_TEST_POSTGRES_DSN the PostgreSQL helpers skip the test, so
// `go test ./...` passes on a machine with no database server.
package sqltest
