//! Review schedules (migration 0013): when the review queue shows a fading memory again,
//! and the `review` events that put each decision in the memory's history.

use levh_core::review::{ReviewDecision, ReviewSchedule};
use levh_core::{Actor, EventKind, MemoryId, Timestamp, Workspace};
use rusqlite::{params, params_from_iter};
use serde_json::json;

use crate::events::log_event;
use crate::rows::{from_micros, micros, parse_id};
use crate::{SqliteStore, SqliteStoreError};

/// Ids per query: under SQLite's bound-parameter limit.
const IDS_PER_QUERY: usize = 500;

pub(crate) fn review_schedules(
    store: &SqliteStore,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<(MemoryId, ReviewSchedule)>, SqliteStoreError> {
    let conn = store.read();
    let mut found = Vec::new();
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let mut statement = conn.prepare(&format!(
            "SELECT m.id, r.due_at, r.interval_days, r.reviews
               FROM review_schedule r JOIN memories m ON m.seq = r.memory_seq
              WHERE r.workspace = ? AND m.id IN ({marks})"
        ))?;
        let mut values = vec![workspace.as_str().to_owned()];
        values.extend(chunk.iter().map(|id| id.to_string()));
        let rows: Vec<(String, i64, i64, i64)> = statement
            .query_map(params_from_iter(values), |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (id, due, interval, reviews) in rows {
            found.push((
                parse_id(&id)?,
                ReviewSchedule {
                    due_at: from_micros(due),
                    interval_days: u32::try_from(interval).unwrap_or(0),
                    reviews: u32::try_from(reviews).unwrap_or(0),
                },
            ));
        }
    }
    Ok(found)
}

pub(crate) fn review_hidden(
    store: &SqliteStore,
    workspace: &Workspace,
    now: Timestamp,
) -> Result<usize, SqliteStoreError> {
    let count: i64 = store.read().query_row(
        "SELECT count(*) FROM review_schedule WHERE workspace = ?1 AND due_at > ?2",
        params![workspace.as_str(), micros(now)],
        |row| row.get(0),
    )?;
    Ok(usize::try_from(count).unwrap_or(0))
}

pub(crate) fn record_review(
    store: &SqliteStore,
    workspace: &Workspace,
    id: MemoryId,
    decision: ReviewDecision,
    schedule: &ReviewSchedule,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    store.write(|tx| {
        let changed = tx.execute(
            "INSERT INTO review_schedule (memory_seq, workspace, due_at, interval_days, reviews)
                 SELECT seq, workspace, ?3, ?4, ?5 FROM memories
                  WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL
             ON CONFLICT (memory_seq) DO UPDATE SET
                 due_at = excluded.due_at,
                 interval_days = excluded.interval_days,
                 reviews = excluded.reviews",
            params![
                workspace.as_str(),
                id.to_string(),
                micros(schedule.due_at),
                i64::from(schedule.interval_days),
                i64::from(schedule.reviews)
            ],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        let mut detail = json!({
            "decision": decision.as_str(),
            "next_review": schedule.due_at.to_string(),
        });
        if let ReviewDecision::Snooze { days } = decision {
            detail["days"] = json!(days);
        }
        log_event(
            tx,
            now,
            EventKind::Review,
            workspace,
            Some(id),
            actor,
            detail,
        )?;
        Ok(true)
    })
}
