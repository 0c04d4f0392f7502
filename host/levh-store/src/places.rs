//! Text kept outside memories' content and labels — a memory's kind, held candidates'
//! fields, synced items' ids, tokens' labels — read for secret audits and rewritten when
//! their secrets are stripped.

use levh_core::{
    Actor, EventKind, HeldField, HeldId, MemoryId, PlacedText, TextPlace, Timestamp, Workspace,
};
use rusqlite::{Connection, params};
use serde_json::json;

use crate::events::log_event;
use crate::{SqliteStore, SqliteStoreError, rows};

pub(crate) fn texts(
    conn: &Connection,
    workspace: &Workspace,
) -> Result<Vec<PlacedText>, SqliteStoreError> {
    let mut found = Vec::new();
    let space = workspace.as_str();

    let mut statement =
        conn.prepare("SELECT id, kind FROM memories WHERE workspace = ?1 ORDER BY seq")?;
    let mut kinds = statement.query([space])?;
    while let Some(row) = kinds.next()? {
        let id: String = row.get(0)?;
        found.push(PlacedText {
            place: TextPlace::MemoryKind(rows::parse_id(&id)?),
            text: row.get(1)?,
        });
    }

    let mut statement = conn.prepare(
        "SELECT id, content, kind, project, source, metadata FROM held_candidates
             WHERE workspace = ?1 ORDER BY created_at",
    )?;
    let mut held = statement.query([space])?;
    while let Some(row) = held.next()? {
        let id: String = row.get(0)?;
        let id: HeldId = id.parse().map_err(|_| {
            SqliteStoreError::Malformed(format!("held candidate id {id:?} is not an id"))
        })?;
        let fields = [
            (HeldField::Content, 1),
            (HeldField::Kind, 2),
            (HeldField::Project, 3),
            (HeldField::Source, 4),
            (HeldField::Metadata, 5),
        ];
        for (field, column) in fields {
            if let Some(text) = row.get::<_, Option<String>>(column)? {
                found.push(PlacedText {
                    place: TextPlace::Held { id, field },
                    text,
                });
            }
        }
    }

    let mut statement =
        conn.prepare("SELECT connector, source_id FROM sync_items WHERE workspace = ?1")?;
    let mut items = statement.query([space])?;
    while let Some(row) = items.next()? {
        let connector: String = row.get(0)?;
        let source_id: String = row.get(1)?;
        found.push(PlacedText {
            place: TextPlace::SyncedItem {
                connector,
                source_id: source_id.clone(),
            },
            text: source_id,
        });
    }

    let mut statement =
        conn.prepare("SELECT id, label FROM tokens WHERE workspace = ?1 AND label IS NOT NULL")?;
    let mut tokens = statement.query([space])?;
    while let Some(row) = tokens.next()? {
        found.push(PlacedText {
            place: TextPlace::TokenLabel(row.get(0)?),
            text: row.get(1)?,
        });
    }
    Ok(found)
}

pub(crate) fn rewrite(
    tx: &Connection,
    workspace: &Workspace,
    place: &TextPlace,
    text: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    let space = workspace.as_str();
    let (changed, memory): (usize, Option<MemoryId>) = match place {
        TextPlace::MemoryKind(id) => (
            tx.execute(
                "UPDATE memories SET kind = ?3 WHERE workspace = ?1 AND id = ?2",
                params![space, id.to_string(), text],
            )?,
            Some(*id),
        ),
        TextPlace::Held { id, field } => {
            let id = id.to_string();
            let changed = match field {
                HeldField::Content => tx.execute(
                    "UPDATE held_candidates SET content = ?3, content_hash = ?4 WHERE workspace = ?1 AND id = ?2",
                    params![space, id, text, levh_core::text::content_hash(text)],
                ),
                // The other fields are columns of the same names.
                HeldField::Kind | HeldField::Project | HeldField::Source | HeldField::Metadata => {
                    tx.execute(
                        &format!(
                            "UPDATE held_candidates SET {} = ?3 WHERE workspace = ?1 AND id = ?2",
                            field.as_str()
                        ),
                        params![space, id, text],
                    )
                }
            }?;
            (changed, None)
        }
        TextPlace::SyncedItem {
            connector,
            source_id,
        } => (
            tx.execute(
                "UPDATE OR REPLACE sync_items SET source_id = ?4
                 WHERE workspace = ?1 AND connector = ?2 AND source_id = ?3",
                params![space, connector, source_id, text],
            )?,
            None,
        ),
        TextPlace::TokenLabel(id) => (
            tx.execute(
                "UPDATE tokens SET label = ?3 WHERE workspace = ?1 AND id = ?2",
                params![space, id, text],
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

pub(crate) fn rewrite_placed_text(
    store: &SqliteStore,
    workspace: &Workspace,
    place: &TextPlace,
    text: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    let changed = store.write(|tx| rewrite(tx, workspace, place, text, now, actor))?;
    if changed {
        // The old text must leave the log and the index segments too.
        crate::purge::compact(&store.lock())?;
    }
    Ok(changed)
}
