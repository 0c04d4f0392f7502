//! The held queue: candidates the gate would not judge, waiting for a person.
//!
//! A decision is taken once. SQLite gets that from its single writer; here the deciding
//! transaction locks the candidate's row (`SELECT … FOR UPDATE`) before reading its
//! status, so a second decider waits for the first to commit and then reads its decision.

use levh_core::{
    Actor, Embedding, EventKind, HeldCandidate, HeldClose, HeldDecision, HeldId, HeldStatus, Kind,
    Measure, MemoryId, MemoryState, Nearest, NewMemoryRecord, SessionId, Timestamp, Workspace,
};
use postgres::Row;

use crate::connection::{Db, Tx};
use serde_json::json;

use crate::events::log_event;
use crate::rows::{column, from_micros, micros, optional_time, parse_id};
use crate::{PostgresStore, PostgresStoreError, writes};

const COLUMNS: &str = "id, workspace, project, content, kind, source, importance, pinned, valid_from, \
    valid_to, metadata, session_id, content_hash, redactions, reason, nearest_id, similarity, measure, \
    status, created_at, expires_at, decided_at, decided_by, decided_surface, memory_id, updates_memory_id";

fn corrupt(what: String) -> PostgresStoreError {
    PostgresStoreError::Corrupt(format!("held candidate: {what}"))
}

fn parsed<T: std::str::FromStr>(text: Option<&str>) -> Result<Option<T>, PostgresStoreError> {
    text.map(|text| text.parse::<T>().map_err(|_| corrupt(format!("{text:?}"))))
        .transpose()
}

fn read(row: &Row) -> Result<HeldCandidate, PostgresStoreError> {
    let nearest = match (
        parsed::<MemoryId>(column(row, 15)?)?,
        column::<Option<f64>>(row, 16)?,
        column::<Option<&str>>(row, 17)?,
    ) {
        (Some(id), Some(similarity), Some(measure)) => Some(Nearest {
            id,
            similarity,
            measure: if measure == "cosine" {
                Measure::Cosine
            } else {
                Measure::Lexical
            },
        }),
        _ => None,
    };
    let status: &str = column(row, 18)?;
    let decision = match (
        optional_time(column(row, 21)?),
        column::<Option<String>>(row, 22)?,
        column::<Option<String>>(row, 23)?,
    ) {
        (Some(at), Some(by), Some(surface)) => Some(HeldDecision { at, by, surface }),
        _ => None,
    };
    let workspace: &str = column(row, 1)?;
    let kind: &str = column(row, 4)?;
    Ok(HeldCandidate {
        id: parsed(column(row, 0)?)?.ok_or_else(|| corrupt("missing id".into()))?,
        workspace: Workspace::new(workspace).map_err(|e| corrupt(e.to_string()))?,
        project: column(row, 2)?,
        content: column(row, 3)?,
        kind: Kind::stored(kind).map_err(|e| corrupt(e.to_string()))?,
        source: column(row, 5)?,
        importance: column(row, 6)?,
        pinned: column(row, 7)?,
        valid_from: from_micros(column(row, 8)?),
        valid_to: optional_time(column(row, 9)?),
        metadata: column(row, 10)?,
        session_id: column::<Option<String>>(row, 11)?.map(SessionId::new),
        content_hash: column(row, 12)?,
        redactions: serde_json::from_value(column(row, 13)?)?,
        reason: column(row, 14)?,
        nearest,
        status: HeldStatus::parse(status).ok_or_else(|| corrupt(format!("status {status:?}")))?,
        created_at: from_micros(column(row, 19)?),
        expires_at: optional_time(column(row, 20)?),
        decision,
        memory_id: parsed(column(row, 24)?)?,
        updates: parsed(column(row, 25)?)?,
    })
}

