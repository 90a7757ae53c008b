//! The tables, created and upgraded by numbered migrations applied at start-up, one transaction
//! for all of them, serialised between nodes starting together.

use busbar_store::StoreError;
use postgres::Client;

use crate::url::database_error;

/// Migration `n` (1-based) is `MIGRATIONS[n - 1]`; applied versions are rows of `busbar_schema`.
const MIGRATIONS: &[&str] = &[
    // 1: messages with their immutable part and state, metadata, the sequence high-water marks,
    // the log position of the last commit, and the lease's fencing epoch.
    "CREATE TABLE busbar_messages (
        entity bigint NOT NULL,
        sequence bigint NOT NULL,
        message bytea NOT NULL,
        state bytea NOT NULL,
        PRIMARY KEY (entity, sequence)
    );
    CREATE TABLE busbar_meta (
        entity bigint NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (entity, key)
    );
    CREATE TABLE busbar_high_water (
        entity bigint PRIMARY KEY,
        sequence bigint NOT NULL
    );
    CREATE TABLE busbar_position (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        lsn bigint NOT NULL
    );
    INSERT INTO busbar_position (lsn) VALUES (0);
    CREATE TABLE busbar_lease (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        epoch bigint NOT NULL,
        holder text NOT NULL,
        acquired_at timestamptz NOT NULL
    );
    INSERT INTO busbar_lease (epoch, holder, acquired_at) VALUES (0, '', now());",
];

/// Brings the schema (in the connection's `search_path`) up to this build's version.
pub(crate) fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let failed = |error: postgres::Error| database_error("migrate", &error);
    let mut transaction = client.transaction().map_err(failed)?;
    // Two nodes starting at once must not both create the tables.
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock(hashtext('busbar-migrate:' || current_schema()))",
            &[],
        )
        .map_err(failed)?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS busbar_schema (
                version integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .map_err(failed)?;
    let current: i32 = transaction
        .query_one("SELECT coalesce(max(version), 0) FROM busbar_schema", &[])
        .map_err(failed)?
        .get(0);
    let known = MIGRATIONS.len();
    let applied = usize::try_from(current).unwrap_or(usize::MAX);
    if applied > known {
        return Err(StoreError::Database {
            operation: "migrate",
            reason: format!(
                "the database's schema is at version {current}, newer than this build's {known}"
            ),
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(applied) {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        transaction.batch_execute(migration).map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO busbar_schema (version) VALUES ($1)",
                &[&version],
            )
            .map_err(failed)?;
        tracing::info!(version, "applied a schema migration");
    }
    transaction.commit().map_err(failed)
}
