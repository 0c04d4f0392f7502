//! The crate's one error type, and its single conversion into levh-core's [`StoreError`].
//!
//! Everything inside the crate returns [`PostgresStoreError`], so `?` works on the
//! driver's and the pool's errors wherever they occur; the trait impls turn it into a
//! [`StoreError`] once, at the boundary, where a full disk and a vanished list cursor
//! are recognised.

use levh_core::{MemoryId, StoreError};

/// What can go wrong opening or using the PostgreSQL store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresStoreError {
    /// The server said no (or could not be reached mid-query).
    #[error("postgres: {}", describe(.0))]
    Postgres(postgres::Error),
    /// No connection could be had from the pool (the server is down, refuses us, or every
    /// connection stayed busy past the pool's timeout).
    #[error("connecting to postgres: {0}")]
    Pool(r2d2::Error),
    /// `LEVH_DATABASE_URL` (or the URL given) is not a PostgreSQL connection string.
    #[error("the database URL is not a PostgreSQL connection string ({0})")]
    Url(String),
    /// The database was migrated by a newer levh.
    #[error(
        "the database schema is version {found}, newer than this levh knows ({known}); upgrade levh"
    )]
    TooNew {
        /// Version recorded in the database.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// A migration failed; nothing of it was applied.
    #[error("migrating the database schema to version {version}: {}", describe(.cause))]
    Migration {
        /// The migration that failed.
        version: i64,
        /// The server's error.
        cause: postgres::Error,
    },
    /// A stored value could not be read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A page-by-page list continues after a memory that was purged meanwhile.
    #[error(
        "the memory {0} that this list continues from is no longer stored (purged while listing); list again"
    )]
    ListCursorGone(MemoryId),
    /// Another writer stored a batch's text after the gate judged it (see
    /// `levh_core::BatchWrite`); nothing was written.
    #[error("{0}")]
    Raced(String),
}

/// The server's message with its detail and SQLSTATE, which `postgres::Error`'s own
/// `Display` leaves out ("db error").
fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(": ");
                text.push_str(detail);
            }
            text
        }
        // The driver's own message names only the kind ("error connecting to server");
        // the reason (refused, timed out, TLS required) is in its sources.
        None => {
            let mut text = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                let cause_text = cause.to_string();
                if !text.ends_with(&cause_text) {
                    text.push_str(": ");
                    text.push_str(&cause_text);
                }
                source = cause.source();
            }
            text
        }
    }
}

impl From<postgres::Error> for PostgresStoreError {
    fn from(error: postgres::Error) -> Self {
        Self::Postgres(error)
    }
}

impl From<r2d2::Error> for PostgresStoreError {
    fn from(error: r2d2::Error) -> Self {
        Self::Pool(error)
    }
}

impl From<serde_json::Error> for PostgresStoreError {
    fn from(error: serde_json::Error) -> Self {
        Self::Json(error)
    }
}

impl PostgresStoreError {
    /// The server's SQLSTATE, when it answered with one.
    pub(crate) fn sqlstate(&self) -> Option<&postgres::error::SqlState> {
        match self {
            Self::Postgres(e) | Self::Migration { cause: e, .. } => e.code(),
            _ => None,
        }
    }

    /// A conflict between concurrent transactions that running the same work again
    /// resolves (a deadlock, a serialization failure).
    pub(crate) fn is_retryable(&self) -> bool {
        use postgres::error::SqlState;
        matches!(
            self.sqlstate(),
            Some(&SqlState::T_R_DEADLOCK_DETECTED | &SqlState::T_R_SERIALIZATION_FAILURE)
        )
    }
}

/// The one conversion at the trait boundary: a full disk becomes
/// [`StoreError::disk_full`] and a purged list cursor [`StoreError::cursor_gone`], as the
/// SQLite store reports them.
impl From<PostgresStoreError> for StoreError {
    fn from(error: PostgresStoreError) -> Self {
        use postgres::error::SqlState;
        if matches!(error, PostgresStoreError::ListCursorGone(_)) {
            return StoreError::cursor_gone(error.to_string());
        }
        if let PostgresStoreError::Raced(detail) = error {
            return StoreError::raced(detail);
        }
        if error.sqlstate() == Some(&SqlState::DISK_FULL) {
            return StoreError::disk_full(error.to_string());
        }
        StoreError::new(error)
    }
}
