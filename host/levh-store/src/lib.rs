//! levh-store: the SQLite implementation of levh-core's [`Store`] and [`VectorIndex`].
//!
//! One file (`$LEVH_HOME/levh.db`) in WAL mode holds memories, their FTS5 index (kept in
//! step by triggers), their vectors, sessions and the append-only event log. Many
//! processes may open it at once: every write is a `BEGIN IMMEDIATE` transaction and the
//! busy timeout makes writers queue instead of failing, so no write is lost and
//! "database is locked" never reaches the user under normal contention.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod ann;
mod entities;
mod error;
mod events;
mod filter;
mod held;
mod lease;
mod lexicon;
mod migrations;
mod places;
mod purge;
mod readers;
mod rows;
mod snapshot;
mod standings;
mod sync;
#[cfg(test)]
mod test_records;
mod tokens;
mod vectors;
mod writes;

pub use ann::{AnnConfig, AnnIndex, AnnStats};
pub use error::SqliteStoreError;
pub use lease::{ExclusiveLease, LeaseError, acquire_exclusive};
pub use levh_core::LoggedEvent;
pub use levh_core::{IssuedToken, TokenInfo};
pub use migrations::latest_version as latest_schema_version;
pub use snapshot::{
    ExclusiveHold, HoldError, SnapshotSummary, check_restorable, hold_exclusively, snapshot,
};
pub use tokens::secret_hash;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use levh_core::sync::{SyncReport, SyncedItem};
use levh_core::{
    Actor, BatchWrite, ComparedText, Embedding, EventKind, HeldCandidate, HeldClose, HeldId,
    HeldStatus, Interference, Memory, MemoryFilter, MemoryId, MemoryState, NewMemoryRecord, Page,
    PlacedText, PurgeReport, RankingRow, StaleEmbedding, StandingGroup, Store, StoreError,
    StoreHealth, StoredText, SyncedPage, TextPlace, Timestamp, VectorIndex, Workspace,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params, params_from_iter};
use serde_json::json;

use crate::filter::where_clause;
use crate::rows::{MEMORY_COLUMNS, MEMORY_FROM, micros, read_memory};

/// How long a writer waits for another process's write to finish before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The SQLite store: one writer connection behind a mutex, and a pool of read
/// connections (see `readers.rs`) so reads run beside writes and each other.
#[derive(Debug)]
pub struct SqliteStore {
    connection: Mutex<Connection>,
    readers: readers::ReadPool,
    standings: standings::Standings,
    lexicon: lexicon::Lexicon,
    busy_timeout: Duration,
    path: String,
    /// This process's open of the file, named to a restore that is refused (`lease.rs`).
    _lease: Option<lease::Lease>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file, turns on WAL, foreign keys and
    /// secure delete, and applies pending migrations.
    pub fn open(path: &Path) -> Result<Self, SqliteStoreError> {
        Self::open_with_timeout(path, DEFAULT_BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`] with a chosen busy timeout.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn open_with_timeout(
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<Self, SqliteStoreError> {
        // An existing file of zero bytes is not a store (a crashed copy, a `touch`): SQLite
        // would quietly start a new one in it. Say so, since memories may be expected there.
        if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            tracing::warn!(
                path = %path.display(),
                "the database file is empty (0 bytes): starting a new store in it"
            );
        }
        // Taken first: while a restore replaces the file, the store is not opened.
        let lease = lease::acquire(path, busy_timeout)?;
        let connection = Connection::open(path)?;
        let mut lock_file = path.as_os_str().to_owned();
        lock_file.push("-migrate-lock");
        let mut store = Self::setup(
            connection,
            path.display().to_string(),
            busy_timeout,
            Some(Path::new(&lock_file)),
        )?;
        store._lease = Some(lease);
        Ok(store)
    }

    /// A private in-memory store (tests).
    pub fn open_in_memory() -> Result<Self, SqliteStoreError> {
        let connection = Connection::open_in_memory()?;
        Self::setup(connection, ":memory:".into(), DEFAULT_BUSY_TIMEOUT, None)
    }

    /// `lock_file` is given for files (WAL and the migration lock make no sense in memory).
    fn setup(
        mut connection: Connection,
        path: String,
        busy_timeout: Duration,
        lock_file: Option<&Path>,
    ) -> Result<Self, SqliteStoreError> {
        connection.busy_timeout(busy_timeout)?;
        connection.pragma_update(None, "foreign_keys", true)?;
        // Every write path's statements stay prepared (rusqlite keeps 16 by default; a
        // capture alone uses more than that).
        connection.set_prepared_statement_cache_capacity(128);
        // 32 MiB of page cache (negative = KiB) instead of SQLite's 2 MiB default.
        connection.pragma_update(None, "cache_size", -32_768i64)?;
        // Keeps `PRAGMA optimize` (run on close) to a bounded sample of each index.
        connection.pragma_update(None, "analysis_limit", 400i64)?;
        // Deleted content is overwritten with zeros, so a purge leaves no copy in free pages.
        connection.pragma_update(None, "secure_delete", true)?;
        // A store of a newer schema is refused before anything about the file changes
        // (switching to WAL rewrites its header).
        migrations::check_version(&connection)?;
        if lock_file.is_some() {
            // Switching to WAL needs a moment of exclusive access; when many processes open
            // a new file at once, some find it busy even past the busy handler. The mode
            // persists in the file, so retrying until one succeeds is enough.
            let mut attempt = 0;
            loop {
                match connection.pragma_update_and_check(None, "journal_mode", "wal", |row| {
                    row.get::<_, String>(0)
                }) {
                    Ok(_) => break,
                    Err(e) if is_busy(&e) && attempt < 50 => {
                        attempt += 1;
                        std::thread::sleep(Duration::from_millis(20 * attempt));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            // NORMAL is durable against application crashes in WAL mode and much faster.
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            // Copy the log into the file every ~40 MB of it instead of SQLite's ~4 MB: a
            // bulk transaction re-writes thousands of index pages, and checkpointing
            // (with its fsync) after each one was a sixth of ingest at 100k; captures one
            // by one stop paying a checkpoint every few hundred writes (p99 13 → 1.2 ms).
            connection.pragma_update(None, "wal_autocheckpoint", 10_000i64)?;
            // A bulk transaction at 1M memories writes ~300 MB of log; once checkpointed
            // the file is cut back to 64 MiB instead of keeping that size on disk.
            connection.pragma_update(None, "journal_size_limit", 64i64 << 20)?;
            // Reads through a memory map skip a system call per page: vector scans and
            // candidate lookups touch many pages.
            connection.pragma_update(None, "mmap_size", 256i64 << 20)?;
        }
        migrations::apply(&mut connection, lock_file)?;
        Ok(Self {
            connection: Mutex::new(connection),
            readers: readers::ReadPool::default(),
            standings: standings::Standings::default(),
            lexicon: lexicon::Lexicon::default(),
            busy_timeout,
            path,
            _lease: None,
        })
    }

    /// One change to memory `id` and its `event`, in one transaction; `change` says
    /// whether the memory was there. A redaction then compacts the file: the old text must
    /// leave the index segments and the log, not only the rows.
    #[allow(clippy::too_many_arguments)]
    fn change_memory(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
        change: impl FnOnce(&Connection) -> Result<bool, SqliteStoreError>,
    ) -> Result<bool, SqliteStoreError> {
        let changed = self.write(|tx| {
            let changed = change(tx)?;
            if changed {
                log_event(tx, now, event, workspace, Some(id), actor, detail)?;
            }
            Ok(changed)
        })?;
        if changed && event == EventKind::Redact {
            purge::compact(&self.lock())?;
        }
        Ok(changed)
    }

    /// The database file, when the store is one.
    fn file_path(&self) -> Option<&Path> {
        (self.path != ":memory:").then(|| Path::new(&self.path))
    }

    /// Runs `f` in one write transaction and commits it if `f` succeeds. `BEGIN
    /// IMMEDIATE` takes the write lock up front, so concurrent writers wait on the busy
    /// timeout instead of failing when a read transaction would have to upgrade.
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, SqliteStoreError>,
    ) -> Result<T, SqliteStoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite mid-transaction (the
        // transaction rolls back on drop), so a poisoned lock is still safe to use.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub(crate) fn log_event(
    tx: &Connection,
    at: Timestamp,
    kind: EventKind,
    workspace: &Workspace,
    memory_id: Option<MemoryId>,
    actor: &Actor,
    detail: serde_json::Value,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO events (at, kind, workspace, memory_id, surface, client, role, detail, principal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
            micros(at),
            kind.as_str(),
            workspace.as_str(),
            memory_id.map(|id| id.to_string()),
            actor.surface.as_str(),
            actor.client,
            actor.role.as_str(),
        detail.to_string(),
        actor.principal,
    ])?;
    Ok(())
}

/// Reads one live memory inside a transaction.
pub(crate) fn get_live(
    conn: &Connection,
    workspace: &Workspace,
    id: MemoryId,
) -> Result<Option<Memory>, SqliteStoreError> {
    Ok(conn.prepare_cached(&format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE m.workspace = ?1 AND m.id = ?2 AND m.forgotten_at IS NULL"
    ))?
    .query_row(params![workspace.as_str(), id.to_string()], read_memory)
    .optional()?)
}

