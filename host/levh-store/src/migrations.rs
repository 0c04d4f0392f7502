//! Numbered migrations (`migrations/NNNN_*.sql`), applied at open with
//! `rusqlite_migration` (schema version in `PRAGMA user_version`).

use std::path::Path;

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::SqliteStoreError;

/// Every migration, in order. Never edit a landed one; append.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_memories.sql"),
    include_str!("../migrations/0002_gate.sql"),
    include_str!("../migrations/0003_sync.sql"),
    include_str!("../migrations/0004_tokens.sql"),
    include_str!("../migrations/0005_vector_changes.sql"),
    include_str!("../migrations/0006_held_updates.sql"),
    include_str!("../migrations/0007_entities.sql"),
    include_str!("../migrations/0008_standing_changes.sql"),
    include_str!("../migrations/0009_text_changes.sql"),
    include_str!("../migrations/0010_recent_near_duplicate_keys.sql"),
    include_str!("../migrations/0011_sync_listing.sql"),
    include_str!("../migrations/0012_conflicts.sql"),
    include_str!("../migrations/0013_review.sql"),
    include_str!("../migrations/0014_consolidation_and_working_memory.sql"),
    include_str!("../migrations/0015_attachments.sql"),
    include_str!("../migrations/0016_sessions_listed.sql"),
    include_str!("../migrations/0017_memories_listed.sql"),
    include_str!("../migrations/0018_memory_keys.sql"),
    include_str!("../migrations/0019_presence.sql"),
    include_str!("../migrations/0020_project_changes.sql"),
];

fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect())
}

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the schema up to date. Each migration is one transaction.
///
/// When `lock_file` is given, the work happens under an exclusive OS lock on it: several
/// processes often open a new file at the same moment (every MCP client spawns its own
/// `levh`), and the library reads the version before its transaction begins, so without
/// the lock a loser of the race would try to create tables the winner just created. Under
/// the lock the version is read again and a finished migration is simply seen as done.
pub(crate) fn apply(
    connection: &mut Connection,
    lock_file: Option<&Path>,
) -> Result<(), SqliteStoreError> {
    if current_version(connection)? == latest_version() {
        return Ok(());
    }
    let _guard = match lock_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(path)?;
            file.lock()?;
            Some(file) // unlocked when dropped
        }
        None => None,
    };
    let found = current_version(connection)?;
    if found > latest_version() {
        return Err(SqliteStoreError::TooNew {
            found,
            known: latest_version(),
        });
    }
    if found < latest_version() {
        migrations().to_latest(connection)?;
    }
    Ok(())
}

/// Refuses a store written by a newer levh, reading only.
pub(crate) fn check_version(connection: &Connection) -> Result<(), SqliteStoreError> {
    current_version(connection).map(|_| ())
}

fn current_version(connection: &Connection) -> Result<i64, SqliteStoreError> {
    let found: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > latest_version() {
        return Err(SqliteStoreError::TooNew {
            found,
            known: latest_version(),
        });
    }
    Ok(found)
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
        apply(&mut connection, None).unwrap();
        apply(&mut connection, None).unwrap();
        let version: i64 = connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, latest_version());
    }

    #[test]
    fn many_threads_opening_a_new_file_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || crate::SqliteStore::open(&path).map(|_| ()))
            })
            .collect();
        for thread in threads {
            thread.join().unwrap().unwrap();
        }
    }

    /// Near-duplicate keys at both ends of their range and between.
    const KEYS: [i64; 4] = [i64::MIN, -2, 5, i64::MAX];

    /// Versions that keep near-duplicate keys in 0002's table, which 0010 replaced.
    fn old_keys(version: i64) -> bool {
        (2..10).contains(&version)
    }

    #[test]
    fn every_older_schema_migrates_with_its_data() {
        // For each released version v, build a database at v with a memory in it, then
        // open it with this build: it must reach the latest version and keep the memory.
        for version in 1..latest_version() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("levh.db");
            {
                let mut connection = Connection::open(&path).unwrap();
                migrations()
                    .to_version(&mut connection, version as usize)
                    .unwrap();
                connection
                    .execute(
                        "INSERT INTO memories (id, workspace, content, source, importance, stability_hours,
                             created_at, valid_from, content_hash, admission_verdict, admission_decided_by, updated_at)
                         VALUES ('0198c3a0-0000-7000-8000-000000000001', 'default', 'kept across upgrades', 'cli',
                             0.5, 168, 0, 0, 'h', 'admit', 'gate', 0)",
                        [],
                    )
                    .unwrap();
                if old_keys(version) {
                    // Its near-duplicate keys, in the table 0002 made (0010 moves them).
                    for key in KEYS {
                        connection
                            .execute(
                                "INSERT INTO memory_near_duplicate_keys (key, memory_seq) VALUES (?1, 1)",
                                [key],
                            )
                            .unwrap();
                    }
                }
            }
            let store = crate::SqliteStore::open(&path).unwrap();
            let (schema, content): (i64, String) = store.with_connection(|c| {
                (
                    c.pragma_query_value(None, "user_version", |r| r.get(0))
                        .unwrap(),
                    c.query_row("SELECT content FROM memories", [], |r| r.get(0))
                        .unwrap(),
                )
            });
            assert_eq!(schema, latest_version(), "from version {version}");
            assert_eq!(content, "kept across upgrades");
            if old_keys(version) {
                use levh_core::Store;
                let workspace = levh_core::Workspace::default();
                let filter = levh_core::MemoryFilter::workspace(workspace.clone());
                let found = store.near_duplicates(&filter, &KEYS[1..2], 5).unwrap();
                assert_eq!(found.len(), 1, "from version {version}");
                let now = levh_core::Timestamp::from_second(1_700_000_000).unwrap();
                store
                    .purge(&workspace, found[0], now, &levh_core::Actor::cli())
                    .unwrap()
                    .expect("purged");
                // Through the list 0010 built, every key of the memory went with it.
                let left: i64 = store.with_connection(|c| {
                    c.query_row(
                        "SELECT (SELECT count(*) FROM near_duplicate_keys)
                              + (SELECT count(*) FROM near_duplicate_keys_recent)",
                        [],
                        |r| r.get(0),
                    )
                    .unwrap()
                });
                assert_eq!(left, 0, "from version {version}");
            }
        }
    }

    #[test]
    fn a_newer_schema_is_refused_with_advice() {
        let mut connection = Connection::open_in_memory().unwrap();
        connection.pragma_update(None, "user_version", 99).unwrap();
        let err = apply(&mut connection, None).unwrap_err();
        assert!(err.to_string().contains("upgrade levh"), "{err}");
    }
}
