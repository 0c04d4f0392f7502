//! Erasing a memory without residue, and proving it.
//!
//! Deleting the row is not enough: FTS5 keeps deleted terms in old index segments until
//! they are merged, the write-ahead log keeps old page images until a checkpoint, and
//! freed pages keep their bytes unless `secure_delete` zeroes them (it is on for every
//! connection). So a purge deletes, merges the index, checkpoints the log, and then scans
//! every table, the full-text index and the file itself for the content and its hash.

use std::path::Path;

use levh_core::{Actor, EventKind, MemoryId, PurgeReport, Timestamp, Workspace};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::json;

use crate::SqliteStoreError;
use crate::events::log_event;

/// Content shorter than this is only matched as a whole cell, never as a substring: a
/// short phrase like "use tabs" may legitimately occur inside other memories.
const SUBSTRING_MIN_CHARS: usize = 16;

pub(crate) fn purge(
    conn: &mut Connection,
    file: Option<&Path>,
    workspace: &Workspace,
    id: MemoryId,
    now: Timestamp,
    actor: &Actor,
) -> Result<Option<PurgeReport>, SqliteStoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row: Option<(i64, String, String, Option<String>)> = tx
        .query_row(
            "SELECT seq, content, content_hash, held_id FROM memories WHERE workspace = ?1 AND id = ?2",
            params![workspace.as_str(), id.to_string()],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()?;
    let Some((seq, content, hash, held_id)) = row else {
        return Ok(None);
    };
    let held_removed = tx
        .execute(
            "DELETE FROM held_candidates WHERE workspace = ?1 AND (content_hash = ?2 OR memory_id = ?3 OR id = ?4)",
            params![workspace.as_str(), hash, id.to_string(), held_id],
        )? as u64;
    // Its near-duplicate keys are removed through their list (the tables of keys have no
    // index by memory); the vector and the list go by cascade, the FTS entry by trigger.
    crate::writes::delete_keys(&tx, seq)?;
    tx.execute("DELETE FROM memories WHERE seq = ?1", [seq])?;
    // Its entity links went by cascade; an entity no memory names any more goes too (its
    // name or address may have come from this memory alone).
    let entities_removed = tx
        .execute(
            "DELETE FROM entities WHERE workspace = ?1
               AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.entity_seq = entities.seq)",
            [workspace.as_str()],
        )? as u64;
    log_event(
        &tx,
        now,
        EventKind::Purge,
        workspace,
        Some(id),
        actor,
        json!({ "held_removed": held_removed, "entities_removed": entities_removed }),
    )?;
    tx.commit()?;

    let log_emptied = compact(conn)?;
    let residue = residue(conn, file, log_emptied, seq, &content, &hash)?;
    Ok(Some(PurgeReport {
        memory_id: id,
        held_removed,
        residue,
    }))
}

/// Merges the full-text index (dropping deleted terms) and checkpoints the log into the
/// database file, truncating it. Whether the log was emptied: not while another
/// connection reads.
pub(crate) fn compact(conn: &Connection) -> Result<bool, SqliteStoreError> {
    conn.execute(
        "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
        [],
    )?;
    // In memory there is no log; the pragma then answers without doing anything.
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
    Ok(busy == 0)
}

/// Every place the content (or its hash) can still be found.
fn residue(
    conn: &Connection,
    file: Option<&Path>,
    log_emptied: bool,
    seq: i64,
    content: &str,
    hash: &str,
) -> Result<Vec<String>, SqliteStoreError> {
    let mut found = Vec::new();
    let substring = content.chars().count() >= SUBSTRING_MIN_CHARS;
    let matches_text = |text: &str| {
        text.contains(hash) || text == content || (substring && text.contains(content))
    };
    let matches_bytes = |bytes: &[u8]| {
        contains(bytes, hash.as_bytes())
            || bytes == content.as_bytes()
            || (substring && contains(bytes, content.as_bytes()))
    };

    let tables: Vec<String> = {
        let mut statement = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'")?;
        statement
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for table in tables {
        let mut statement =
            conn.prepare(&format!("SELECT * FROM \"{}\"", table.replace('"', "\"\"")))?;
        let columns = statement.column_count();
        let mut rows = statement.query([])?;
        let mut hits = 0usize;
        while let Some(row) = rows.next()? {
            for column in 0..columns {
                let hit = match row.get_ref(column)? {
                    ValueRef::Text(bytes) => std::str::from_utf8(bytes).is_ok_and(matches_text),
                    ValueRef::Blob(bytes) => matches_bytes(bytes),
                    _ => false,
                };
                hits += usize::from(hit);
            }
        }
        if hits > 0 {
            found.push(format!("table {table}: {hits} value(s)"));
        }
    }

    // The index itself: does it still find the purged row by its words?
    let words: Vec<String> = levh_core::text::words(content).take(16).collect();
    if !words.is_empty() {
        let phrase = format!("\"{}\"", words.join(" ").replace('"', "\"\""));
        let still: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ?1 AND rowid = ?2)",
            params![phrase, seq],
            |row| row.get(0),
        )?;
        if still {
            found.push("full-text index still matches the purged row".to_owned());
        }
    }

    if let Some(path) = file {
        // The file's pages are read through SQLite itself (`sqlite_dbpage`, free pages
        // included), never by opening the file: closing a second descriptor of it would
        // drop every POSIX lock this process holds on it, SQLite's included, and leave a
        // server's store unguarded against a restore.
        let mut statement = conn.prepare("SELECT data FROM sqlite_dbpage('main')")?;
        let mut pages = statement.query([])?;
        let mut hits = 0usize;
        while let Some(page) = pages.next()? {
            if let ValueRef::Blob(bytes) = page.get_ref(0)? {
                hits += usize::from(
                    contains(bytes, hash.as_bytes())
                        || (substring && contains(bytes, content.as_bytes())),
                );
            }
        }
        if hits > 0 {
            found.push(format!("file {}: {hits} page(s)", path.display()));
        }
        // The log was checkpointed and cut to nothing unless a reader still needed its
        // frames: then old page images may hold the content until the next checkpoint.
        if !log_emptied {
            found.push(format!(
                "file {}-wal: not emptied (another connection was reading); its old pages go at the next checkpoint",
                path.display()
            ));
        }
    }
    Ok(found)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use levh_core::Store;

    use super::*;
    use crate::SqliteStore;

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
}