pub(crate) fn write_state(
    conn: &Connection,
    id: MemoryId,
    state: &MemoryState,
    now: Timestamp,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE memories SET importance = ?2, pinned = ?3, stability_hours = ?4,
             last_recalled_at = ?5, recall_count = ?6, updated_at = ?7
         WHERE id = ?1",
    )?
    .execute(params![
        id.to_string(),
        state.importance,
        state.pinned,
        state.stability_hours,
        state.last_recalled_at.map(micros),
        state.recall_count,
        micros(now),
    ])?;
    Ok(())
}

/// `+m.workspace = ? AND m.id IN (?, …)` for `n` ids. The `+` keeps the workspace out of
/// index choice so that the unique id drives the lookup: without statistics SQLite rates
/// `workspace = ?` as more selective than a list of ids and walks the whole workspace
/// instead — 120–180 ms at 100k memories for any number of ids, which was most of a
/// recall, a fading list and the gate's candidate reads.
fn by_ids(n: usize) -> String {
    let marks = vec!["?"; n].join(", ");
    format!("+m.workspace = ? AND m.id IN ({marks})")
}

/// Runs `sql(n)` — whose parameters are `leading`, the workspace, then `n` ids — over
/// `ids` in chunks far below SQLite's bound-parameter limit, collecting `read` of every
/// row.
fn by_id_chunks<T>(
    conn: &Connection,
    sql: fn(usize) -> String,
    leading: &[&str],
    workspace: &Workspace,
    ids: &[MemoryId],
    mut read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, SqliteStoreError> {
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut statement = conn.prepare_cached(&sql(chunk.len()))?;
        let params = leading
            .iter()
            .map(|value| (*value).to_owned())
            .chain([workspace.as_str().to_owned()])
            .chain(chunk.iter().map(ToString::to_string));
        let rows = statement.query_map(params_from_iter(params), &mut read)?;
        for row in rows {
            found.push(row?);
        }
    }
    Ok(found)
}

/// Whole memories by id: the workspace, then `n` ids.
fn get_many_sql(n: usize) -> String {
    format!("SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {}", by_ids(n))
}

/// What the gate compares, by id: the columns up to `content` only (a row's tail —
/// metadata, reasons — is often on overflow pages a comparison does not need). The
/// workspace, then `n` ids.
fn compared_texts_sql(n: usize) -> String {
    format!(
        "SELECT m.id, m.pinned, m.content FROM memories m WHERE {}",
        by_ids(n)
    )
}

/// What ranking reads, by id (no join, no JSON): the workspace, then `n` ids.
fn ranking_rows_sql(n: usize) -> String {
    format!(
        "SELECT m.id, m.importance, m.pinned, m.stability_hours, m.last_recalled_at,
                m.recall_count, m.created_at, m.valid_from
         FROM memories m WHERE {}",
        by_ids(n)
    )
}

/// Stored vectors of one model by memory id: the model, the workspace, then `n` ids.
fn embeddings_sql(n: usize) -> String {
    format!(
        "SELECT m.id, e.vector FROM memory_embeddings e JOIN memories m ON m.seq = e.memory_seq
         WHERE e.model = ? AND {}",
        by_ids(n)
    )
}

/// How many more full-text matches than asked for are ranked before the filter: enough
/// that an unfiltered or broadly filtered recall is answered by the first query.
const LEXICAL_OVERFETCH: usize = 4;