pub(crate) fn insert(
    tx: &mut Tx<'_>,
    held: &HeldCandidate,
    actor: &Actor,
) -> Result<(), PostgresStoreError> {
    tx.execute(
        &format!(
            "INSERT INTO held_candidates ({COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
                 'held', $19, $20, NULL, NULL, NULL, NULL, $21)"
        ),
        &[
            &held.id.to_string(),
            &held.workspace.as_str(),
            &held.project,
            &held.content,
            &held.kind.as_str(),
            &held.source,
            &held.importance,
            &held.pinned,
            &micros(held.valid_from),
            &held.valid_to.map(micros),
            &held.metadata,
            &held.session_id.as_ref().map(|s| s.as_str().to_owned()),
            &held.content_hash,
            &serde_json::to_value(&held.redactions)?,
            &held.reason,
            &held.nearest.map(|n| n.id.to_string()),
            &held.nearest.map(|n| n.similarity),
            &held.nearest.map(|n| n.measure.as_str()),
            &micros(held.created_at),
            &held.expires_at.map(micros),
            &held.updates.map(|m| m.to_string()),
        ],
    )?;
    let detail = json!({
        "held_id": held.id,
        "nearest_id": held.nearest.map(|n| n.id),
        "updates": held.updates,
    });
    log_event(
        tx,
        held.created_at,
        EventKind::Hold,
        &held.workspace,
        None,
        actor,
        detail,
    )
}

pub(crate) fn get(
    conn: &mut impl Db,
    workspace: &Workspace,
    id: HeldId,
) -> Result<Option<HeldCandidate>, PostgresStoreError> {
    conn.query_opt(
        &format!("SELECT {COLUMNS} FROM held_candidates WHERE workspace = $1 AND id = $2"),
        &[&workspace.as_str(), &id.to_string()],
    )?
    .map(|row| read(&row))
    .transpose()
}

pub(crate) fn waiting(
    conn: &mut impl Db,
    workspace: &Workspace,
    project: Option<&str>,
    content_hash: &str,
) -> Result<Option<HeldCandidate>, PostgresStoreError> {
    conn.query_opt(
        &format!(
            "SELECT {COLUMNS} FROM held_candidates
              WHERE workspace = $1 AND status = 'held' AND project IS NOT DISTINCT FROM $2
                AND content_hash = $3
              ORDER BY created_at, id COLLATE \"C\" LIMIT 1"
        ),
        &[&workspace.as_str(), &project, &content_hash],
    )?
    .map(|row| read(&row))
    .transpose()
}

pub(crate) fn list(
    conn: &mut impl Db,
    workspace: &Workspace,
    status: Option<HeldStatus>,
) -> Result<Vec<HeldCandidate>, PostgresStoreError> {
    let rows = conn.query(
        &format!(
            "SELECT {COLUMNS} FROM held_candidates
              WHERE workspace = $1 AND ($2::text IS NULL OR status = $2)
              ORDER BY created_at, id COLLATE \"C\""
        ),
        &[&workspace.as_str(), &status.map(HeldStatus::as_str)],
    )?;
    rows.iter().map(read).collect()
}

/// Marks held candidates past their expiry as `expired`, logging each.
pub(crate) fn expire(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    now: Timestamp,
    actor: &Actor,
) -> Result<(), PostgresStoreError> {
    let expired = tx.query(
        "UPDATE held_candidates
            SET status = 'expired', decided_at = $2, decided_by = 'expiry', decided_surface = $3
          WHERE workspace = $1 AND status = 'held' AND expires_at IS NOT NULL AND expires_at <= $2
          RETURNING id",
        &[&workspace.as_str(), &micros(now), &actor.surface.as_str()],
    )?;
    for row in expired {
        let id: String = column(&row, 0)?;
        log_event(
            tx,
            now,
            EventKind::Expire,
            workspace,
            None,
            actor,
            json!({ "held_id": id }),
        )?;
    }
    Ok(())
}

/// `None` while candidate `id` is held; otherwise what closing it would say (decided
/// already, or missing). Locks the row for the rest of the deciding transaction.
fn still_held(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: HeldId,
) -> Result<Option<HeldClose>, PostgresStoreError> {
    let Some(row) = tx.query_opt(
        "SELECT status FROM held_candidates WHERE workspace = $1 AND id = $2 FOR UPDATE",
        &[&workspace.as_str(), &id.to_string()],
    )?
    else {
        return Ok(Some(HeldClose::Missing));
    };
    let status: &str = column(&row, 0)?;
    let current = HeldStatus::parse(status)
        .ok_or_else(|| PostgresStoreError::Corrupt(format!("held status {status:?}")))?;
    Ok((current != HeldStatus::Held).then_some(HeldClose::AlreadyDecided(current)))
}

