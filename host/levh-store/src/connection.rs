//! Opening the store: the writer connection and its pragmas (WAL, cache, secure
//! delete), the migration on open, and the write transaction every change runs in.
//! Read connections are pooled beside it (`readers.rs`).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::{SqliteStoreError, lease, lexicon, migrations, readers, standings};

/// How long a writer waits for another process's write to finish before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The SQLite store: one writer connection behind a mutex, and a pool of read
/// connections (see `readers.rs`) so reads run beside writes and each other.
#[derive(Debug)]
pub struct SqliteStore {
    /// The writer, shared with the thread that writes buffered events (`event_buffer.rs`).
    pub(crate) connection: Arc<Mutex<Connection>>,
    /// Events that change no memory, waiting to be written in a batch.
    pub(crate) event_buffer: crate::event_buffer::EventBuffer,
    pub(crate) readers: readers::ReadPool,
    pub(crate) standings: standings::Standings,
    pub(crate) lexicon: lexicon::Lexicon,
    /// Each project's seqs, kept between scoped queries.
    pub(crate) project_seqs: crate::project_seqs::ProjectSeqs,
    pub(crate) busy_timeout: Duration,
    pub(crate) path: String,
    /// This process's open of the file, named to a restore that is refused (`lease.rs`).
    pub(crate) _lease: Option<lease::Lease>,
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
    pub(crate) fn setup(
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
            connection: Arc::new(Mutex::new(connection)),
            event_buffer: Default::default(),
            readers: readers::ReadPool::default(),
            standings: standings::Standings::default(),
            lexicon: lexicon::Lexicon::default(),
            project_seqs: Default::default(),
            busy_timeout,
            path,
            _lease: None,
        })
    }

    /// The database file, when the store is one.
    pub(crate) fn file_path(&self) -> Option<&Path> {
        (self.path != ":memory:").then(|| Path::new(&self.path))
    }

    /// Runs `f` in one write transaction and commits it if `f` succeeds. `BEGIN
    /// IMMEDIATE` takes the write lock up front, so concurrent writers wait on the busy
    /// timeout instead of failing when a read transaction would have to upgrade.
    ///
    /// Buffered events (`event_buffer.rs`) are written first, in the same transaction:
    /// they come before this change in the log, as they happened before it.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, SqliteStoreError>,
    ) -> Result<T, SqliteStoreError> {
        let mut conn = self.lock();
        let pending = self.event_buffer.take();
        let written = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            crate::event_buffer::write_all(&tx, &pending)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })();
        if written.is_err() {
            // Rolled back: the events wait for the next transaction.
            self.event_buffer.put_back(pending);
        }
        written
    }

    /// Appends an event that changes no memory: at once for an in-memory store, else
    /// within `event_buffer::WINDOW` (see there).
    pub(crate) fn log_buffered(
        &self,
        event: crate::event_buffer::Pending,
    ) -> Result<(), SqliteStoreError> {
        if self.file_path().is_none() {
            return self.write(|tx| Ok(crate::event_buffer::write_all(tx, &[event])?));
        }
        self.event_buffer.push(event, &self.connection);
        Ok(())
    }

    /// Writes the buffered events now: before this process reads the log, or before it
    /// exits while something else may still hold the store.
    pub fn flush_events(&self) -> Result<(), SqliteStoreError> {
        if !self.event_buffer.is_empty() {
            self.write(|_| Ok(()))?;
        }
        Ok(())
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite mid-transaction (the
        // transaction rolls back on drop), so a poisoned lock is still safe to use.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What [`SqliteStore::keep_log_short`] found: the log's pages (frames) and how many of
/// them are now in the database file. A reader still using older pages keeps some from
/// being copied; the next call copies them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogCheckpoint {
    /// Another checkpoint was running.
    pub busy: bool,
    pub frames: u64,
    pub copied: u64,
}

pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl Drop for SqliteStore {
    /// SQLite's advice for connections: `PRAGMA optimize` on close keeps the planner's
    /// statistics current (bounded by `analysis_limit`), so filters on a large workspace
    /// pick table scans over unselective indexes.
    fn drop(&mut self) {
        // The buffered events first: the thread writes what waits and ends.
        self.event_buffer.stop();
        if let Err(error) = self.flush_events() {
            tracing::warn!(%error, "buffered events lost on close");
        }
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

    /// Forgets the seqs kept of each project (`project_seqs.rs`), so that the next
    /// scoped query reads them from the index as before they were kept (benchmarks'
    /// baseline).
    #[doc(hidden)]
    pub fn forget_project_seqs(&self) {
        self.project_seqs.clear();
    }

    /// Brings the in-memory full-text ranking (`lexicon.rs`) up to date in the
    /// background: what a server calls every few seconds, so that a bulk import does not
    /// leave the next query to FTS5 while the ranking rebuilds.
    pub fn keep_text_ranking_up(&self) -> Result<(), SqliteStoreError> {
        self.lexicon.keep_up(&self.read(), self.file_path())
    }

    /// Copies what the write-ahead log holds into the database file, when it holds
    /// anything not yet copied: a passive checkpoint, which neither waits for nor blocks a
    /// reader or the writer. What a server calls every few seconds.
    ///
    /// Why: the log is copied back only every 10,000 pages (40 MB, see `open`), and until
    /// then every page a read touches is looked up in the log's index and, when found,
    /// copied out of the log file; once everything is copied, a new read transaction
    /// ignores the log and reads the memory-mapped file. At 3,000 memories written one
    /// by one (a 41 MB log), a scoped search over REST went from 1.64 to 1.33 ms of
    /// server CPU (`scripts/compare-python-levh.sh`); the next write then starts the log
    /// afresh instead of appending to it.
    pub fn keep_log_short(&self) -> Result<LogCheckpoint, SqliteStoreError> {
        if self.file_path().is_none() {
            return Ok(LogCheckpoint::default());
        }
        let (busy, frames, copied): (i64, i64, i64) =
            self.read()
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?;
        Ok(LogCheckpoint {
            busy: busy != 0,
            frames: frames.max(0) as u64,
            copied: copied.max(0) as u64,
        })
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

    /// The passive checkpoint copies the whole log when nothing reads an older state,
    /// stops at what a reader still uses (and neither waits for it nor fails), and copies
    /// the rest on the next call; afterwards the next write starts the log afresh, so its
    /// pages are not appended behind thousands of old ones.
    #[test]
    fn the_log_is_copied_into_the_file_around_a_reader_and_then_restarted() {
        use levh_core::{Actor, Store, Timestamp};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let store = SqliteStore::open(&path).unwrap();
        let actor = Actor::cli();
        let at = Timestamp::from_second(1_780_000_000).unwrap();
        let write = |n: usize| {
            for i in 0..n {
                let content = format!("note {i} about the harbour crane schedule {}", n * 100 + i);
                let record = crate::test_records::record(content, at, "default", "p", None);
                store.insert(&record, &[], &|_| None, &actor).unwrap();
            }
        };
        write(20);
        let first = store.keep_log_short().unwrap();
        assert!(first.frames > 0, "{first:?}");
        assert_eq!(first.copied, first.frames, "{first:?}");

        // Another connection (another process) in the middle of a read transaction.
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let before: i64 = reader
            .query_row("SELECT count(*) FROM memories", [], |row| row.get(0))
            .unwrap();
        assert_eq!(before, 20);
        write(20);
        let around = store.keep_log_short().unwrap();
        assert!(!around.busy);
        assert!(around.copied < around.frames, "{around:?}");
        reader.execute_batch("COMMIT").unwrap();
        let after = store.keep_log_short().unwrap();
        assert_eq!(after.copied, after.frames, "{after:?}");

        // Everything copied: the next write starts at the log's beginning.
        write(1);
        let restarted = store.keep_log_short().unwrap();
        assert!(
            restarted.frames < after.frames,
            "{restarted:?} after {after:?}"
        );
        assert_eq!(restarted.copied, restarted.frames);
        assert!(
            SqliteStore::open_in_memory()
                .unwrap()
                .keep_log_short()
                .unwrap()
                == LogCheckpoint::default()
        );
    }
}
