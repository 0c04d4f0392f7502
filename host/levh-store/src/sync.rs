//! Sync state: cursors, item fates, run records.

use levh_core::sync::{ItemOutcome, Retirement, SourceRemoval, SyncReport, SyncedItem};
use levh_core::{Actor, EventKind, HeldClose, HeldStatus, Timestamp, Workspace};
use rusqlite::{Connection, OptionalExtension, params};

use crate::SqliteStoreError;
use crate::events::log_event;
use crate::rows::micros;

pub(crate) fn cursor(
    conn: &Connection,
    workspace: &Workspace,
    connector: &str,
) -> Result<Option<String>, SqliteStoreError> {
    Ok(conn
        .query_row(
            "SELECT cursor FROM sync_state WHERE workspace = ?1 AND connector = ?2",
            params![workspace.as_str(), connector],
            |row| row.get::<_, Option<String>>(0),
        )
        .optional()
        .map(Option::flatten)?)
}

pub(crate) fn save_cursor(
    conn: &Connection,
    workspace: &Workspace,
    connector: &str,
    cursor: Option<&str>,
    now: Timestamp,
) -> Result<(), SqliteStoreError> {
    conn.execute(
        "INSERT INTO sync_state (workspace, connector, cursor, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (workspace, connector) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
        params![workspace.as_str(), connector, cursor, micros(now)],
    )?;
    Ok(())
}

pub(crate) fn item(
    conn: &Connection,
    workspace: &Workspace,
    connector: &str,
    source_id: &str,
) -> Result<Option<SyncedItem>, SqliteStoreError> {
    let row: Option<(String, Option<String>, Option<String>, String)> = conn
        .prepare_cached(
            "SELECT content_hash, memory_id, held_id, verdict FROM sync_items
             WHERE workspace = ?1 AND connector = ?2 AND source_id = ?3",
        )?
        .query_row(params![workspace.as_str(), connector, source_id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })
        .optional()?;
    let Some((content_hash, memory_id, held_id, verdict)) = row else {
        return Ok(None);
    };
    let parse_memory = |text: String| {
        text.parse()
            .map_err(|_| SqliteStoreError::Malformed(format!("bad memory id {text:?}")))
    };
    let parse_held = |text: String| {
        text.parse()
            .map_err(|_| SqliteStoreError::Malformed(format!("bad held id {text:?}")))
    };
    Ok(Some(SyncedItem {
        content_hash,
        memory_id: memory_id.map(parse_memory).transpose()?,
        held_id: held_id.map(parse_held).transpose()?,
        verdict: ItemOutcome::parse(&verdict).ok_or_else(|| {
            SqliteStoreError::Malformed(format!("bad sync item outcome {verdict:?}"))
        })?,
    }))
}

pub(crate) fn record_item(
    conn: &Connection,
    workspace: &Workspace,
    connector: &str,
    source_id: &str,
    item: &SyncedItem,
    now: Timestamp,
) -> Result<(), SqliteStoreError> {
    conn.prepare_cached(
        "INSERT INTO sync_items (workspace, connector, source_id, content_hash, memory_id, held_id, verdict, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (workspace, connector, source_id) DO UPDATE SET content_hash = excluded.content_hash,
             memory_id = excluded.memory_id, held_id = excluded.held_id, verdict = excluded.verdict,
             updated_at = excluded.updated_at",
    )?
    .execute(params![
            workspace.as_str(),
            connector,
            source_id,
            item.content_hash,
            item.memory_id.map(|id| id.to_string()),
            item.held_id.map(|id| id.to_string()),
        item.verdict.as_str(),
        micros(now),
    ])?;
    Ok(())
}

pub(crate) fn save_run(
    conn: &Connection,
    workspace: &Workspace,
    report: &SyncReport,
    actor: &Actor,
) -> Result<(), SqliteStoreError> {
    let started = report.started_at.map(micros).unwrap_or_default();
    conn.execute(
        "INSERT INTO sync_runs (id, workspace, connector, status, started_at, finished_at, report)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at,
             report = excluded.report",
        params![
            report.run_id,
            workspace.as_str(),
            report.connector,
            report.status.as_str(),
            started,
            report.finished_at.map(micros),
            serde_json::to_string(report)?,
        ],
    )?;
    if let Some(finished) = report.finished_at {
        let detail = serde_json::json!({
            "run_id": report.run_id, "connector": report.connector, "status": report.status,
            "fetched": report.fetched, "admitted": report.admitted, "redacted": report.redacted,
            "held": report.held, "rejected": report.rejected, "updated": report.updated, "failed": report.failed,
        });
        log_event(
            conn,
            finished,
            EventKind::SyncRun,
            workspace,
            None,
            actor,
            detail,
        )?;
    }
    Ok(())
}

