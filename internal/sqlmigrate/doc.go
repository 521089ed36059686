// Package sqlmigrate migrates the schemas of Parley's SQL components
// (store/sqlstore, quota/sqlquota): each declares a Component, its embedded
// migrations and its key in the version table, and its exported Migrate and
// SchemaVersion call Component.Migrate and Component.Version. The
// components share one version table, parley_schema_migrations, keyed by
// component, and one advisory lock per schema on PostgreSQL, so migrating
// several at once, from many processes, is safe.
package sqlmigrate