/// Compare-and-set from `held` to `status`.
pub(crate) fn close(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: HeldId,
    status: HeldStatus,
    memory_id: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<HeldClose, PostgresStoreError> {
    if let Some(decided) = still_held(tx, workspace, id)? {
        return Ok(decided);
    }
    if status == HeldStatus::Discarded {
        let stored: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM memories WHERE held_id = $1)",
                &[&id.to_string()],
            )?
            .get(0);
        if stored {
            return Ok(HeldClose::AdmissionIncomplete);
        }
    }
    tx.execute(
        "UPDATE held_candidates
            SET status = $3, decided_at = $4, decided_by = $5, decided_surface = $6, memory_id = $7
          WHERE workspace = $1 AND id = $2 AND status = 'held'",
        &[
            &workspace.as_str(),
            &id.to_string(),
            &status.as_str(),
            &micros(now),
            &actor.decider(),
            &actor.surface.as_str(),
            &memory_id.map(|m| m.to_string()),
        ],
    )?;
    let event = if status == HeldStatus::Admitted {
        EventKind::Admit
    } else {
        EventKind::Discard
    };
    log_event(
        tx,
        now,
        event,
        workspace,
        memory_id,
        actor,
        json!({ "held_id": id }),
    )?;
    Ok(HeldClose::Closed)
}

/// Writes the memory of an admission; a memory already stored from the candidate (by a
/// build that crashed before closing it) is kept, not stored twice.
fn store_memory(
    tx: &mut Tx<'_>,
    held: HeldId,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    supersede: Option<MemoryId>,
    actor: &Actor,
) -> Result<MemoryId, PostgresStoreError> {
    if let Some(row) = tx.query_opt(
        "SELECT id FROM memories WHERE held_id = $1",
        &[&held.to_string()],
    )? {
        return parse_id(column(&row, 0)?);
    }
    let m = &record.memory;
    writes::insert_memory(tx, record, Some(held), actor)?;
    writes::apply_interference(tx, record, neighbours, interfere, actor)?;
    if let Some(old) = supersede {
        writes::supersede(
            tx,
            &m.workspace,
            old,
            m.id,
            m.state.created_at,
            actor,
            json!({ "by": m.id }),
        )?;
    }
    Ok(m.id)
}

impl PostgresStore {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn admit_held_memory(
        &self,
        workspace: &Workspace,
        held: HeldId,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        supersede: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, PostgresStoreError> {
        self.ensure_vector_indexes(record.embedding.iter().map(|e| e.vector.len()))?;
        self.write(|tx| {
            if let Some(decided) = still_held(tx, workspace, held)? {
                return Ok(decided);
            }
            let memory_id =
                store_memory(tx, held, record, neighbours, interfere, supersede, actor)?;
            close(
                tx,
                workspace,
                held,
                HeldStatus::Admitted,
                Some(memory_id),
                now,
                actor,
            )
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn admit_update(
        &self,
        workspace: &Workspace,
        held: HeldId,
        target: MemoryId,
        content: &str,
        embedding: Option<&Embedding>,
        near_duplicate_keys: &[i64],
        detail: &serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, PostgresStoreError> {
        self.ensure_vector_indexes(embedding.iter().map(|e| e.vector.len()))?;
        self.write(|tx| {
            if let Some(decided) = still_held(tx, workspace, held)? {
                return Ok(decided);
            }
            let replaced = writes::replace_content(
                tx,
                workspace,
                target,
                content,
                embedding,
                near_duplicate_keys,
                now,
            )?;
            if !replaced {
                return Ok(HeldClose::Missing);
            }
            log_event(
                tx,
                now,
                EventKind::Update,
                workspace,
                Some(target),
                actor,
                detail.clone(),
            )?;
            close(
                tx,
                workspace,
                held,
                HeldStatus::Admitted,
                Some(target),
                now,
                actor,
            )
        })
    }
}
