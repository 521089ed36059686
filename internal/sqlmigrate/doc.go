// Package sqlmigrate applies the embedded, versioned migrations of Parley's
// SQL components (store/sqlstore, quota/sqlquota). The components share one
// version table, parley_schema_migrations, keyed by component, and one
// advisory lock per schema on PostgreSQL, so migrating several at once,
// from many processes, is safe.
package sqlmigrate
