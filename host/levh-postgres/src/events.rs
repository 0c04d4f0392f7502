//! The event log: every change appends to `events` ([`log_event`]) in its own
//! transaction; a `levh serve` process tails it by sequence number for the live feed.
//!
//! Tailing by number needs numbers in commit order: a reader that has seen event N must
//! already see every event numbered below N, or an event numbered by a transaction that
//! commits later is skipped for good (with eight writers, a reader missed one in twenty).
//! SQLite's single writer gives that order for free. Here a transaction's events wait in
//! a temporary table of its connection ([`PENDING_TABLE`]) and are moved into the log
//! just before it commits ([`flush`]), under an advisory lock held until the commit ends:
//! numbers are drawn in commit order, and writers wait on each other only for that move
//! and the commit, never while they work. The lock is the last any transaction takes, so
//! it closes no cycle with the row locks taken before it.
//!
//! The same move notifies channel `levh_events`, delivered at the commit: every `levh
//! serve` on the database whose feed is open listens on it ([`EventListener`]) and reads
//! the log when told, instead of polling it.

use std::time::Duration;

use levh_core::{
    Actor, EventKind, EventSignal, LoggedEvent, MemoryId, StoreError, Timestamp, Workspace,
};
use postgres::Row;
use postgres::fallible_iterator::FallibleIterator;

use crate::connection::Db;

use crate::rows::{column, from_micros, micros, parse_id};
use crate::{PostgresStore, PostgresStoreError};

/// The advisory lock key under which a transaction's events are numbered ("levh" in
/// ASCII, then "events").
const EVENT_LOG_LOCK: i64 = 0x6c65_7668_6576_6e74;

/// Where a transaction's events wait until it commits: a temporary table of each pooled
/// connection, created when the connection is opened (see `connection.rs`).
pub(crate) const PENDING_TABLE: &str = "CREATE TEMPORARY TABLE IF NOT EXISTS levh_pending_events (
    ord        bigint GENERATED ALWAYS AS IDENTITY,
    at         bigint NOT NULL,
    kind       text NOT NULL,
    workspace  text NOT NULL,
    memory_id  text,
    surface    text NOT NULL,
    client     text,
    role       text NOT NULL,
    detail     jsonb NOT NULL,
    principal  text
)";

/// Records one event of the caller's transaction, to be appended to the log when it
/// commits ([`flush`], which `PostgresStore::write` runs).
pub(crate) fn log_event(
    tx: &mut impl Db,
    at: Timestamp,
    kind: EventKind,
    workspace: &Workspace,
    memory_id: Option<MemoryId>,
    actor: &Actor,
    detail: serde_json::Value,
) -> Result<(), PostgresStoreError> {
    tx.execute(
        "INSERT INTO pg_temp.levh_pending_events
             (at, kind, workspace, memory_id, surface, client, role, detail, principal)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &micros(at),
            &kind.as_str(),
            &workspace.as_str(),
            &memory_id.map(|id| id.to_string()),
            &actor.surface.as_str(),
            &actor.client,
            &actor.role.as_str(),
            &detail,
            &actor.principal,
        ],
    )?;
    Ok(())
}

/// Moves the transaction's pending events into the log, numbered in commit order: under
/// the event log's lock, which the commit that follows releases. A transaction that
/// logged nothing takes no lock.
pub(crate) fn flush(tx: &mut impl Db) -> Result<(), PostgresStoreError> {
    // The notice to listening feeds goes out when the transaction commits.
    let pending = tx.query_opt(
        "SELECT pg_advisory_xact_lock($1), pg_notify('levh_events', '')
           FROM pg_temp.levh_pending_events LIMIT 1",
        &[&EVENT_LOG_LOCK],
    )?;
    if pending.is_some() {
        tx.execute(
            "WITH moved AS (DELETE FROM pg_temp.levh_pending_events RETURNING *)
             INSERT INTO events (at, kind, workspace, memory_id, surface, client, role, detail, principal)
             SELECT at, kind, workspace, memory_id, surface, client, role, detail, principal
               FROM moved ORDER BY ord",
            &[],
        )?;
    }
    Ok(())
}

const SELECT: &str =
    "SELECT seq, at, kind, workspace, memory_id, surface, client, role, detail FROM events";

/// [`SELECT`] and the principal behind each event (column 9).
pub(crate) const SELECT_WITH_PRINCIPAL: &str = "SELECT seq, at, kind, workspace, memory_id, surface, client, role, detail, principal FROM events";

pub(crate) fn read(row: &Row) -> Result<LoggedEvent, PostgresStoreError> {
    let seq: i64 = column(row, 0)?;
    let workspace: String = column(row, 3)?;
    Ok(LoggedEvent {
        seq,
        at: from_micros(column(row, 1)?),
        kind: column(row, 2)?,
        workspace: Workspace::new(&workspace)
            .map_err(|_| PostgresStoreError::Corrupt(format!("event {seq}: workspace")))?,
        memory_id: column::<Option<&str>>(row, 4)?.map(parse_id).transpose()?,
        surface: column(row, 5)?,
        client: column(row, 6)?,
        role: column(row, 7)?,
        detail: column(row, 8)?,
    })
}

/// A connection of its own listening on `levh_events`: says when another transaction has
/// appended to the log.
pub(crate) struct EventListener {
    client: postgres::Client,
}

impl EventSignal for EventListener {
    fn wait(&mut self, timeout: Duration) -> Result<bool, StoreError> {
        let mut notifications = self.client.notifications();
        let told = notifications
            .timeout_iter(timeout)
            .next()
            .map_err(PostgresStoreError::from)?
            .is_some();
        // One read of the log answers every notice already here.
        while notifications
            .iter()
            .next()
            .map_err(PostgresStoreError::from)?
            .is_some()
        {}
        Ok(told)
    }
}

impl PostgresStore {
    /// A new connection (outside the pool: it is held as long as the feed is open)
    /// listening for appended events.
    pub(crate) fn listen_for_events(&self) -> Result<EventListener, PostgresStoreError> {
        let mut client = self.config.connect(postgres::NoTls)?;
        client.batch_execute("LISTEN levh_events")?;
        Ok(EventListener { client })
    }

    /// The newest sequence number in the log (0 when empty).
    pub(crate) fn last_event_seq(&self) -> Result<i64, PostgresStoreError> {
        Ok(self
            .connection()?
            .query_one("SELECT coalesce(max(seq), 0)::bigint FROM events", &[])?
            .get(0))
    }

    /// Events after `seq`, oldest first, at most `limit`.
    pub(crate) fn events_after(
        &self,
        seq: i64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!("{SELECT} WHERE seq > $1 ORDER BY seq LIMIT $2"),
            &[&seq, &crate::query::limit(limit)],
        )?;
        rows.iter().map(read).collect()
    }

    /// The newest `limit` events of one memory of the workspace, newest first.
    pub(crate) fn memory_events(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!("{SELECT} WHERE memory_id = $1 AND workspace = $2 ORDER BY seq DESC LIMIT $3"),
            &[
                &id.to_string(),
                &workspace.as_str(),
                &crate::query::limit(limit),
            ],
        )?;
        rows.iter().map(read).collect()
    }

    /// Schema version and journal mode: a liveness check that reads no memory. PostgreSQL
    /// always writes ahead to its log, so the mode is `wal`, as a SQLite store in WAL
    /// mode says.
    pub(crate) fn liveness(&self) -> Result<(i64, String), PostgresStoreError> {
        let version = crate::migrations::current_version(&mut *self.connection()?)?;
        Ok((version, "wal".to_owned()))
    }
}
