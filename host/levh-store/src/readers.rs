//! Read connections beside the one writer.
//!
//! In WAL mode readers never wait for the writer nor for each other, so a server's
//! concurrent searches need not queue behind one mutex: each read borrows an idle
//! connection (opening one when none is idle) and returns it when done. Writes keep the
//! single writer connection and `BEGIN IMMEDIATE`.

use std::ops::Deref;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::SqliteStore;

/// Idle connections kept for reuse (each keeps its own prepared-statement cache); more
/// may be open at a moment of high concurrency, and are closed when returned.
const MAX_IDLE: usize = 8;

/// Idle read connections of a file-backed store.
#[derive(Debug, Default)]
pub(crate) struct ReadPool {
    idle: Mutex<Vec<Connection>>,
}

/// A connection to read through: a pooled one, or the writer's for an in-memory store
/// (which no second connection can see) or when a new connection cannot be opened.
pub(crate) enum Reader<'a> {
    Shared(MutexGuard<'a, Connection>),
    Pooled(&'a ReadPool, Option<Connection>),
}

impl Deref for Reader<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            Self::Shared(guard) => guard,
            Self::Pooled(_, connection) => connection
                .as_ref()
                .expect("a pooled reader holds its connection until dropped"),
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Self::Pooled(pool, connection) = self
            && let Some(connection) = connection.take()
        {
            let mut idle = pool.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if idle.len() < MAX_IDLE {
                idle.push(connection);
            }
        }
    }
}

fn open_reader(path: &Path, busy_timeout: Duration) -> rusqlite::Result<Connection> {
    // Read-write flags without CREATE: a read-only connection to a WAL database fails
    // when it cannot write the shared-memory file. `query_only` keeps it a reader.
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(busy_timeout)?;
    connection.pragma_update(None, "query_only", true)?;
    // A capture and a recall each run more distinct statements than rusqlite's default
    // cache of 16 keeps prepared.
    connection.set_prepared_statement_cache_capacity(128);
    connection.pragma_update(None, "cache_size", -8_192i64)?;
    connection.pragma_update(None, "mmap_size", 256i64 << 20)?;
    Ok(connection)
}

/// A connection of a background build's own (the vector index, the full-text ranking),
/// so its long read holds no connection of the store: read-write flags without CREATE,
/// as for the readers, and the store's default busy timeout.
pub(crate) fn open_for_build(path: &Path) -> Result<Connection, crate::SqliteStoreError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(crate::DEFAULT_BUSY_TIMEOUT)?;
    Ok(connection)
}

impl SqliteStore {
    /// A connection for reads that see every committed write.
    pub(crate) fn read(&self) -> Reader<'_> {
        let Some(path) = self.file_path() else {
            return Reader::Shared(self.lock());
        };
        let idle = self
            .readers
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let connection = match idle {
            Some(connection) => connection,
            None => match open_reader(path, self.busy_timeout) {
                Ok(connection) => connection,
                Err(error) => {
                    tracing::warn!(%error, "cannot open a read connection; reading through the writer");
                    return Reader::Shared(self.lock());
                }
            },
        };
        Reader::Pooled(&self.readers, Some(connection))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::mpsc;

    use levh_core::{Role, Timestamp, Workspace};

    use super::*;

    fn file_store() -> (tempfile::TempDir, Arc<SqliteStore>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).unwrap());
        (dir, store)
    }

    #[test]
    fn a_read_sees_every_committed_write_and_cannot_write() {
        let (_dir, store) = file_store();
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let workspace = Workspace::new("team").unwrap();
        // Warm the pool first, so the read below reuses a connection opened before the
        // write: a pooled reader must not keep an old snapshot.
        assert_eq!(store.list_tokens().unwrap(), vec![]);
        let issued = store
            .create_token(&workspace, Role::Viewer, None, now)
            .unwrap();
        assert!(matches!(store.read(), Reader::Pooled(..)));
        assert_eq!(
            store.verify_token(&issued.secret).unwrap(),
            Some(issued.info)
        );
        let refused = store.read().execute("DELETE FROM tokens", []);
        assert!(refused.is_err(), "a reader wrote: {refused:?}");
        assert_eq!(store.list_tokens().unwrap().len(), 1);
    }

    #[test]
    fn reads_run_while_a_write_transaction_is_open() {
        let (_dir, store) = file_store();
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let workspace = Workspace::new("team").unwrap();
        let issued = store
            .create_token(&workspace, Role::Viewer, None, now)
            .unwrap();

        let (writing, wait_for_writer) = mpsc::channel();
        let (read_done, wait_for_read) = mpsc::channel();
        let reader = {
            let store = store.clone();
            std::thread::spawn(move || {
                wait_for_writer.recv().unwrap();
                let found = store.verify_token(&issued.secret).unwrap();
                read_done.send(()).unwrap();
                found
            })
        };
        // Hold the writer (mutex and SQLite write lock) until the read is done, or give up
        // after 10 s: with reads queued behind the writer, they would finish only after.
        let read_while_writing = store
            .write(|tx| {
                tx.execute("DELETE FROM tokens WHERE id = 'none'", [])?;
                writing.send(()).unwrap();
                Ok(wait_for_read.recv_timeout(Duration::from_secs(10)).is_ok())
            })
            .unwrap();
        assert!(reader.join().unwrap().is_some());
        assert!(
            read_while_writing,
            "the read waited for the write transaction to end"
        );
    }
}
