//! The crate's one error type, and its single conversion into levh-core's [`StoreError`].
//!
//! Everything inside the crate returns [`SqliteStoreError`], so `?` works on rusqlite's
//! errors wherever they occur; the trait impls (`impl Store for SqliteStore`, ...) turn
//! it into a [`StoreError`] once, at the boundary, and that conversion is where a full
//! disk is recognised.

use levh_core::{MemoryId, StoreError};

/// What can go wrong opening or using the store.
///
/// Each message carries its cause's text, so the cause is deliberately not a `source`:
/// printed as a chain (`{:#}`) the text would repeat, and rusqlite's own errors repeat
/// theirs once more ("file is not a database: file is not a database").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteStoreError {
    /// SQLite said no.
    #[error("sqlite: {0}")]
    Sqlite(rusqlite::Error),
    /// A migration failed.
    #[error("migrating the database schema: {0}")]
    Migration(rusqlite_migration::Error),
    /// The migration lock file could not be used.
    #[error("locking the database for migration: {0}")]
    Lock(std::io::Error),
    /// The database was written by a newer levh.
    #[error(
        "the database schema is version {found}, newer than this levh knows ({known}); upgrade levh"
    )]
    TooNew {
        /// Version in the file.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// A stored value could not be read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// A stored value could not be read back, in the words used before [`Self::Corrupt`]
    /// covered it ("bad memory id …", "held status …"): kept word for word, since people
    /// and tests read them.
    #[error("{0}")]
    Malformed(String),
    /// A stored JSON value could not be read, or a value could not be written as JSON.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A page-by-page list continues after a memory that was purged meanwhile: a page
    /// read from there would match nothing and look like the end of the list.
    #[error(
        "the memory {0} that this list continues from is no longer stored (purged while listing); list again"
    )]
    ListCursorGone(MemoryId),
    /// Another writer stored a batch's text after the gate judged it (see
    /// `levh_core::BatchWrite`); nothing was written.
    #[error("{0}")]
    Raced(String),
    /// The approximate vector index (usearch) failed; `doing` says at what.
    #[error("{doing} the vector index: {cause}")]
    VectorIndex {
        /// What the index was doing ("searching", "building", ...).
        doing: &'static str,
        /// usearch's message.
        cause: String,
    },
    /// A thread building the vector index panicked.
    #[error("a vector index build thread panicked")]
    VectorIndexBuildPanicked,
    /// Another process holds the store alone (a restore), or its lock file is unusable.
    #[error(transparent)]
    Lease(#[from] crate::lease::LeaseError),
}

impl From<rusqlite::Error> for SqliteStoreError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sqlite(error)
    }
}

impl From<serde_json::Error> for SqliteStoreError {
    fn from(error: serde_json::Error) -> Self {
        Self::Json(error)
    }
}

impl From<rusqlite_migration::Error> for SqliteStoreError {
    fn from(error: rusqlite_migration::Error) -> Self {
        Self::Migration(error)
    }
}

impl From<std::io::Error> for SqliteStoreError {
    fn from(error: std::io::Error) -> Self {
        Self::Lock(error)
    }
}

/// The one conversion at the trait boundary. A full disk becomes
/// [`StoreError::disk_full`] and a list cursor purged meanwhile
/// [`StoreError::cursor_gone`]: conditions the engine and every surface report as the
/// caller's to act on (507, 409) rather than a fault of levh's.
impl From<SqliteStoreError> for StoreError {
    fn from(error: SqliteStoreError) -> Self {
        if matches!(error, SqliteStoreError::ListCursorGone(_)) {
            return StoreError::cursor_gone(error.to_string());
        }
        if let SqliteStoreError::Raced(detail) = error {
            return StoreError::raced(detail);
        }
        let full = match &error {
            SqliteStoreError::Sqlite(e) => is_disk_full(e),
            SqliteStoreError::Lock(e) => e.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        };
        if full {
            StoreError::disk_full(error.to_string())
        } else {
            StoreError::new(error)
        }
    }
}

/// SQLite's "database or disk is full" (a write that found no room; the transaction was
/// rolled back).
fn is_disk_full(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::DiskFull)
}
