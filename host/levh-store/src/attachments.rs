//! Attached files (migration 0015): each file content-addressed in `attachments/` beside
//! the database, one row per attachment linking its text memory to the file and to the
//! memory it is attached to.

use std::path::{Path, PathBuf};

use levh_core::{Attachment, MemoryId, Workspace};
use rusqlite::{OptionalExtension, params};

use crate::rows::parse_id;
use crate::{SqliteStore, SqliteStoreError};

/// Where the files of the database at `database` live.
pub(crate) fn directory(database: &Path) -> PathBuf {
    database.with_file_name("attachments")
}

/// The path of the file with this digest: two levels, so no directory holds them all.
pub(crate) fn file_path(dir: &Path, sha256: &str) -> PathBuf {
    dir.join(sha256.get(..2).unwrap_or("00")).join(sha256)
}

/// Writes the file once (a file with that digest is already this file), through a
/// temporary file renamed into place: a crash never leaves half a file under the name.
pub(crate) fn put_file(dir: &Path, sha256: &str, bytes: &[u8]) -> std::io::Result<()> {
    let path = file_path(dir, sha256);
    if path.exists() {
        return Ok(());
    }
    let parent = path.parent().expect("a file path has a directory");
    std::fs::create_dir_all(parent)?;
    let temporary = parent.join(format!(".{sha256}.partial"));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, &path)
}

pub(crate) fn record(
    store: &SqliteStore,
    workspace: &Workspace,
    attachment: &Attachment,
) -> Result<bool, SqliteStoreError> {
    store.write(|tx| {
        let seq = |id: MemoryId| -> rusqlite::Result<Option<i64>> {
            tx.query_row(
                "SELECT seq FROM memories WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
                params![workspace.as_str(), id.to_string()],
                |row| row.get(0),
            )
            .optional()
        };
        let (Some(memory), Some(owner)) = (seq(attachment.memory_id)?, seq(attachment.attached_to)?)
        else {
            return Ok(false);
        };
        tx.execute(
            "INSERT INTO attachments (memory_seq, attached_to_seq, sha256, name, media_type, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                memory,
                owner,
                attachment.sha256,
                attachment.name,
                attachment.media_type,
                attachment.bytes as i64
            ],
        )?;
        Ok(true)
    })
}

const COLUMNS: &str = "m.id, o.id, a.sha256, a.name, a.media_type, a.bytes
     FROM attachments a
     JOIN memories m ON m.seq = a.memory_seq
     JOIN memories o ON o.seq = a.attached_to_seq";

type Row = (String, String, String, String, String, i64);

fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ))
}

fn parsed(rows: Vec<Row>) -> Result<Vec<Attachment>, SqliteStoreError> {
    rows.into_iter()
        .map(|(memory, owner, sha256, name, media_type, bytes)| {
            Ok(Attachment {
                memory_id: parse_id(&memory)?,
                attached_to: parse_id(&owner)?,
                sha256,
                name,
                media_type,
                bytes: u64::try_from(bytes).unwrap_or(0),
            })
        })
        .collect()
}

/// The attachments of `owner` (live ones), oldest first.
pub(crate) fn of_owner(
    store: &SqliteStore,
    workspace: &Workspace,
    owner: MemoryId,
) -> Result<Vec<Attachment>, SqliteStoreError> {
    let conn = store.read();
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} WHERE o.workspace = ?1 AND o.id = ?2 AND m.forgotten_at IS NULL
             ORDER BY m.seq"
        ))?
        .query_map(params![workspace.as_str(), owner.to_string()], read)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    parsed(rows)
}

/// The attachment whose text memory is `memory`, if it is one.
pub(crate) fn by_memory(
    store: &SqliteStore,
    workspace: &Workspace,
    memory: MemoryId,
) -> Result<Option<Attachment>, SqliteStoreError> {
    let conn = store.read();
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} WHERE m.workspace = ?1 AND m.id = ?2"
        ))?
        .query_map(params![workspace.as_str(), memory.to_string()], read)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(parsed(rows)?.pop())
}

/// The digests of the files `memory` holds (as the attachment or as its owner).
pub(crate) fn files_of(
    conn: &rusqlite::Connection,
    workspace: &Workspace,
    memory: MemoryId,
) -> Result<Vec<String>, SqliteStoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT a.sha256 FROM attachments a JOIN memories m
                ON m.seq = a.memory_seq OR m.seq = a.attached_to_seq
              WHERE m.workspace = ?1 AND m.id = ?2",
        )?
        .query_map(params![workspace.as_str(), memory.to_string()], |row| {
            row.get(0)
        })?
        .collect::<rusqlite::Result<Vec<String>>>()?)
}

/// Deletes the files of `digests` that no attachment names any more. Returns those that
/// could not be deleted (residue), by path.
pub(crate) fn remove_unreferenced(
    conn: &rusqlite::Connection,
    dir: &Path,
    digests: &[String],
) -> Result<Vec<String>, SqliteStoreError> {
    let mut left = Vec::new();
    for sha in digests {
        let in_use: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM attachments WHERE sha256 = ?1)",
            [sha],
            |row| row.get(0),
        )?;
        let path = file_path(dir, sha);
        if !in_use && path.exists() && std::fs::remove_file(&path).is_err() {
            left.push(format!("attached file {}", path.display()));
        }
    }
    Ok(left)
}
