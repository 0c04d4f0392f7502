//! Texts kept outside memories' content and labels — a memory's kind, a held candidate's
//! fields, a synced item's id, a token's label — read for secret audits and rewritten when
//! one holds a secret.

use crate::connection::{Db, Tx};
use levh_core::{
    Actor, EventKind, HeldField, HeldId, MemoryId, PlacedText, TextPlace, Timestamp, Workspace,
};
use serde_json::json;

use crate::events::log_event;
use crate::rows::{column, parse_id};
use crate::{PostgresStore, PostgresStoreError};

impl PostgresStore {
    pub(crate) fn texts(
        &self,
        workspace: &Workspace,
    ) -> Result<Vec<PlacedText>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let space = workspace.as_str();
        let mut found = Vec::new();
        for row in connection.query(
            "SELECT id, kind FROM memories WHERE workspace = $1 ORDER BY seq",
            &[&space],
        )? {
            found.push(PlacedText {
                place: TextPlace::MemoryKind(parse_id(column(&row, 0)?)?),
                text: column(&row, 1)?,
            });
        }
        // Metadata as JSON text (PostgreSQL's rendering of it: `{"a": 1}`).
        for row in connection.query(
            "SELECT id, content, kind, project, source, metadata::text FROM held_candidates
              WHERE workspace = $1 ORDER BY created_at",
            &[&space],
        )? {
            let id: &str = column(&row, 0)?;
            let id: HeldId = id.parse().map_err(|_| {
                PostgresStoreError::Corrupt(format!("held candidate id {id:?} is not an id"))
            })?;
            let fields = [
                (HeldField::Content, 1),
                (HeldField::Kind, 2),
                (HeldField::Project, 3),
                (HeldField::Source, 4),
                (HeldField::Metadata, 5),
            ];
            for (field, index) in fields {
                if let Some(text) = column::<Option<String>>(&row, index)? {
                    found.push(PlacedText {
                        place: TextPlace::Held { id, field },
                        text,
                    });
                }
            }
        }
        for row in connection.query(
            "SELECT connector, source_id FROM sync_items WHERE workspace = $1",
            &[&space],
        )? {
            let source_id: String = column(&row, 1)?;
            found.push(PlacedText {
                place: TextPlace::SyncedItem {
                    connector: column(&row, 0)?,
                    source_id: source_id.clone(),
                },
                text: source_id,
            });
        }
        for row in connection.query(
            "SELECT id, label FROM tokens WHERE workspace = $1 AND label IS NOT NULL",
            &[&space],
        )? {
            found.push(PlacedText {
                place: TextPlace::TokenLabel(column(&row, 0)?),
                text: column(&row, 1)?,
            });
        }
        Ok(found)
    }

    pub(crate) fn rewrite_text(
        &self,
        workspace: &Workspace,
        place: &TextPlace,
        text: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| rewrite(tx, workspace, place, text, now, actor))
    }
}

fn rewrite(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    place: &TextPlace,
    text: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, PostgresStoreError> {
    let space = workspace.as_str();
    let (changed, memory): (u64, Option<MemoryId>) = match place {
        TextPlace::MemoryKind(id) => (
            tx.execute(
                "UPDATE memories SET kind = $3 WHERE workspace = $1 AND id = $2",
                &[&space, &id.to_string(), &text],
            )?,
            Some(*id),
        ),
        TextPlace::Held { id, field } => {
            let id = id.to_string();
            let changed = match field {
                HeldField::Content => tx.execute(
                    "UPDATE held_candidates SET content = $3, content_hash = $4
                      WHERE workspace = $1 AND id = $2",
                    &[&space, &id, &text, &levh_core::text::content_hash(text)],
                )?,
                HeldField::Metadata => tx.execute(
                    "UPDATE held_candidates SET metadata = $3::text::jsonb WHERE workspace = $1 AND id = $2",
                    &[&space, &id, &text],
                )?,
                HeldField::Kind | HeldField::Project | HeldField::Source => tx.execute(
                    &format!(
                        "UPDATE held_candidates SET {} = $3 WHERE workspace = $1 AND id = $2",
                        field.as_str()
                    ),
                    &[&space, &id, &text],
                )?,
            };
            (changed, None)
        }
        TextPlace::SyncedItem {
            connector,
            source_id,
        } => {
            // As SQLite's `UPDATE OR REPLACE`: an item already under the new id gives way.
            if text != source_id {
                tx.execute(
                    "DELETE FROM sync_items WHERE workspace = $1 AND connector = $2 AND source_id = $3
                        AND EXISTS (SELECT 1 FROM sync_items o
                                     WHERE o.workspace = $1 AND o.connector = $2 AND o.source_id = $4)",
                    &[&space, connector, &text, source_id],
                )?;
            }
            (
                tx.execute(
                    "UPDATE sync_items SET source_id = $4
                      WHERE workspace = $1 AND connector = $2 AND source_id = $3",
                    &[&space, connector, source_id, &text],
                )?,
                None,
            )
        }
        TextPlace::TokenLabel(id) => (
            tx.execute(
                "UPDATE tokens SET label = $3 WHERE workspace = $1 AND id = $2",
                &[&space, id, &text],
            )?,
            None,
        ),
    };
    if changed > 0 {
        log_event(
            tx,
            now,
            EventKind::Redact,
            workspace,
            memory,
            actor,
            json!({ "place": place.to_string() }),
        )?;
    }
    Ok(changed > 0)
}