/// The best `limit` full-text matches of `fts` that pass `filter`, best first, among the
/// best `ranked` matches overall (`None`: among all of them).
fn lexical_query(
    conn: &Connection,
    filter: &MemoryFilter,
    fts: &str,
    ranked: Option<usize>,
    limit: usize,
) -> Result<Vec<(MemoryId, f64)>, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let best = match ranked {
        Some(ranked) => format!("ORDER BY score, seq LIMIT {}", sql_limit(ranked)),
        None => String::new(),
    };
    // The full-text match runs once, materialised, and its hits are then filtered by
    // rowid lookups. Left to itself the planner may instead walk the workspace and probe
    // the FTS index once per memory, which is orders of magnitude slower.
    let sql = format!(
        "WITH hits AS MATERIALIZED (
             SELECT rowid AS seq, bm25(memories_fts) AS score FROM memories_fts
             WHERE memories_fts MATCH ? {best}
         )
         SELECT m.id, hits.score FROM hits CROSS JOIN memories m ON m.seq = hits.seq
         WHERE {clause} ORDER BY hits.score, hits.seq LIMIT {limit}",
        limit = sql_limit(limit)
    );
    let params = std::iter::once(rusqlite::types::Value::from(fts.to_owned())).chain(values);
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, f64>(1)?))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (id, bm25) = row?;
        // SQLite's bm25() is lower-is-better; the trait promises higher-is-better.
        found.push((rows::parse_id(&id)?, -bm25));
    }
    Ok(found)
}

/// The words of a full-text query ([`text::query_terms`]): ORed, never ANDed, so a
/// question need not repeat every word of the memory it asks for. Words of four letters
/// or more also match as prefixes — after the tokenizer's stemming, so "quarter" meets
/// "quarterly" and "bake" meets "bakery" — while the exact word is asked for too, so an
/// exact match still outscores a longer word that merely starts the same. Empty when
/// the text has no words.
///
/// [`text::query_terms`]: levh_core::text::query_terms
fn query_words(text: &str) -> Vec<lexicon::QueryWord> {
    let mut terms = levh_core::text::query_terms(text);
    // A bound on terms keeps a pasted essay from becoming a thousand-way OR.
    terms.truncate(64);
    terms
        .into_iter()
        .map(|text| lexicon::QueryWord {
            prefix: text.chars().count() >= 4,
            text,
        })
        .collect()
}

/// The FTS5 query of [`query_words`]: each word a quoted string, so nothing a user types
/// is read as FTS syntax (`AND`, `NEAR(`, `col:`, `*`, `"` are all literal); its prefix
/// form first, then its exact form (the in-memory ranking follows the same order).
fn fts_query(words: &[lexicon::QueryWord]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    let mut parts = Vec::with_capacity(words.len() * 2);
    for word in words {
        let quoted = format!("\"{}\"", word.text.replace('"', "\"\""));
        if word.prefix {
            parts.push(format!("{quoted} *"));
        }
        parts.push(quoted);
    }
    Some(parts.join(" OR "))
}

/// A count for a `LIMIT` or `OFFSET`, written into the SQL instead of bound: SQLite
/// prepares a statement again every time a `LIMIT` parameter is bound (its value can
/// change the plan), which was a sixth of the gate's lookup per item and part of every
/// recall. Distinct counts make distinct cached statements; callers use a few.
fn sql_limit(count: usize) -> i64 {
    count.min(i64::MAX as usize) as i64
}

/// The gate's lookup of memories sharing near-duplicate keys with a text, most shared
/// first: its SQL and parameters.
fn near_duplicates_query(
    filter: &MemoryFilter,
    keys: &[i64],
    limit: usize,
) -> (String, Vec<rusqlite::types::Value>) {
    let (clause, values) = where_clause(filter);
    // The keys are bound once (?1..?n) and read in both tables of keys (the large
    // index and the recent keys not yet merged into it; each pair is in one of them).
    // The limit is written into the SQL ([`sql_limit`]).
    let marks = (1..=keys.len())
        .map(|n| format!("?{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    // CROSS JOIN: start from the (indexed) keys, never from the workspace.
    let sql = format!(
        "SELECT m.id FROM (
             SELECT memory_seq FROM near_duplicate_keys WHERE key IN ({marks})
             UNION ALL
             SELECT memory_seq FROM near_duplicate_keys_recent WHERE key IN ({marks})
         ) k CROSS JOIN memories m ON m.seq = k.memory_seq
         WHERE {clause}
         GROUP BY m.seq ORDER BY count(*) DESC, m.seq DESC LIMIT {limit}",
        limit = sql_limit(limit)
    );
    let params = keys
        .iter()
        .map(|key| rusqlite::types::Value::from(*key))
        .chain(values)
        .collect();
    (sql, params)
}

fn get_many(
    store: &SqliteStore,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<Memory>, SqliteStoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    by_id_chunks(
        &store.read(),
        get_many_sql,
        &[],
        workspace,
        ids,
        read_memory,
    )
}

fn list(
    store: &SqliteStore,
    filter: &MemoryFilter,
    page: Page,
) -> Result<Vec<Memory>, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let conn = store.read();
    // A cursor whose memory was purged meanwhile would match nothing, and a page-by-page
    // read would end there as if complete: say so instead.
    if let Some(id) = filter.listed_after {
        let stored = conn
            .prepare_cached("SELECT count(*) > 0 FROM memories WHERE id = ?1")
            .and_then(|mut statement| {
                statement.query_row([id.to_string()], |row| row.get::<_, bool>(0))
            })?;
        if !stored {
            return Err(SqliteStoreError::ListCursorGone(id));
        }
    }
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {clause} ORDER BY m.created_at DESC, m.seq DESC LIMIT {} OFFSET {}",
        sql_limit(page.limit),
        sql_limit(page.offset),
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(values), read_memory)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

fn count(store: &SqliteStore, filter: &MemoryFilter) -> Result<u64, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let conn = store.read();
    Ok(conn
        .query_row(
            &format!("SELECT count(*) FROM memories m WHERE {clause}"),
            params_from_iter(values),
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as u64)?)
}

