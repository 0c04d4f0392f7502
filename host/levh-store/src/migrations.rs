//! Numbered migrations (`migrations/NNNN_*.sql`), applied at open with
//! `rusqlite_migration` (schema version in `PRAGMA user_version`).

use std::time::Duration;

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::SqliteStoreError;

/// Every migration, in order. Never edit a landed one; append.
const MIGRATIONS: &[&str] = &[include_str!("../migrations/0001_memories.sql")];

fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect())
}

/// The schema version this build writes.
pub(crate) fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the schema up to date. Several processes may open a new file at once; the
/// library's transaction can then lose the race with SQLITE_BUSY even after the busy
/// timeout. Each migration is atomic, so the loser retries, finds the work done, and
/// goes on.
pub(crate) fn apply(connection: &mut Connection) -> Result<(), SqliteStoreError> {
    let found: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > latest_version() {
        return Err(SqliteStoreError::TooNew { found, known: latest_version() });
    }
    if found == latest_version() {
        return Ok(());
    }
    let migrations = migrations();
    let mut attempt = 0;
    loop {
        match migrations.to_latest(connection) {
            Ok(()) => return Ok(()),
            Err(rusqlite_migration::Error::RusqliteError { err, .. }) if crate::is_busy(&err) && attempt < 50 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(20 * attempt));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }

    #[test]
    fn a_fresh_database_reaches_the_latest_version_and_reopening_is_a_no_op() {
        let mut connection = Connection::open_in_memory().unwrap();
        apply(&mut connection).unwrap();
        apply(&mut connection).unwrap();
        let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        assert_eq!(version, latest_version());
    }

    #[test]
    fn a_newer_schema_is_refused_with_advice() {
        let mut connection = Connection::open_in_memory().unwrap();
        connection.pragma_update(None, "user_version", 99).unwrap();
        let err = apply(&mut connection).unwrap_err();
        assert!(err.to_string().contains("upgrade levh"), "{err}");
    }
}
