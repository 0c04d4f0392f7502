//! Attached files: each file content-addressed in `attachment_files` (migration 0003),
//! one row per attachment linking its text memory to the file and to the memory it is
//! attached to. A purge of either memory takes the row, and the file with its last row.

use levh_core::{Attachment, MemoryId, Workspace};
use postgres::Row;

use crate::connection::{Db, Tx};

use crate::rows::{column, parse_id};
use crate::{PostgresStore, PostgresStoreError};

const COLUMNS: &str = "m.id, o.id, a.sha256, a.name, a.media_type, a.bytes
     FROM attachments a
     JOIN memories m ON m.seq = a.memory_seq
     JOIN memories o ON o.seq = a.attached_to_seq";

fn read(row: &Row) -> Result<Attachment, PostgresStoreError> {
    let bytes: i64 = column(row, 5)?;
    Ok(Attachment {
        memory_id: parse_id(column(row, 0)?)?,
        attached_to: parse_id(column(row, 1)?)?,
        sha256: column(row, 2)?,
        name: column(row, 3)?,
        media_type: column(row, 4)?,
        bytes: u64::try_from(bytes).unwrap_or(0),
    })
}

/// The digests of the files attached to or by a memory.
pub(crate) fn files_of(tx: &mut Tx<'_>, seq: i64) -> Result<Vec<String>, PostgresStoreError> {
    let rows = tx.query(
        "SELECT sha256 FROM attachments WHERE memory_seq = $1 OR attached_to_seq = $1",
        &[&seq],
    )?;
    rows.iter().map(|row| column(row, 0)).collect()
}

/// Deletes those of `digests` no attachment names any more.
pub(crate) fn remove_unreferenced(
    tx: &mut Tx<'_>,
    digests: &[String],
) -> Result<u64, PostgresStoreError> {
    if digests.is_empty() {
        return Ok(0);
    }
    Ok(tx.execute(
        "DELETE FROM attachment_files f WHERE f.sha256 = ANY($1)
            AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.sha256 = f.sha256)",
        &[&digests],
    )?)
}

impl PostgresStore {
    /// Keeps the file and links it, in one transaction; false (nothing kept) when either
    /// memory is not live.
    pub(crate) fn attach(
        &self,
        workspace: &Workspace,
        attachment: &Attachment,
        file: &[u8],
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| {
            let mut seq = |id: MemoryId| -> Result<Option<i64>, PostgresStoreError> {
                tx.query_opt(
                    "SELECT seq FROM memories WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL
                     FOR SHARE",
                    &[&workspace.as_str(), &id.to_string()],
                )?
                .map(|row| column(&row, 0))
                .transpose()
            };
            let (Some(memory), Some(owner)) =
                (seq(attachment.memory_id)?, seq(attachment.attached_to)?)
            else {
                return Ok(false);
            };
            tx.execute(
                "INSERT INTO attachment_files (sha256, bytes) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&attachment.sha256, &file],
            )?;
            tx.execute(
                "INSERT INTO attachments (memory_seq, attached_to_seq, sha256, name, media_type, bytes)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &memory,
                    &owner,
                    &attachment.sha256,
                    &attachment.name,
                    &attachment.media_type,
                    &i64::try_from(attachment.bytes).unwrap_or(i64::MAX),
                ],
            )?;
            Ok(true)
        })
    }

    pub(crate) fn attachments_of(
        &self,
        workspace: &Workspace,
        owner: MemoryId,
    ) -> Result<Vec<Attachment>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!(
                "SELECT {COLUMNS} WHERE o.workspace = $1 AND o.id = $2 AND m.forgotten_at IS NULL
                 ORDER BY m.seq"
            ),
            &[&workspace.as_str(), &owner.to_string()],
        )?;
        rows.iter().map(read).collect()
    }

    pub(crate) fn attachment_of(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Option<Attachment>, PostgresStoreError> {
        self.connection()?
            .query_opt(
                &format!("SELECT {COLUMNS} WHERE m.workspace = $1 AND m.id = $2"),
                &[&workspace.as_str(), &memory.to_string()],
            )?
            .map(|row| read(&row))
            .transpose()
    }

    /// The attached file of this digest, if kept (tests, and a later route serving it).
    pub fn attachment_file(&self, sha256: &str) -> Result<Option<Vec<u8>>, PostgresStoreError> {
        self.connection()?
            .query_opt(
                "SELECT bytes FROM attachment_files WHERE sha256 = $1",
                &[&sha256],
            )?
            .map(|row| column(&row, 0))
            .transpose()
    }
}
