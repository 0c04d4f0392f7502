//! Sync state: connector cursors and what became of each synced item. (Listings, run
//! records and retirements are not on PostgreSQL yet.)

use levh_core::sync::{ItemOutcome, SyncedItem};
use levh_core::{Timestamp, Workspace};
use postgres::GenericClient;

use crate::PostgresStoreError;
use crate::rows::{column, micros};

pub(crate) fn cursor(
    conn: &mut impl GenericClient,
    workspace: &Workspace,
    connector: &str,
) -> Result<Option<String>, PostgresStoreError> {
    let row = conn.query_opt(
        "SELECT cursor FROM sync_state WHERE workspace = $1 AND connector = $2",
        &[&workspace.as_str(), &connector],
    )?;
    Ok(match row {
        Some(row) => column(&row, 0)?,
        None => None,
    })
}

pub(crate) fn save_cursor(
    conn: &mut impl GenericClient,
    workspace: &Workspace,
    connector: &str,
    cursor: Option<&str>,
    now: Timestamp,
) -> Result<(), PostgresStoreError> {
    conn.execute(
        "INSERT INTO sync_state (workspace, connector, cursor, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace, connector) DO UPDATE
             SET cursor = excluded.cursor, updated_at = excluded.updated_at",
        &[&workspace.as_str(), &connector, &cursor, &micros(now)],
    )?;
    Ok(())
}

pub(crate) fn item(
    conn: &mut impl GenericClient,
    workspace: &Workspace,
    connector: &str,
    source_id: &str,
) -> Result<Option<SyncedItem>, PostgresStoreError> {
    let Some(row) = conn.query_opt(
        "SELECT content_hash, memory_id, held_id, verdict FROM sync_items
          WHERE workspace = $1 AND connector = $2 AND source_id = $3",
        &[&workspace.as_str(), &connector, &source_id],
    )?
    else {
        return Ok(None);
    };
    let memory_id: Option<String> = column(&row, 1)?;
    let held_id: Option<String> = column(&row, 2)?;
    let verdict: String = column(&row, 3)?;
    Ok(Some(SyncedItem {
        content_hash: column(&row, 0)?,
        memory_id: memory_id
            .map(|text| {
                text.parse()
                    .map_err(|_| PostgresStoreError::Corrupt(format!("bad memory id {text:?}")))
            })
            .transpose()?,
        held_id: held_id
            .map(|text| {
                text.parse()
                    .map_err(|_| PostgresStoreError::Corrupt(format!("bad held id {text:?}")))
            })
            .transpose()?,
        verdict: ItemOutcome::parse(&verdict).ok_or_else(|| {
            PostgresStoreError::Corrupt(format!("bad sync item outcome {verdict:?}"))
        })?,
    }))
}

pub(crate) fn record_item(
    conn: &mut impl GenericClient,
    workspace: &Workspace,
    connector: &str,
    source_id: &str,
    item: &SyncedItem,
    now: Timestamp,
) -> Result<(), PostgresStoreError> {
    conn.execute(
        "INSERT INTO sync_items (workspace, connector, source_id, content_hash, memory_id, held_id, verdict, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (workspace, connector, source_id) DO UPDATE SET content_hash = excluded.content_hash,
             memory_id = excluded.memory_id, held_id = excluded.held_id, verdict = excluded.verdict,
             updated_at = excluded.updated_at",
        &[
            &workspace.as_str(),
            &connector,
            &source_id,
            &item.content_hash,
            &item.memory_id.map(|id| id.to_string()),
            &item.held_id.map(|id| id.to_string()),
            &item.verdict.as_str(),
            &micros(now),
        ],
    )?;
    Ok(())
}