fn lexical_candidates(
    store: &SqliteStore,
    filter: &MemoryFilter,
    query: &str,
    limit: usize,
) -> Result<Vec<(MemoryId, f64)>, SqliteStoreError> {
    let words = query_words(query);
    let Some(fts) = fts_query(&words) else {
        return Ok(Vec::new());
    };
    let conn = store.read();
    let fetch = limit.saturating_mul(LEXICAL_OVERFETCH);
    // The in-memory ranking (`lexicon.rs`) when it is built; FTS5's, scoring alike,
    // while it is not. The former checks its best matches against the filter a chunk
    // at a time, starting with a quarter more than asked for: most matches pass a
    // recall's filter, and a further chunk costs no ranking again.
    let first_chunk = limit + limit / 4;
    if let Some(found) =
        store
            .lexicon
            .candidates(&conn, store.file_path(), filter, &words, limit, first_chunk)?
    {
        return Ok(found);
    }
    // First the best `limit × LEXICAL_OVERFETCH` matches, ranked inside FTS5 with no
    // join, then checked against the filter: when at least `limit` of them pass, they
    // are exactly the best `limit` that pass (anything ranked lower cannot beat them).
    // Joining every match to its row first costs a row lookup per match, and a
    // common word matches tens of thousands of memories at 100k.
    let found = lexical_query(&conn, filter, &fts, Some(fetch), limit)?;
    if found.len() >= limit {
        return Ok(found);
    }
    // Fewer passed: the filter is selective (or there are few matches, which makes
    // this cheap), so every match is checked.
    lexical_query(&conn, filter, &fts, None, limit)
}

fn health(store: &SqliteStore) -> Result<StoreHealth, SqliteStoreError> {
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

fn near_duplicates(
    store: &SqliteStore,
    filter: &MemoryFilter,
    keys: &[i64],
    limit: usize,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, params) = near_duplicates_query(filter, keys, limit);
    let conn = store.read();
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| row.get::<_, String>(0))?;
    let mut found = Vec::new();
    for row in rows {
        found.push(rows::parse_id(&row?)?);
    }
    Ok(found)
}

fn store_held_memory(
    store: &SqliteStore,
    workspace: &Workspace,
    held: HeldId,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    supersede: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<HeldClose, SqliteStoreError> {
    // One immediate transaction: the status is read and changed under the write lock,
    // so a discard in another process cannot slip between the check and the store.
    store.write(|tx| {
        if let Some(decided) = held::still_held(tx, workspace, held)? {
            return Ok(decided);
        }
        let memory_id =
            held::store_memory(tx, held, record, neighbours, interfere, supersede, actor)?;
        held::close(
            tx,
            workspace,
            held,
            HeldStatus::Admitted,
            Some(memory_id),
            now,
            actor,
        )
    })
}

fn get_forgotten(
    store: &SqliteStore,
    workspace: &Workspace,
    id: MemoryId,
) -> Result<Option<(Memory, Timestamp)>, SqliteStoreError> {
    let conn = store.read();
    Ok(conn
        .query_row(
            &format!(
                "SELECT {MEMORY_COLUMNS}, m.forgotten_at {MEMORY_FROM}
             WHERE m.workspace = ?1 AND m.id = ?2 AND m.forgotten_at IS NOT NULL"
            ),
            params![workspace.as_str(), id.to_string()],
            |row| {
                let forgotten: i64 = row.get(rows::MEMORY_COLUMN_COUNT)?;
                Ok((read_memory(row)?, rows::from_micros(forgotten)))
            },
        )
        .optional()?)
}

fn rewrite_placed_text(
    store: &SqliteStore,
    workspace: &Workspace,
    place: &TextPlace,
    text: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    let changed = store.write(|tx| places::rewrite(tx, workspace, place, text, now, actor))?;
    if changed {
        // The old text must leave the log and the index segments too.
        purge::compact(&store.lock())?;
    }
    Ok(changed)
}

fn contents(
    store: &SqliteStore,
    workspace: &Workspace,
) -> Result<Vec<StoredText>, SqliteStoreError> {
    let conn = store.lock();
    let mut statement = conn.prepare(
        "SELECT id, content, project, source, metadata FROM memories
             WHERE workspace = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map([workspace.as_str()], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, String>(4)?,
        ))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (id, content, project, source, metadata) = row?;
        found.push(StoredText {
            id: rows::parse_id(&id)?,
            content,
            project,
            source,
            metadata: serde_json::from_str(&metadata)?,
        });
    }
    Ok(found)
}

fn purge(
    store: &SqliteStore,
    workspace: &Workspace,
    id: MemoryId,
    now: Timestamp,
    actor: &Actor,
) -> Result<Option<PurgeReport>, SqliteStoreError> {
    let mut conn = store.lock();
    purge::purge(&mut conn, store.file_path(), workspace, id, now, actor)
}

fn stale_embeddings(
    store: &SqliteStore,
    model: &str,
    limit: usize,
) -> Result<Vec<StaleEmbedding>, SqliteStoreError> {
    let conn = store.lock();
    let mut statement = conn.prepare_cached(
        "SELECT m.id, m.content, m.content_hash FROM memories m
             LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
             WHERE e.model IS NULL OR e.model <> ?1
             ORDER BY m.seq LIMIT ?2",
    )?;
    let rows = statement.query_map(params![model, limit as i64], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
        ))
    })?;
    let mut stale = Vec::new();
    for row in rows {
        let (id, content, content_hash) = row?;
        stale.push(StaleEmbedding {
            id: rows::parse_id(&id)?,
            content,
            content_hash,
        });
    }
    Ok(stale)
}

fn count_stale_embeddings(store: &SqliteStore, model: &str) -> Result<u64, SqliteStoreError> {
    let conn = store.lock();
    Ok(conn
        .query_row(
            "SELECT count(*) FROM memories m
         LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
         WHERE e.model IS NULL OR e.model <> ?1",
            [model],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as u64)?)
}

