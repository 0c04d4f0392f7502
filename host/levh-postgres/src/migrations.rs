//! Numbered migrations (`migrations/NNNN_*.sql`), applied at open in one transaction
//! under a transaction-scoped advisory lock, with every applied version recorded in
//! `levh_schema_migrations`.
//!
//! Several `levh serve` processes often start at once against one database: the lock makes
//! the others wait, then read the version again and find the work done. A database
//! migrated by a newer levh is refused before anything is changed.

use postgres::Client;

use crate::connection::Db;

use crate::PostgresStoreError;

/// Every migration, in order. Never edit a landed one; append.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_memories.sql"),
    include_str!("../migrations/0002_sync_entities_and_the_rest.sql"),
    include_str!("../migrations/0003_attachment_files.sql"),
    include_str!("../migrations/0004_full_text_index_without_pending_list.sql"),
];

/// The advisory lock key every levh process takes to migrate ("levh" in ASCII, then
/// "schema"): any 64-bit number no other application on the database is likely to use.
const MIGRATION_LOCK: i64 = 0x6c65_7668_5343_4845;

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// The applied version: the newest recorded, 0 for a database levh never touched.
pub(crate) fn current_version(client: &mut impl Db) -> Result<i64, PostgresStoreError> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('levh_schema_migrations') IS NOT NULL",
            &[],
        )?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one(
            "SELECT coalesce(max(version), 0)::bigint FROM levh_schema_migrations",
            &[],
        )?
        .get(0))
}

/// Brings the schema up to date, or refuses a schema newer than this build.
pub(crate) fn apply(client: &mut Client) -> Result<(), PostgresStoreError> {
    let known = latest_version();
    let found = current_version(client)?;
    if found > known {
        return Err(PostgresStoreError::TooNew { found, known });
    }
    if found == known {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS levh_schema_migrations (
             version    bigint PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         )",
    )?;
    // Read again under the lock: another process may have migrated while we waited.
    let found: i64 = tx
        .query_one(
            "SELECT coalesce(max(version), 0)::bigint FROM levh_schema_migrations",
            &[],
        )?
        .get(0);
    if found > known {
        return Err(PostgresStoreError::TooNew { found, known });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as i64 + 1;
        tx.batch_execute(sql)
            .map_err(|cause| PostgresStoreError::Migration { version, cause })?;
        tx.execute(
            "INSERT INTO levh_schema_migrations (version) VALUES ($1)",
            &[&version],
        )?;
        tracing::info!(version, "migrated the PostgreSQL schema");
    }
    tx.commit()?;
    Ok(())
}
