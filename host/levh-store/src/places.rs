//! Text kept outside memories' content and labels — a memory's kind, held candidates'
//! fields, synced items' ids, tokens' labels — read for secret audits and rewritten when
//! their secrets are stripped.

use levh_core::{
    Actor, EventKind, HeldField, HeldId, MemoryId, PlacedText, StoreError, TextPlace, Timestamp,
    Workspace,
};
use rusqlite::{Connection, params};
use serde_json::json;

use crate::{log_event, rows, sqlite};

pub(crate) fn texts(
    conn: &Connection,
    workspace: &Workspace,
) -> Result<Vec<PlacedText>, StoreError> {
    let mut found = Vec::new();
    let space = workspace.as_str();

    let mut statement = conn
        .prepare("SELECT id, kind FROM memories WHERE workspace = ?1 ORDER BY seq")
        .map_err(sqlite)?;
    let mut kinds = statement.query([space]).map_err(sqlite)?;
    while let Some(row) = kinds.next().map_err(sqlite)? {
        let id: String = row.get(0).map_err(sqlite)?;
        found.push(PlacedText {
            place: TextPlace::MemoryKind(rows::parse_id(&id)?),
            text: row.get(1).map_err(sqlite)?,
        });
    }

    let mut statement = conn
        .prepare(
            "SELECT id, content, kind, project, source, metadata FROM held_candidates
             WHERE workspace = ?1 ORDER BY created_at",
        )
        .map_err(sqlite)?;
    let mut held = statement.query([space]).map_err(sqlite)?;
    while let Some(row) = held.next().map_err(sqlite)? {
        let id: String = row.get(0).map_err(sqlite)?;
        let id: HeldId = id
            .parse()
            .map_err(|_| StoreError::new(format!("held candidate id {id:?} is not an id")))?;
        let fields = [
            (HeldField::Content, 1),
            (HeldField::Kind, 2),
            (HeldField::Project, 3),
            (HeldField::Source, 4),
            (HeldField::Metadata, 5),
        ];
        for (field, column) in fields {
            if let Some(text) = row.get::<_, Option<String>>(column).map_err(sqlite)? {
                found.push(PlacedText {
                    place: TextPlace::Held { id, field },
                    text,
                });
            }
        }
    }

    let mut statement = conn
        .prepare("SELECT connector, source_id FROM sync_items WHERE workspace = ?1")
        .map_err(sqlite)?;
    let mut items = statement.query([space]).map_err(sqlite)?;
    while let Some(row) = items.next().map_err(sqlite)? {
        let connector: String = row.get(0).map_err(sqlite)?;
        let source_id: String = row.get(1).map_err(sqlite)?;
        found.push(PlacedText {
            place: TextPlace::SyncedItem {
                connector,
                source_id: source_id.clone(),
            },
            text: source_id,
        });
    }

    let mut statement = conn
        .prepare("SELECT id, label FROM tokens WHERE workspace = ?1 AND label IS NOT NULL")
        .map_err(sqlite)?;
    let mut tokens = statement.query([space]).map_err(sqlite)?;
    while let Some(row) = tokens.next().map_err(sqlite)? {
        found.push(PlacedText {
            place: TextPlace::TokenLabel(row.get(0).map_err(sqlite)?),
            text: row.get(1).map_err(sqlite)?,
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
) -> Result<bool, StoreError> {
    let space = workspace.as_str();
    let (changed, memory): (usize, Option<MemoryId>) = match place {
        TextPlace::MemoryKind(id) => (
            tx.execute(
                "UPDATE memories SET kind = ?3 WHERE workspace = ?1 AND id = ?2",
                params![space, id.to_string(), text],
            )
            .map_err(sqlite)?,
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
            }
            .map_err(sqlite)?;
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
            )
            .map_err(sqlite)?,
            None,
        ),
        TextPlace::TokenLabel(id) => (
            tx.execute(
                "UPDATE tokens SET label = ?3 WHERE workspace = ?1 AND id = ?2",
                params![space, id, text],
            )
            .map_err(sqlite)?,
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
        )
        .map_err(sqlite)?;
    }
    Ok(changed > 0)
}
