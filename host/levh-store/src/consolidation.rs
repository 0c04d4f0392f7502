//! Consolidation and working memory (migration 0014).
//!
//! A consolidation stores one summary memory and retires its members in the same
//! transaction, each as superseded by the summary, remembering the member's `valid_to`
//! before so that an undo restores it exactly. Working memory is a row per memory an agent
//! stored in a session that nothing has promoted yet.

use levh_core::{Actor, EventKind, MemoryId, NewMemoryRecord, SessionId, Timestamp, Workspace};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::json;

use crate::events::log_event;
use crate::rows::{micros, parse_id};
use crate::{SqliteStore, SqliteStoreError, writes};

/// Stores `summary`, then retires each member that is still live, unpinned and not already
/// retired. Returns the members retired, in the order given.
pub(crate) fn consolidate(
    tx: &Transaction<'_>,
    summary: &NewMemoryRecord,
    members: &[MemoryId],
    actor: &Actor,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    let workspace = &summary.memory.workspace;
    let now = summary.memory.state.created_at;
    let summary_seq = writes::insert_memory(tx, summary, None, actor)?;
    let mut retired = Vec::with_capacity(members.len());
    for &member in members {
        let row: Option<(i64, Option<i64>)> = tx
            .prepare_cached(
                "SELECT seq, valid_to FROM memories
                  WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL AND pinned = 0
                    AND superseded_by IS NULL AND (valid_to IS NULL OR valid_to > ?3)",
            )?
            .query_row(
                params![workspace.as_str(), member.to_string(), micros(now)],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let Some((member_seq, prior_valid_to)) = row else {
            continue;
        };
        tx.prepare_cached(
            "INSERT INTO consolidated (summary_seq, member_seq, prior_valid_to) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![summary_seq, member_seq, prior_valid_to])?;
        let detail = json!({ "consolidated_into": summary.memory.id });
        if writes::supersede(tx, workspace, member, summary.memory.id, now, actor, detail)? {
            retired.push(member);
        }
    }
    Ok(retired)
}

/// Undoes a consolidation: each member gets its `valid_to` from before back and is no
/// longer superseded (a `restore` event), and the summary is forgotten. `None` when
/// `summary` is not a live memory with consolidated members.
pub(crate) fn undo(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    summary: MemoryId,
    now: Timestamp,
    actor: &Actor,
) -> Result<Option<Vec<MemoryId>>, SqliteStoreError> {
    let summary_seq: Option<i64> = tx
        .query_row(
            "SELECT seq FROM memories WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
            params![workspace.as_str(), summary.to_string()],
            |row| row.get(0),
        )
        .optional()?;
    let Some(summary_seq) = summary_seq else {
        return Ok(None);
    };
    let members: Vec<(i64, String, Option<i64>)> = tx
        .prepare(
            "SELECT c.member_seq, m.id, c.prior_valid_to
               FROM consolidated c JOIN memories m ON m.seq = c.member_seq
              WHERE c.summary_seq = ?1 ORDER BY m.created_at, m.seq",
        )?
        .query_map([summary_seq], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if members.is_empty() {
        return Ok(None);
    }
    let mut restored = Vec::with_capacity(members.len());
    for (member_seq, id, prior_valid_to) in members {
        let id = parse_id(&id)?;
        // Only while the summary still stands as its replacement: a member a person has
        // since superseded otherwise stays as they left it.
        let changed = tx
            .prepare_cached(
                "UPDATE memories SET valid_to = ?2, superseded_by = NULL, updated_at = ?3
                  WHERE seq = ?1 AND superseded_by = ?4",
            )?
            .execute(params![
                member_seq,
                prior_valid_to,
                micros(now),
                summary.to_string()
            ])?;
        if changed == 1 {
            log_event(
                tx,
                now,
                EventKind::Restore,
                workspace,
                Some(id),
                actor,
                json!({ "consolidation_undone": summary }),
            )?;
            restored.push(id);
        }
    }
    tx.execute(
        "DELETE FROM consolidated WHERE summary_seq = ?1",
        [summary_seq],
    )?;
    writes::forget_saying(
        tx,
        workspace,
        summary,
        now,
        actor,
        json!({ "consolidation_undone": true }),
    )?;
    Ok(Some(restored))
}

/// The members of a consolidation summary, oldest first (empty when it is none).
pub(crate) fn members(
    store: &SqliteStore,
    workspace: &Workspace,
    summary: MemoryId,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    let conn = store.read();
    let ids: Vec<String> = conn
        .prepare_cached(
            "SELECT m.id FROM memories s
               JOIN consolidated c ON c.summary_seq = s.seq
               JOIN memories m ON m.seq = c.member_seq
              WHERE s.workspace = ?1 AND s.id = ?2
              ORDER BY m.created_at, m.seq",
        )?
        .query_map(params![workspace.as_str(), summary.to_string()], |row| {
            row.get(0)
        })?
        .collect::<rusqlite::Result<_>>()?;
    ids.iter().map(|id| parse_id(id)).collect()
}

/// Marks a just-inserted memory as working memory of its session.
pub(crate) fn mark_working(
    tx: &rusqlite::Connection,
    seq: i64,
    session: &SessionId,
) -> Result<(), SqliteStoreError> {
    tx.prepare_cached("INSERT INTO working_memories (memory_seq, session_id) VALUES (?1, ?2)")?
        .execute(params![seq, session.as_str()])?;
    Ok(())
}

/// Promotes working memories to long-term ones: their rows go, and a `promote` event says
/// why. Returns those promoted (the ones that were working).
pub(crate) fn promote(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    ids: &[MemoryId],
    stability_hours: f64,
    why: &str,
    now: Timestamp,
    actor: &Actor,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    let mut promoted = Vec::new();
    for &id in ids {
        let seq: Option<i64> = tx
            .prepare_cached(
                "SELECT w.memory_seq FROM working_memories w JOIN memories m ON m.seq = w.memory_seq
                  WHERE m.workspace = ?1 AND m.id = ?2",
            )?
            .query_row(params![workspace.as_str(), id.to_string()], |row| row.get(0))
            .optional()?;
        let Some(seq) = seq else { continue };
        tx.prepare_cached("DELETE FROM working_memories WHERE memory_seq = ?1")?
            .execute([seq])?;
        tx.prepare_cached(
            "UPDATE memories SET stability_hours = max(stability_hours, ?2), updated_at = ?3
              WHERE seq = ?1",
        )?
        .execute(params![seq, stability_hours, micros(now)])?;
        {
            log_event(
                tx,
                now,
                EventKind::Promote,
                workspace,
                Some(id),
                actor,
                json!({ "why": why }),
            )?;
            promoted.push(id);
        }
    }
    Ok(promoted)
}

/// Which of `ids` are working memory, with their session.
pub(crate) fn working_of(
    store: &SqliteStore,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<(MemoryId, SessionId)>, SqliteStoreError> {
    let conn = store.read();
    let mut found = Vec::new();
    let mut statement = conn.prepare_cached(
        "SELECT w.session_id FROM working_memories w JOIN memories m ON m.seq = w.memory_seq
          WHERE m.workspace = ?1 AND m.id = ?2",
    )?;
    for &id in ids {
        let session: Option<String> = statement
            .query_row(params![workspace.as_str(), id.to_string()], |row| {
                row.get(0)
            })
            .optional()?;
        if let Some(session) = session {
            found.push((id, SessionId::new(session)));
        }
    }
    Ok(found)
}
