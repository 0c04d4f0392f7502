//! What `levh doctor` reports of the store: schema, journal mode, FTS5 and whether its
//! index is in step, counts, vectors per model, and stored times out of range.

use levh_core::StoreHealth;

use crate::{SqliteStore, SqliteStoreError, migrations};

pub(crate) fn health(store: &SqliteStore) -> Result<StoreHealth, SqliteStoreError> {
    let conn = store.lock();
    let schema_version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let journal_mode: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    let fts5 = conn
        .query_row(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'levh'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .is_ok();
    // FTS5's own check compares the index against the content table.
    let fts_in_step = conn
        .execute(
            "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')",
            [],
        )
        .is_ok();
    let count = |sql: &str| {
        conn.query_row(sql, [], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    let memories = count("SELECT count(*) FROM memories WHERE forgotten_at IS NULL")?;
    let forgotten = count("SELECT count(*) FROM memories WHERE forgotten_at IS NOT NULL")?;
    let events = count("SELECT count(*) FROM events")?;
    let outside = format!(
        "NOT BETWEEN {} AND {}",
        levh_core::EARLIEST_MICROS,
        levh_core::LATEST_MICROS
    );
    let times_out_of_range = count(&format!(
        "SELECT (SELECT count(*) FROM memories WHERE valid_from {outside} OR valid_to {outside}
                  OR created_at {outside} OR last_recalled_at {outside})
              + (SELECT count(*) FROM held_candidates WHERE valid_from {outside} OR valid_to {outside})"
    ))?;
    let mut statement = conn
        .prepare("SELECT model, count(*) FROM memory_embeddings GROUP BY model ORDER BY model")?;
    let embeddings = statement
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(StoreHealth {
        path: store.path.clone(),
        schema_version,
        latest_schema_version: migrations::latest_version(),
        journal_mode,
        fts5,
        fts_in_step,
        memories,
        forgotten,
        events,
        embeddings,
        times_out_of_range,
    })
}
