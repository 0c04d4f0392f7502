//! Whole-file copies of a store for backups (`levh backup`): a consistent copy taken while
//! the store is in use, the checks a copy must pass before it may replace a store, and
//! the exclusive hold under which it replaces one.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::SqliteStoreError;
use crate::migrations;

/// What a database file holds, read from the file itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// `PRAGMA user_version`: the schema the file was written with.
    pub schema_version: i64,
    /// Memory rows, every workspace, forgotten ones included (they are kept for history).
    pub memories: u64,
    /// Of those, the forgotten ones.
    pub forgotten: u64,
    /// Held candidate rows, every workspace, decided ones included.
    pub held: u64,
    /// Of those, the ones still waiting for a person.
    pub waiting: u64,
}

/// Writes a consistent copy of the store at `database` to `into` (which must not exist).
///
/// `VACUUM INTO` reads the whole file in one read transaction: in WAL mode writers carry
/// on beside it and the copy is the store as of that transaction's start, compacted (free
/// pages are not copied). SQLite's online backup API was the alternative; it restarts
/// from the first page whenever another process writes, so a busy server could keep a
/// backup of a large store from ever finishing.
pub fn snapshot(database: &Path, into: &Path) -> Result<SnapshotSummary, SqliteStoreError> {
    // No CREATE flag: a missing store is an error here, not a new empty file to copy.
    let connection = Connection::open_with_flags(
        database,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(crate::DEFAULT_BUSY_TIMEOUT)?;
    migrations::check_version(&connection)?;
    connection.execute("VACUUM INTO ?1", [utf8(into)?])?;
    summarize(&Connection::open_with_flags(
        into,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?)
}

/// Checks a database file that is to replace a store: SQLite's structural check passes,
/// it is a levh store, and its schema is not newer than this build's (an older one is
/// migrated when it is next opened). Reads only.
pub fn check_restorable(path: &Path) -> Result<SnapshotSummary, SqliteStoreError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    migrations::check_version(&connection)?;
    let problems: Vec<String> = connection
        .prepare("PRAGMA quick_check(5)")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if problems != ["ok"] {
        return Err(SqliteStoreError::Corrupt(format!(
            "the database fails SQLite's check: {}",
            problems.join("; ")
        )));
    }
    summarize(&connection)
}

fn summarize(connection: &Connection) -> Result<SnapshotSummary, SqliteStoreError> {
    let schema_version: i64 =
        connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let has_table = |name: &str| -> Result<bool, SqliteStoreError> {
        Ok(connection.query_row(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [name],
            |row| row.get(0),
        )?)
    };
    if !has_table("memories")? {
        return Err(SqliteStoreError::Corrupt(
            "not a levh store: it has no memories table".into(),
        ));
    }
    let count = |table: &str| -> Result<u64, SqliteStoreError> {
        let n: i64 = connection.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })?;
        Ok(n.max(0).unsigned_abs())
    };
    Ok(SnapshotSummary {
        schema_version,
        memories: count("memories")?,
        forgotten: count("memories WHERE forgotten_at IS NOT NULL")?,
        // The held queue came with schema 2.
        held: if has_table("held_candidates")? {
            count("held_candidates")?
        } else {
            0
        },
        waiting: if has_table("held_candidates")? {
            count("held_candidates WHERE status = 'held'")?
        } else {
            0
        },
    })
}

/// A store's file held so that no other connection can use it, with everything its log
/// held copied into the file, until dropped.
#[derive(Debug)]
pub struct ExclusiveHold {
    connection: Connection,
    _lease: crate::ExclusiveLease,
}

impl ExclusiveHold {
    /// Writes a consistent copy of the held store to `into` (which must not exist): what
    /// a restore is about to replace.
    pub fn copy_to(&self, into: &Path) -> Result<(), SqliteStoreError> {
        self.connection.execute("VACUUM INTO ?1", [utf8(into)?])?;
        Ok(())
    }

    /// Replaces everything the held store holds with the database at `source`, page by
    /// page in one transaction (SQLite's backup API, all pages in one step).
    ///
    /// The file is replaced in place rather than renamed over: a process that starts
    /// meanwhile waits on the lock and then opens the restored store, where a rename
    /// could leave it writing into the file just moved away.
    pub fn replace_with(&mut self, source: &Path) -> Result<(), SqliteStoreError> {
        let source = Connection::open_with_flags(
            source,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let copy = rusqlite::backup::Backup::new(&source, &mut self.connection)?;
        match copy.step(-1)? {
            rusqlite::backup::StepResult::Done => Ok(()),
            other => Err(SqliteStoreError::Corrupt(format!(
                "copying the restored store's pages stopped before the end ({other:?})"
            ))),
        }
    }
}

fn utf8(path: &Path) -> Result<&str, SqliteStoreError> {
    path.to_str()
        .ok_or_else(|| SqliteStoreError::Corrupt(format!("{} is not valid UTF-8", path.display())))
}

/// Why a store could not be held exclusively.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// Another process (a server, an MCP client, a sync) has the store open: the
    /// processes that said so, each as `pid N (levh serve), open since T`.
    #[error("{}", crate::LeaseError::InUse(.0.clone()))]
    InUse(Vec<String>),
    /// SQLite refused for another reason.
    #[error(transparent)]
    Store(#[from] SqliteStoreError),
}

/// How long [`hold_exclusively`] waits for other processes to close the store.
const HOLD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Takes the store at `path` for this process alone and checkpoints its log into the
/// file, so that the file by itself is the whole store and can be moved.
///
/// In WAL mode every open connection keeps a shared lock on the file, idle or not, so
/// the exclusive lock is refused while any other process has the store open, and no
/// other process can open it while this hold lives. Waits up to five seconds for
/// others to close it.
pub fn hold_exclusively(path: &Path) -> Result<ExclusiveHold, HoldError> {
    // First the lease every opener holds, which nothing in another process can drop
    // (`lease.rs`); SQLite's own lock below is the second guard.
    let lease = match crate::acquire_exclusive(path, HOLD_WAIT) {
        Ok(lease) => lease,
        Err(crate::LeaseError::InUse(holders)) => return Err(HoldError::InUse(holders)),
        Err(e) => return Err(SqliteStoreError::from(e).into()),
    };
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(SqliteStoreError::from)?;
    // A command that is about to finish (a `levh capture`, an MCP client exiting) is
    // waited for; a server, which keeps the store open, is not outlasted.
    connection
        .busy_timeout(HOLD_WAIT)
        .map_err(SqliteStoreError::from)?;
    connection
        .pragma_update(None, "locking_mode", "EXCLUSIVE")
        .map_err(SqliteStoreError::from)?;
    // A write transaction takes the lock; nothing is written.
    match connection.execute_batch("BEGIN EXCLUSIVE; COMMIT;") {
        Ok(()) => {}
        Err(e) if crate::connection::is_busy(&e) => return Err(HoldError::InUse(Vec::new())),
        Err(e) => return Err(SqliteStoreError::from(e).into()),
    }
    let (busy, _, _): (i64, i64, i64) = connection
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .map_err(SqliteStoreError::from)?;
    if busy != 0 {
        return Err(HoldError::InUse(Vec::new()));
    }
    Ok(ExclusiveHold {
        connection,
        _lease: lease,
    })
}