/// Each method runs its SQL through the crate's functions; their error becomes a
/// [`StoreError`] here, once.
impl Store for SqliteStore {
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn insert(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Interference>, StoreError> {
        Ok(self.write(|tx| {
            writes::insert_memory(tx, record, None, actor)?;
            writes::apply_interference(tx, record, neighbours, interfere, actor)
        })?)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(writes = writes.len()), err(level = "debug"))]
    fn write_batch(
        &self,
        writes: &[BatchWrite],
        synced: Option<&SyncedPage>,
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Vec<Interference>>, StoreError> {
        Ok(self.write(|tx| {
            let mut applied = Vec::with_capacity(writes.len());
            let mut keys: Vec<(i64, &[i64])> = Vec::new();
            for write in writes {
                applied.push(match write {
                    BatchWrite::Memory { record, neighbours } => {
                        let seq = writes::insert_memory_without_keys(tx, record, None, actor)?;
                        keys.push((seq, &record.near_duplicate_keys));
                        writes::apply_interference(tx, record, neighbours, interfere, actor)?
                    }
                    BatchWrite::Held(held) => {
                        held::insert(tx, held, actor)?;
                        Vec::new()
                    }
                });
            }
            writes::insert_keys(tx, &keys)?;
            if let Some(page) = synced {
                for (source_id, item) in &page.items {
                    sync::record_item(
                        tx,
                        &page.workspace,
                        &page.connector,
                        source_id,
                        item,
                        page.now,
                    )?;
                }
                if let Some((key, cursor)) = &page.cursor {
                    sync::save_cursor(tx, &page.workspace, key, cursor.as_deref(), page.now)?;
                }
            }
            Ok(applied)
        })?)
    }

    fn get(&self, workspace: &Workspace, id: MemoryId) -> Result<Option<Memory>, StoreError> {
        Ok(get_live(&self.read(), workspace, id)?)
    }

    fn get_many(&self, workspace: &Workspace, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        Ok(get_many(self, workspace, ids)?)
    }

    fn ranking_rows(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<RankingRow>, StoreError> {
        Ok(by_id_chunks(
            &self.read(),
            ranking_rows_sql,
            &[],
            workspace,
            ids,
            rows::read_ranking_row,
        )?)
    }

    fn compared_texts(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, StoreError> {
        Ok(by_id_chunks(
            &self.read(),
            compared_texts_sql,
            &[],
            workspace,
            ids,
            |row| {
                Ok(ComparedText {
                    id: rows::id(row, 0)?,
                    pinned: row.get(1)?,
                    content: row.get(2)?,
                })
            },
        )?)
    }

    fn list(&self, filter: &MemoryFilter, page: Page) -> Result<Vec<Memory>, StoreError> {
        Ok(list(self, filter, page)?)
    }

    fn count(&self, filter: &MemoryFilter) -> Result<u64, StoreError> {
        Ok(count(self, filter)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn lexical_candidates(
        &self,
        filter: &MemoryFilter,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(MemoryId, f64)>, StoreError> {
        Ok(lexical_candidates(self, filter, query, limit)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn embeddings(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        model: &str,
    ) -> Result<Vec<(MemoryId, Vec<f32>)>, StoreError> {
        Ok(by_id_chunks(
            &self.read(),
            embeddings_sql,
            &[model],
            workspace,
            ids,
            |row| {
                let blob = row.get_ref(1)?.as_blob()?;
                Ok((rows::id(row, 0)?, vectors::decode(blob)))
            },
        )?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn update_states(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        event: EventKind,
        actor: &Actor,
        now: Timestamp,
        update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(self.write(|tx| {
            let mut updated = Vec::new();
            for &id in ids {
                let Some(mut memory) = get_live(tx, workspace, id)? else {
                    continue;
                };
                let Some(state) = update(&memory) else {
                    continue;
                };
                if state == memory.state {
                    continue;
                }
                write_state(tx, id, &state, now)?;
                let detail = json!({
                    "stability_hours": state.stability_hours,
                    "recall_count": state.recall_count,
                    "pinned": state.pinned,
                });
                log_event(tx, now, event, workspace, Some(id), actor, detail)?;
                memory.state = state;
                updated.push(memory);
            }
            Ok(updated)
        })?)
    }

    fn forget(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.write(|tx| {
            let changed = tx.execute(
                "UPDATE memories SET forgotten_at = ?3, updated_at = ?3
                     WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
                params![workspace.as_str(), id.to_string(), micros(now)],
            )?;
            if changed == 1 {
                log_event(
                    tx,
                    now,
                    EventKind::Forget,
                    workspace,
                    Some(id),
                    actor,
                    json!({}),
                )?;
            }
            Ok(changed == 1)
        })?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn standings(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, StoreError> {
        Ok(self
            .standings
            .visit(&self.read(), workspace, project, now, visit)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn health(&self) -> Result<StoreHealth, StoreError> {
        Ok(health(self)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn near_duplicates(
        &self,
        filter: &MemoryFilter,
        keys: &[i64],
        limit: usize,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(near_duplicates(self, filter, keys, limit)?)
    }

    fn insert_held(&self, held: &HeldCandidate, actor: &Actor) -> Result<(), StoreError> {
        Ok(self.write(|tx| held::insert(tx, held, actor))?)
    }

    fn get_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::get(&self.read(), workspace, id)?)
    }

    fn waiting_held(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        content_hash: &str,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::waiting(
            &self.read(),
            workspace,
            project,
            content_hash,
        )?)
    }

    fn list_held(
        &self,
        workspace: &Workspace,
        status: Option<HeldStatus>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<HeldCandidate>, StoreError> {
        Ok(self.write(|tx| {
            held::expire(tx, workspace, now, actor)?;
            held::list(tx, workspace, status)
        })?)
    }

    fn expire_held(
        &self,
        workspace: &Workspace,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.write(|tx| held::expire(tx, workspace, now, actor))?)
    }

    fn store_held_memory(
        &self,
        workspace: &Workspace,
        held: HeldId,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        supersede: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(store_held_memory(
            self, workspace, held, record, neighbours, interfere, supersede, now, actor,
        )?)
    }

    fn admit_held_update(
        &self,
        workspace: &Workspace,
        held: HeldId,
        target: MemoryId,
        content: &str,
        embedding: Option<&Embedding>,
        near_duplicate_keys: &[i64],
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(self.write(|tx| {
            if let Some(decided) = held::still_held(tx, workspace, held)? {
                return Ok(decided);
            }
            let replaced = writes::replace_content(
                tx,
                workspace,
                target,
                content,
                embedding,
                near_duplicate_keys,
                now,
            )?;
            if !replaced {
                return Ok(HeldClose::Missing);
            }
            log_event(
                tx,
                now,
                EventKind::Update,
                workspace,
                Some(target),
                actor,
                detail,
            )?;
            held::close(
                tx,
                workspace,
                held,
                HeldStatus::Admitted,
                Some(target),
                now,
                actor,
            )
        })?)
    }

    fn close_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
        status: HeldStatus,
        memory_id: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(self.write(|tx| held::close(tx, workspace, id, status, memory_id, now, actor))?)
    }

    fn get_forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, StoreError> {
        Ok(get_forgotten(self, workspace, id)?)
    }

    fn id_in_use(&self, id: MemoryId) -> Result<bool, StoreError> {
        Ok(self
            .lock()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
                [id.to_string()],
                |row| row.get(0),
            )
            .map_err(SqliteStoreError::from)?)
    }

    fn placed_texts(&self, workspace: &Workspace) -> Result<Vec<PlacedText>, StoreError> {
        Ok(places::texts(&self.lock(), workspace)?)
    }

    fn rewrite_placed_text(
        &self,
        workspace: &Workspace,
        place: &TextPlace,
        text: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(rewrite_placed_text(
            self, workspace, place, text, now, actor,
        )?)
    }

    fn contents(&self, workspace: &Workspace) -> Result<Vec<StoredText>, StoreError> {
        Ok(contents(self, workspace)?)
    }

    fn replace_fields(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        project: Option<&str>,
        source: &str,
        metadata: &serde_json::Value,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(
            self.change_memory(workspace, id, event, detail, now, actor, |tx| {
                Ok(tx.execute(
                    "UPDATE memories SET project = ?3, source = ?4, metadata = ?5, updated_at = ?6
                     WHERE workspace = ?1 AND id = ?2",
                    params![
                        workspace.as_str(),
                        id.to_string(),
                        project,
                        source,
                        metadata.to_string(),
                        micros(now)
                    ],
                )? > 0)
            })?,
        )
    }

    fn replace_content(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        content: &str,
        embedding: Option<&Embedding>,
        near_duplicate_keys: &[i64],
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(
            self.change_memory(workspace, id, event, detail, now, actor, |tx| {
                writes::replace_content(
                    tx,
                    workspace,
                    id,
                    content,
                    embedding,
                    near_duplicate_keys,
                    now,
                )
            })?,
        )
    }

    fn sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sync::cursor(&self.lock(), workspace, connector)?)
    }

    fn save_sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
        cursor: Option<&str>,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(sync::save_cursor(
            &self.lock(),
            workspace,
            connector,
            cursor,
            now,
        )?)
    }

    fn synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
    ) -> Result<Option<SyncedItem>, StoreError> {
        Ok(sync::item(&self.lock(), workspace, connector, source_id)?)
    }

    fn record_synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
        item: &SyncedItem,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(sync::record_item(
            &self.lock(),
            workspace,
            connector,
            source_id,
            item,
            now,
        )?)
    }

    fn save_sync_run(
        &self,
        workspace: &Workspace,
        report: &SyncReport,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.write(|tx| sync::save_run(tx, workspace, report, actor))?)
    }

    fn sync_runs(
        &self,
        workspace: &Workspace,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>, StoreError> {
        Ok(sync::runs(&self.lock(), workspace, connector, limit)?)
    }

    fn sync_run(&self, workspace: &Workspace, id: &str) -> Result<Option<SyncReport>, StoreError> {
        Ok(sync::run(&self.lock(), workspace, id)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn purge(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<PurgeReport>, StoreError> {
        Ok(purge(self, workspace, id, now, actor)?)
    }

    fn stale_embeddings(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<StaleEmbedding>, StoreError> {
        Ok(stale_embeddings(self, model, limit)?)
    }

    fn count_stale_embeddings(&self, model: &str) -> Result<u64, StoreError> {
        Ok(count_stale_embeddings(self, model)?)
    }

    fn set_embeddings(&self, vectors: &[(StaleEmbedding, Embedding)]) -> Result<usize, StoreError> {
        Ok(self.write(|tx| {
            let mut written = 0;
            for (memory, embedding) in vectors {
                let seq: Option<i64> = tx
                    .query_row(
                        "SELECT seq FROM memories WHERE id = ?1 AND content_hash = ?2",
                        params![memory.id.to_string(), memory.content_hash],
                        |row| row.get(0),
                    )
                    .optional()?;
                if let Some(seq) = seq {
                    writes::write_embedding(tx, seq, embedding)?;
                    written += 1;
                }
            }
            Ok(written)
        })?)
    }

    fn start_session(&self, session: &levh_core::Session) -> Result<(), StoreError> {
        Ok(self.write(|tx| {
            tx.execute(
                "INSERT INTO sessions (id, workspace, project, client, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    session.id.as_str(),
                    session.workspace.as_str(),
                    session.project,
                    session.client,
                    micros(session.started_at),
                ],
            )?;
            Ok(())
        })?)
    }

    fn session_exists(
        &self,
        workspace: &Workspace,
        id: &levh_core::SessionId,
    ) -> Result<bool, StoreError> {
        Ok(self
            .read()
            .query_row(
                "SELECT 1 FROM sessions WHERE workspace = ?1 AND id = ?2",
                params![workspace.as_str(), id.as_str()],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(SqliteStoreError::from)?)
    }

    fn end_session(
        &self,
        workspace: &Workspace,
        id: &levh_core::SessionId,
        now: Timestamp,
    ) -> Result<Option<levh_core::Session>, StoreError> {
        Ok(self.write(|tx| {
            tx.execute(
                "UPDATE sessions SET ended_at = ?3
                 WHERE workspace = ?1 AND id = ?2 AND ended_at IS NULL",
                params![workspace.as_str(), id.as_str(), micros(now)],
            )?;
            Ok(tx
                .query_row(
                    "SELECT project, client, started_at, ended_at FROM sessions
                 WHERE workspace = ?1 AND id = ?2",
                    params![workspace.as_str(), id.as_str()],
                    |row| {
                        let at = |value: Option<i64>| value.map(rows::from_micros);
                        Ok(levh_core::Session {
                            id: id.clone(),
                            workspace: workspace.clone(),
                            project: row.get(0)?,
                            client: row.get(1)?,
                            started_at: at(row.get(2)?).unwrap_or(now),
                            ended_at: at(row.get(3)?),
                        })
                    },
                )
                .optional()?)
        })?)
    }
}

impl VectorIndex for SqliteStore {
    /// An exact scan of every matching vector: fine for tens of thousands of memories;
    /// [`AnnIndex`] puts an approximate index in front of it for large stores.
    fn nearest(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, StoreError> {
        Ok(exact_nearest(&self.read(), filter, model, query, limit)?)
    }
}
/// The exact top `limit` of every `model` vector matching `filter`.
pub(crate) fn exact_nearest(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    limit: usize,
) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
    let mut top = vectors::TopK::new(limit);
    exact_scan(conn, filter, model, query, None, &mut top)?;
    Ok(top.into_sorted())
}

/// Scores every `model` vector matching `filter` against `query` into `top`. With
/// `changed_after`, only vectors written after that change number (the fresh tail of an
/// approximate index); `skip` holds memory seqs already scored by the caller.
pub(crate) fn exact_scan(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    tail: Option<(i64, &std::collections::HashSet<i64>)>,
    top: &mut vectors::TopK,
) -> Result<(), SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    // CROSS JOIN fixes the loop order: walk the vectors once and look each memory up
    // by rowid, rather than walk a workspace index and look up both tables per row.
    // The tail walks the change log's (model, dimension, change) index instead, so its
    // cost follows the number of fresh vectors, not the store's size.
    let sql = match tail {
        None => format!(
            "SELECT m.id, e.vector, e.memory_seq FROM memory_embeddings e
             CROSS JOIN memories m ON m.seq = e.memory_seq
             WHERE e.model = ?1 AND e.dimension = ?2 AND {clause}"
        ),
        Some(_) => format!(
            "SELECT m.id, e.vector, e.memory_seq FROM vector_changes c
             CROSS JOIN memory_embeddings e ON e.memory_seq = c.memory_seq
             CROSS JOIN memories m ON m.seq = e.memory_seq
             WHERE c.model = ?1 AND c.dimension = ?2 AND c.change > ?3
               AND e.model = ?1 AND e.dimension = ?2 AND {clause}"
        ),
    };
    let mut params = vec![
        rusqlite::types::Value::from(model.to_owned()),
        rusqlite::types::Value::from(query.len() as i64),
    ];
    if let Some((after, _)) = tail {
        params.push(after.into());
    }
    // Numbered and anonymous parameters mix: `?` takes the number after the largest so far.
    params.extend(values);
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(params))?;
    // A vector written twice since the snapshot has two change rows: score it once.
    let mut seen = std::collections::HashSet::new();
    while let Some(row) = rows.next()? {
        if let Some((_, skip)) = tail {
            let seq: i64 = row.get(2)?;
            if skip.contains(&seq) || !seen.insert(seq) {
                continue;
            }
        }
        let blob = vectors::blob(row, 1)?;
        let score = vectors::dot(query, blob);
        if top.would_keep(score) {
            let id: String = row.get(0)?;
            top.push(score, rows::parse_id(&id)?);
        }
    }
    Ok(())
}

impl Drop for SqliteStore {
    /// SQLite's advice for connections: `PRAGMA optimize` on close keeps the planner's
    /// statistics current (bounded by `analysis_limit`), so filters on a large workspace
    /// pick table scans over unselective indexes.
    fn drop(&mut self) {
        if let Err(error) = self.lock().execute_batch("PRAGMA optimize;") {
            tracing::debug!(%error, "PRAGMA optimize on close failed");
        }
    }
}

/// Exposed for tests and benches that need to look at the raw database.
impl SqliteStore {
    /// Runs `f` with the connection (tests, diagnostics).
    pub fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        f(&self.lock())
    }

    /// Waits for the in-memory full-text ranking's build (`lexicon.rs`) when one is
    /// running (benchmarks): until it is ready, FTS5 ranks — alike, but slower.
    pub fn wait_text_ranking(&self) {
        self.lexicon.wait_idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite is built as `.cargo/config.toml` says: each connection's page cache its own
    /// (no global lock shared by every reader and the writer), no allocation statistics.
    /// A build without that config still works, but every page fetch of every thread
    /// goes through one mutex again.
    #[test]
    fn sqlite_is_built_without_shared_page_cache_or_memory_statistics() {
        let store = SqliteStore::open_in_memory().unwrap();
        let options: Vec<String> = store
            .lock()
            .prepare("PRAGMA compile_options")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(options.iter().any(|o| o == "THREADSAFE=1"), "{options:?}");
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "{options:?}"
        );
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
    }

    /// A purge's residue scan reads the file's pages through SQLite: with secure delete
    /// off (what secure delete exists to prevent), the freed pages keep the text and the
    /// report names the file; with it on, nothing is found. Either way the scan opens no
    /// second descriptor of the file, so the store's lease still refuses a restore.
    #[test]
    fn a_purge_reads_the_file_through_sqlite_and_reports_what_free_pages_keep() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let store = SqliteStore::open(&path).unwrap();
        let workspace = Workspace::default();
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let purge_one = |content: &str| {
            let record = crate::test_records::record(content.to_owned(), at, "default", "p", None);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            store
                .purge(&workspace, record.memory.id, at, &Actor::cli())
                .unwrap()
                .unwrap()
        };
        let clean = purge_one("the quarterly numbers for the northern region are confidential");
        assert_eq!(clean.residue, Vec::<String>::new());

        store
            .lock()
            .pragma_update(None, "secure_delete", false)
            .unwrap();
        let left = purge_one("the acquisition of the harbour company closes in march next year");
        assert!(
            left.residue
                .iter()
                .any(|r| r.starts_with(&format!("file {}:", path.display()))),
            "{:?}",
            left.residue
        );
        assert!(matches!(
            crate::acquire_exclusive(&path, Duration::from_millis(50)),
            Err(crate::LeaseError::InUse(_))
        ));
    }

    /// What ranking reads of a memory is what the whole row says, column for column (a
    /// state written after insertion included), for the asked workspace's ids only.
    #[test]
    fn ranking_rows_agree_with_whole_rows() {
        let store = SqliteStore::open_in_memory().unwrap();
        let workspace = Workspace::default();
        let mut ids = Vec::new();
        for (n, space) in ["default", "default", "other", "default"]
            .iter()
            .enumerate()
        {
            let at = Timestamp::from_second(1_700_000_000 + n as i64 * 3600).unwrap();
            let record = crate::test_records::record(format!("note {n}"), at, space, "p", None);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            ids.push(record.memory.id);
        }
        let later = Timestamp::from_second(1_700_100_000).unwrap();
        store
            .update_states(
                &workspace,
                &ids[..1],
                EventKind::RecallReinforce,
                &Actor::cli(),
                later,
                &mut |m| {
                    Some(MemoryState {
                        importance: 0.9,
                        pinned: true,
                        stability_hours: 400.5,
                        last_recalled_at: Some(later),
                        recall_count: 3,
                        ..m.state
                    })
                },
            )
            .unwrap();
        let missing = MemoryId::new_at(later);
        let asked = [ids.clone(), vec![missing]].concat();
        let mut rows = store.ranking_rows(&workspace, &asked).unwrap();
        rows.sort_by_key(|row| row.id);
        let mut whole: Vec<RankingRow> = store
            .get_many(&workspace, &asked)
            .unwrap()
            .into_iter()
            .map(|m| RankingRow {
                id: m.id,
                state: m.state,
                valid_from: m.valid_from,
            })
            .collect();
        whole.sort_by_key(|row| row.id);
        assert_eq!(rows, whole);
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[0], ids[1], ids[3]]
        );
        assert_eq!(
            (rows[0].state.recall_count, rows[0].state.pinned),
            (3, true)
        );
        assert_eq!(rows[0].state.last_recalled_at, Some(later));
        assert_eq!(rows[2].valid_from.as_second(), 1_700_000_000 + 3 * 3600);
    }

    /// Near-duplicate keys live first in the recent table and move into the large index
    /// when the merge cursor's slice passes them, in a transaction that stores keys;
    /// lookups find a memory by its keys wherever they are, a content change replaces
    /// them (through the memory's list of keys) and a purge removes them.
    #[test]
    fn near_duplicate_keys_are_found_before_and_after_they_move_to_the_large_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("levh.db")).unwrap();
        let workspace = Workspace::default();
        let filter = MemoryFilter::workspace(workspace.clone());
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let insert = |content: &str| {
            let mut record =
                crate::test_records::record(content.to_owned(), at, "default", "p", None);
            record.near_duplicate_keys = levh_core::text::near_duplicate_keys(content);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            record.memory.id
        };
        let counts = || {
            let conn = store.lock();
            let count = |table: &str| -> i64 {
                conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .unwrap()
            };
            (
                count("near_duplicate_keys"),
                count("near_duplicate_keys_recent"),
                count("near_duplicate_key_lists"),
            )
        };
        let found = |content: &str| {
            store
                .near_duplicates(&filter, &levh_core::text::near_duplicate_keys(content), 5)
                .unwrap()
        };
        let deploy = "the deploy branch for atlas is main and releases are tagged weekly";
        let first = insert(deploy);
        let (large, recent, lists) = counts();
        assert_eq!((large + recent, lists), (21, 1));
        assert_eq!(found(deploy), [first]);

        // The next slice starts at the smallest key still waiting: storing one more
        // memory moves that key (and whatever else waits in the slice) to the large index.
        let waiting: i64 = store
            .lock()
            .query_row("SELECT min(key) FROM near_duplicate_keys_recent", [], |r| {
                r.get(0)
            })
            .unwrap();
        store
            .lock()
            .execute(
                "UPDATE near_duplicate_keys_merge_cursor SET next_key = ?1",
                [waiting],
            )
            .unwrap();
        let kafka = "kafka consumer lag alerts fire after five minutes on the billing cluster";
        let second = insert(kafka);
        let (moved_large, moved_recent, lists) = counts();
        assert_eq!((moved_large + moved_recent, lists), (42, 2));
        let in_large: i64 = store
            .lock()
            .query_row(
                "SELECT count(*) FROM near_duplicate_keys WHERE key = ?1",
                [waiting],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!((in_large, moved_large > large), (1, true));
        assert_eq!(found(deploy), [first]);
        assert_eq!(found(kafka), [second]);

        // New content: the old keys leave both tables, the new ones take their place.
        let moved = "grafana dashboards for the payments team live in the ops folder";
        let keys = levh_core::text::near_duplicate_keys(moved);
        assert!(
            store
                .replace_content(
                    &workspace,
                    first,
                    moved,
                    None,
                    &keys,
                    EventKind::Update,
                    json!({}),
                    at,
                    &Actor::cli(),
                )
                .unwrap()
        );
        let (large, recent, lists) = counts();
        assert_eq!((large + recent, lists), (42, 2));
        assert!(found(deploy).is_empty());
        assert_eq!(found(moved), [first]);

        store.purge(&workspace, first, at, &Actor::cli()).unwrap();
        store.purge(&workspace, second, at, &Actor::cli()).unwrap();
        assert_eq!(counts(), (0, 0, 0));
        assert!(found(moved).is_empty() && found(kafka).is_empty());
    }

    /// The gate looks for near-duplicates of every item it judges: its statement is
    /// prepared once, not again for each new set of keys, project or time (SQLite built
    /// with STAT4 re-prepares a statement whenever a parameter it estimated rows with
    /// changes, once statistics exist, as `PRAGMA optimize` leaves them).
    #[test]
    fn near_duplicate_lookups_are_not_prepared_again_for_new_values() {
        use rusqlite::StatementStatus;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let store = SqliteStore::open(&path).unwrap();
        let content = |n: usize| format!("note {n} about the {} cluster", ["alpha", "beta"][n % 2]);
        for n in 0..300 {
            let at = Timestamp::from_second(1_700_000_000 + n as i64).unwrap();
            let project = ["atlas", "vega", "orion"][n % 3];
            let mut record = crate::test_records::record(content(n), at, "default", project, None);
            record.near_duplicate_keys = levh_core::text::near_duplicate_keys(&content(n));
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
        }
        store.lock().execute_batch("ANALYZE").unwrap();
        let connection = Connection::open(&path).unwrap();
        let mut runs = 0;
        let mut reprepared = 0;
        for n in 0..12 {
            let filter = MemoryFilter {
                project: Some(["atlas", "vega", "orion"][n % 3].to_owned()),
                not_retired_at: Some(Timestamp::from_second(1_700_000_000 + n as i64).unwrap()),
                ..MemoryFilter::workspace(Workspace::default())
            };
            let keys = levh_core::text::near_duplicate_keys(&content(n * 7));
            let (sql, params) = near_duplicates_query(&filter, &keys, 20);
            let mut statement = connection.prepare_cached(&sql).unwrap();
            let found: Vec<String> = statement
                .query_map(params_from_iter(params), |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            runs += usize::from(!found.is_empty());
            reprepared += statement.reset_status(StatementStatus::RePrepare);
        }
        assert!(runs >= 4, "the lookups found their items ({runs} of 12)");
        assert_eq!(reprepared, 0);
    }

    /// Lookups by a list of ids go through the unique id index at any list length, never
    /// through a workspace index (which walks every memory of the workspace).
    #[test]
    fn lookups_by_id_are_driven_by_the_ids() {
        let store = SqliteStore::open_in_memory().unwrap();
        let conn = store.lock();
        for n in [1, 20, 500] {
            for (name, sql, fixed) in [
                ("get_many", get_many_sql(n), 1),
                ("compared_texts", compared_texts_sql(n), 1),
                ("ranking_rows", ranking_rows_sql(n), 1),
                ("embeddings", embeddings_sql(n), 2),
            ] {
                let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
                let params = (0..fixed + n).map(|i| format!("v{i}"));
                let plan: Vec<String> = statement
                    .query_map(params_from_iter(params), |row| row.get(3))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let walks_workspace = plan.iter().any(|step| step.contains("workspace"));
                let by_id = plan
                    .iter()
                    .any(|step| step.contains("sqlite_autoindex_memories_1 (id=?)"));
                assert!(by_id && !walks_workspace, "{name} with {n} ids: {plan:?}");
            }
        }
    }
}