pub(crate) fn run(
    conn: &Connection,
    workspace: &Workspace,
    id: &str,
) -> Result<Option<SyncReport>, SqliteStoreError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT report FROM sync_runs WHERE workspace = ?1 AND id = ?2",
            params![workspace.as_str(), id],
            |row| row.get(0),
        )
        .optional()?;
    text.map(|text| serde_json::from_str(&text).map_err(SqliteStoreError::from))
        .transpose()
}

pub(crate) fn runs(
    conn: &Connection,
    workspace: &Workspace,
    connector: Option<&str>,
    limit: usize,
) -> Result<Vec<SyncReport>, SqliteStoreError> {
    let mut statement = conn.prepare(
        "SELECT report FROM sync_runs WHERE workspace = ?1 AND (?2 IS NULL OR connector = ?2)
             ORDER BY started_at DESC, id DESC LIMIT ?3",
    )?;
    let rows = statement.query_map(
        params![workspace.as_str(), connector, limit as i64],
        |row| row.get::<_, String>(0),
    )?;
    let mut reports = Vec::new();
    for row in rows {
        let text = row?;
        reports.push(serde_json::from_str(&text)?);
    }
    Ok(reports)
}

pub(crate) fn mark_listed(
    tx: &Connection,
    workspace: &Workspace,
    connector: &str,
    listing: &str,
    source_ids: &[String],
) -> Result<(), SqliteStoreError> {
    // Written only when it differs: a listing names the same items run after run.
    let mut statement = tx.prepare_cached(
        "UPDATE sync_items SET listing = ?3
         WHERE workspace = ?1 AND connector = ?2 AND source_id = ?4 AND listing IS NOT ?3",
    )?;
    for source_id in source_ids {
        statement.execute(params![workspace.as_str(), connector, listing, source_id])?;
    }
    Ok(())
}

pub(crate) fn listed_items(
    conn: &Connection,
    workspace: &Workspace,
    connector: &str,
    listing: &str,
) -> Result<Vec<String>, SqliteStoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT source_id FROM sync_items WHERE workspace = ?1 AND connector = ?2 AND listing = ?3",
    )?;
    let ids = statement
        .query_map(params![workspace.as_str(), connector, listing], |row| {
            row.get(0)
        })?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(ids)
}

pub(crate) fn retire_items(
    tx: &Connection,
    workspace: &Workspace,
    connector: &str,
    removals: &[SourceRemoval],
    run_id: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<Vec<Retirement>, SqliteStoreError> {
    let mut retired = Vec::new();
    for removal in removals {
        let Some(known) = item(tx, workspace, connector, &removal.source_id)? else {
            continue;
        };
        let mut retirement = Retirement {
            source_id: removal.source_id.clone(),
            reason: removal.reason.clone(),
            memory_id: None,
            kept_pinned: None,
            held_id: None,
        };
        if let Some(id) = known.memory_id {
            let pinned: Option<bool> = tx
                .query_row(
                    "SELECT pinned FROM memories
                     WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
                    params![workspace.as_str(), id.to_string()],
                    |row| row.get(0),
                )
                .optional()?;
            match pinned {
                Some(true) => retirement.kept_pinned = Some(id),
                Some(false) => {
                    let detail = serde_json::json!({
                        "retired_by_sync": run_id,
                        "connector": connector,
                        "source_id": removal.source_id,
                        "reason": removal.reason,
                    });
                    crate::writes::forget_saying(tx, workspace, id, now, actor, detail)?;
                    retirement.memory_id = Some(id);
                }
                None => {}
            }
        }
        if let Some(held) = known.held_id
            && crate::held::close(tx, workspace, held, HeldStatus::Discarded, None, now, actor)?
                == HeldClose::Closed
        {
            retirement.held_id = Some(held);
        }
        tx.execute(
            "DELETE FROM sync_items WHERE workspace = ?1 AND connector = ?2 AND source_id = ?3",
            params![workspace.as_str(), connector, removal.source_id],
        )?;
        retired.push(retirement);
    }
    Ok(retired)
}
