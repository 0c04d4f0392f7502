//! Erasing a memory and every copy of its content that levh keeps, then looking for what
//! is left.
//!
//! What "no residue" can mean on PostgreSQL is narrower than on SQLite, where levh owns the
//! file: after the delete commits, the old row versions stay in the table's pages (dead,
//! unreadable through SQL) until `VACUUM` reclaims them and later writes overwrite them;
//! the write-ahead log holds the row until its segments are recycled, and so do the
//! server's replicas, WAL archives and backups until they age out. None of those is
//! levh's to erase. The scan below covers what levh can check — every live row of every
//! table of the store (attached files included), for the content and its hash — and the
//! report says only that.

use crate::connection::Db;
use levh_core::{Actor, EventKind, MemoryId, PurgeReport, Timestamp, Workspace};
use serde_json::json;

use crate::events::log_event;
use crate::rows::column;
use crate::{PostgresStore, PostgresStoreError};

/// Content shorter than this is only matched as a whole value, never as a substring: a
/// short phrase like "use tabs" may legitimately occur inside other memories.
const SUBSTRING_MIN_CHARS: usize = 16;

impl PostgresStore {
    pub(crate) fn erase(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<PurgeReport>, PostgresStoreError> {
        let erased = self.write(|tx| {
            let Some(row) = tx.query_opt(
                "SELECT seq, content, content_hash, held_id FROM memories
                  WHERE workspace = $1 AND id = $2 FOR UPDATE",
                &[&workspace.as_str(), &id.to_string()],
            )?
            else {
                return Ok(None);
            };
            let seq: i64 = column(&row, 0)?;
            let content: String = column(&row, 1)?;
            let hash: String = column(&row, 2)?;
            let held_id: Option<String> = column(&row, 3)?;
            let held_removed = tx.execute(
                "DELETE FROM held_candidates
                  WHERE workspace = $1 AND (content_hash = $2 OR memory_id = $3 OR id = $4)",
                &[&workspace.as_str(), &hash, &id.to_string(), &held_id],
            )?;
            let files = crate::attachments::files_of(tx, seq)?;
            // Its vector, keys, entity links, key, schedule, attachments and the rest go by
            // cascade; an attached file goes with the last attachment naming it.
            tx.execute("DELETE FROM memories WHERE seq = $1", &[&seq])?;
            crate::attachments::remove_unreferenced(tx, &files)?;
            // An entity no memory names any more goes too (its name or address may have
            // come from this memory alone).
            let entities_removed = tx.execute(
                "DELETE FROM entities e WHERE workspace = $1
                   AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.entity_seq = e.seq)",
                &[&workspace.as_str()],
            )?;
            log_event(
                tx,
                now,
                EventKind::Purge,
                workspace,
                Some(id),
                actor,
                json!({ "held_removed": held_removed, "entities_removed": entities_removed }),
            )?;
            Ok(Some((content, hash, held_removed)))
        })?;
        let Some((content, hash, held_removed)) = erased else {
            return Ok(None);
        };
        Ok(Some(PurgeReport {
            memory_id: id,
            held_removed,
            residue: self.residue(&content, &hash)?,
        }))
    }

    /// Every table (and how many of its values) where the content or its hash can still
    /// be read: each text and JSON column of the store's tables, scanned whole.
    fn residue(&self, content: &str, hash: &str) -> Result<Vec<String>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let columns = connection.query(
            "SELECT c.table_name::text, c.column_name::text, c.data_type = 'bytea'
               FROM information_schema.columns c
               JOIN information_schema.tables t
                 ON t.table_schema = c.table_schema AND t.table_name = c.table_name
              WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
                AND c.data_type IN ('text', 'jsonb', 'json', 'character varying', 'bytea')
              ORDER BY 1, 2",
            &[],
        )?;
        let substring = content.chars().count() >= SUBSTRING_MIN_CHARS;
        let mut tables: Vec<(String, Vec<(String, bool)>)> = Vec::new();
        for row in &columns {
            let (table, name, binary): (String, String, bool) =
                (column(row, 0)?, column(row, 1)?, column(row, 2)?);
            match tables.last_mut() {
                Some((last, names)) if *last == table => names.push((name, binary)),
                _ => tables.push((table, vec![(name, binary)])),
            }
        }
        let mut found = Vec::new();
        for (table, names) in tables {
            let hits = names
                .iter()
                .map(|(name, binary)| {
                    let name = format!("\"{}\"", name.replace('"', "\"\""));
                    if *binary {
                        // Bytes (an attached file): the content's or the hash's UTF-8 in them.
                        format!(
                            "(CASE WHEN position(convert_to($1, 'UTF8') IN {name}) > 0
                                     OR {name} = convert_to($2, 'UTF8')
                                     OR ($3 AND position(convert_to($2, 'UTF8') IN {name}) > 0)
                                   THEN 1 ELSE 0 END)"
                        )
                    } else {
                        let value = format!("{name}::text");
                        format!(
                            "(CASE WHEN strpos({value}, $1) > 0 OR {value} = $2
                                     OR ($3 AND strpos({value}, $2) > 0) THEN 1 ELSE 0 END)"
                        )
                    }
                })
                .collect::<Vec<_>>()
                .join(" + ");
            let sql = format!(
                "SELECT coalesce(sum({hits}), 0)::bigint FROM \"{}\"",
                table.replace('"', "\"\"")
            );
            let hits: i64 = connection
                .query_one(&sql, &[&hash, &content, &substring])?
                .get(0);
            if hits > 0 {
                found.push(format!("table {table}: {hits} value(s)"));
            }
        }
        Ok(found)
    }
}
