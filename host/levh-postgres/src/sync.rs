//! Sync state: connector cursors, what became of each synced item, which full listing
//! last named it, run records, and the retirement of items gone from their source.

use crate::connection::{Db, Tx};
use levh_core::sync::{ItemOutcome, Retirement, SourceRemoval, SyncReport, SyncedItem};
use levh_core::{Actor, EventKind, HeldClose, HeldStatus, Timestamp, Workspace};

use crate::query::limit;
use crate::rows::{column, micros};
use crate::{PostgresStore, PostgresStoreError};

pub(crate) fn cursor(
    conn: &mut impl Db,
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
    conn: &mut impl Db,
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
    conn: &mut impl Db,
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
    conn: &mut impl Db,
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

impl PostgresStore {
    /// Creates or updates a run record; a finished run is also logged as an event.
    pub(crate) fn save_run(
        &self,
        workspace: &Workspace,
        report: &SyncReport,
        actor: &Actor,
    ) -> Result<(), PostgresStoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO sync_runs (id, workspace, connector, status, started_at, finished_at, report)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (id) DO UPDATE SET status = excluded.status,
                     finished_at = excluded.finished_at, report = excluded.report",
                &[
                    &report.run_id,
                    &workspace.as_str(),
                    &report.connector,
                    &report.status.as_str(),
                    &report.started_at.map(micros).unwrap_or_default(),
                    &report.finished_at.map(micros),
                    &serde_json::to_value(report)?,
                ],
            )?;
            if let Some(finished) = report.finished_at {
                let detail = serde_json::json!({
                    "run_id": report.run_id, "connector": report.connector, "status": report.status,
                    "fetched": report.fetched, "admitted": report.admitted, "redacted": report.redacted,
                    "held": report.held, "rejected": report.rejected, "updated": report.updated,
                    "failed": report.failed,
                });
                crate::events::log_event(
                    tx,
                    finished,
                    EventKind::SyncRun,
                    workspace,
                    None,
                    actor,
                    detail,
                )?;
            }
            Ok(())
        })
    }

    pub(crate) fn run(
        &self,
        workspace: &Workspace,
        id: &str,
    ) -> Result<Option<SyncReport>, PostgresStoreError> {
        self.connection()?
            .query_opt(
                "SELECT report FROM sync_runs WHERE workspace = $1 AND id = $2",
                &[&workspace.as_str(), &id],
            )?
            .map(|row| Ok(serde_json::from_value(column(&row, 0)?)?))
            .transpose()
    }

    pub(crate) fn runs(
        &self,
        workspace: &Workspace,
        connector: Option<&str>,
        count: usize,
    ) -> Result<Vec<SyncReport>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT report FROM sync_runs WHERE workspace = $1 AND ($2::text IS NULL OR connector = $2)
              ORDER BY started_at DESC, id COLLATE \"C\" DESC LIMIT $3",
            &[&workspace.as_str(), &connector, &limit(count)],
        )?;
        rows.iter()
            .map(|row| Ok(serde_json::from_value(column(row, 0)?)?))
            .collect()
    }

    /// Records that the full listing `listing` named these items (written only where it
    /// differs: a listing names the same items run after run).
    pub(crate) fn mark_listed(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
        source_ids: &[String],
    ) -> Result<(), PostgresStoreError> {
        self.connection()?.execute(
            "UPDATE sync_items SET listing = $3
              WHERE workspace = $1 AND connector = $2 AND source_id = ANY($4)
                AND listing IS DISTINCT FROM $3",
            &[&workspace.as_str(), &connector, &listing, &source_ids],
        )?;
        Ok(())
    }

    pub(crate) fn listed_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
    ) -> Result<Vec<String>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT source_id FROM sync_items WHERE workspace = $1 AND connector = $2 AND listing = $3",
            &[&workspace.as_str(), &connector, &listing],
        )?;
        rows.iter().map(|row| column(row, 0)).collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn retire_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        removals: &[SourceRemoval],
        run_id: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<Retirement>, PostgresStoreError> {
        self.write(|tx| {
            let mut retired = Vec::new();
            for removal in removals {
                if let Some(retirement) =
                    retire_item(tx, workspace, connector, removal, run_id, now, actor)?
                {
                    retired.push(retirement);
                }
            }
            Ok(retired)
        })
    }
}

/// Retires one item gone from its source: its live unpinned memory forgotten (saying by
/// which run and why), its waiting candidate discarded, its record dropped.
#[allow(clippy::too_many_arguments)]
fn retire_item(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    connector: &str,
    removal: &SourceRemoval,
    run_id: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<Option<Retirement>, PostgresStoreError> {
    let Some(known) = item(tx, workspace, connector, &removal.source_id)? else {
        return Ok(None);
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
            .query_opt(
                "SELECT pinned FROM memories
                  WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL FOR UPDATE",
                &[&workspace.as_str(), &id.to_string()],
            )?
            .map(|row| column(&row, 0))
            .transpose()?;
        match pinned {
            Some(true) => retirement.kept_pinned = Some(id),
            Some(false) => {
                let detail = serde_json::json!({
                    "retired_by_sync": run_id,
                    "connector": connector,
                    "source_id": removal.source_id,
                    "reason": removal.reason,
                });
                crate::writes::forget(tx, workspace, id, now, actor, detail)?;
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
        "DELETE FROM sync_items WHERE workspace = $1 AND connector = $2 AND source_id = $3",
        &[&workspace.as_str(), &connector, &removal.source_id],
    )?;
    Ok(Some(retirement))
}
