//! The held queue: candidates the gate would not judge, waiting for a person.

use levh_core::{
    Actor, Embedding, EventKind, HeldCandidate, HeldClose, HeldDecision, HeldId, HeldStatus, Kind,
    Measure, MemoryId, MemoryState, Nearest, NewMemoryRecord, SessionId, Timestamp, Workspace,
};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::json;

use crate::events::log_event;
use crate::rows::micros;
use crate::{SqliteStore, SqliteStoreError, writes};

const COLUMNS: &str = "id, workspace, project, content, kind, source, importance, pinned, valid_from, \
    valid_to, metadata, session_id, content_hash, redactions, reason, nearest_id, similarity, measure, \
    status, created_at, expires_at, decided_at, decided_by, decided_surface, memory_id, updates_memory_id";

fn corrupt(column: usize, what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, Type::Text, what.into())
}

fn time(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<Timestamp>> {
    Ok(row
        .get::<_, Option<i64>>(column)?
        .map(crate::rows::from_micros))
}

fn parsed<T: std::str::FromStr>(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<T>> {
    row.get::<_, Option<String>>(column)?
        .map(|text| {
            text.parse::<T>()
                .map_err(|_| corrupt(column, format!("{text:?}")))
        })
        .transpose()
}

fn read(row: &Row<'_>) -> rusqlite::Result<HeldCandidate> {
    let required = |column: usize, value: Option<Timestamp>| {
        value.ok_or_else(|| corrupt(column, "missing time".into()))
    };
    let nearest = match (
        parsed::<MemoryId>(row, 15)?,
        row.get::<_, Option<f64>>(16)?,
        row.get::<_, Option<String>>(17)?,
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
    let status: String = row.get(18)?;
    let decision = match (
        time(row, 21)?,
        row.get::<_, Option<String>>(22)?,
        row.get::<_, Option<String>>(23)?,
    ) {
        (Some(at), Some(by), Some(surface)) => Some(HeldDecision { at, by, surface }),
        _ => None,
    };
    let workspace: String = row.get(1)?;
    let kind: String = row.get(4)?;
    Ok(HeldCandidate {
        id: parsed(row, 0)?.ok_or_else(|| corrupt(0, "missing id".into()))?,
        workspace: Workspace::new(&workspace).map_err(|e| corrupt(1, e.to_string()))?,
        project: row.get(2)?,
        content: row.get(3)?,
        kind: Kind::stored(&kind).map_err(|e| corrupt(4, e.to_string()))?,
        source: row.get(5)?,
        importance: row.get(6)?,
        pinned: row.get(7)?,
        valid_from: required(8, time(row, 8)?)?,
        valid_to: time(row, 9)?,
        metadata: serde_json::from_str(&row.get::<_, String>(10)?)
            .map_err(|e| corrupt(10, e.to_string()))?,
        session_id: row.get::<_, Option<String>>(11)?.map(SessionId::new),
        content_hash: row.get(12)?,
        redactions: serde_json::from_str(&row.get::<_, String>(13)?)
            .map_err(|e| corrupt(13, e.to_string()))?,
        reason: row.get(14)?,
        nearest,
        status: HeldStatus::parse(&status).ok_or_else(|| corrupt(18, status.clone()))?,
        created_at: required(19, time(row, 19)?)?,
        expires_at: time(row, 20)?,
        decision,
        memory_id: parsed(row, 24)?,
        updates: parsed(row, 25)?,
    })
}

pub(crate) fn insert(
    tx: &Connection,
    held: &HeldCandidate,
    actor: &Actor,
) -> Result<(), SqliteStoreError> {
    tx.execute(
        &format!(
            "INSERT INTO held_candidates ({COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 'held', ?19, ?20, NULL, NULL, NULL, NULL, ?21)"
        ),
        params![
            held.id.to_string(),
            held.workspace.as_str(),
            held.project,
            held.content,
            held.kind.as_str(),
            held.source,
            held.importance,
            held.pinned,
            micros(held.valid_from),
            held.valid_to.map(micros),
            held.metadata.to_string(),
            held.session_id.as_ref().map(|s| s.as_str().to_owned()),
            held.content_hash,
            serde_json::to_string(&held.redactions)?,
            held.reason,
            held.nearest.map(|n| n.id.to_string()),
            held.nearest.map(|n| n.similarity),
            held.nearest.map(|n| n.measure.as_str()),
            micros(held.created_at),
            held.expires_at.map(micros),
            held.updates.map(|m| m.to_string()),
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
    )?;
    Ok(())
}

pub(crate) fn get(
    conn: &Connection,
    workspace: &Workspace,
    id: HeldId,
) -> Result<Option<HeldCandidate>, SqliteStoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM held_candidates WHERE workspace = ?1 AND id = ?2"),
            params![workspace.as_str(), id.to_string()],
            read,
        )
        .optional()?)
}

pub(crate) fn waiting(
    conn: &Connection,
    workspace: &Workspace,
    project: Option<&str>,
    content_hash: &str,
) -> Result<Option<HeldCandidate>, SqliteStoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM held_candidates
         WHERE workspace = ?1 AND status = 'held' AND project IS ?2 AND content_hash = ?3
         ORDER BY created_at, id LIMIT 1"
        ))?
        .query_row(params![workspace.as_str(), project, content_hash], read)
        .optional()?)
}

pub(crate) fn list(
    conn: &Connection,
    workspace: &Workspace,
    status: Option<HeldStatus>,
) -> Result<Vec<HeldCandidate>, SqliteStoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM held_candidates WHERE workspace = ?1 AND (?2 IS NULL OR status = ?2)
             ORDER BY created_at, id"
    ))?;
    let rows = statement.query_map(
        params![workspace.as_str(), status.map(HeldStatus::as_str)],
        read,
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Marks held candidates past their expiry as `expired`, logging each.
pub(crate) fn expire(
    tx: &Connection,
    workspace: &Workspace,
    now: Timestamp,
    actor: &Actor,
) -> Result<(), SqliteStoreError> {
    let mut statement = tx
        .prepare_cached(
            "UPDATE held_candidates SET status = 'expired', decided_at = ?2, decided_by = 'expiry', decided_surface = ?3
             WHERE workspace = ?1 AND status = 'held' AND expires_at IS NOT NULL AND expires_at <= ?2
             RETURNING id",
        )?;
    let expired = statement
        .query_map(
            params![workspace.as_str(), micros(now), actor.surface.as_str()],
            |row| row.get::<_, String>(0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for id in expired {
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
/// already, or missing). Read inside the deciding transaction.
pub(crate) fn still_held(
    tx: &Connection,
    workspace: &Workspace,
    id: HeldId,
) -> Result<Option<HeldClose>, SqliteStoreError> {
    let current: Option<String> = tx
        .query_row(
            "SELECT status FROM held_candidates WHERE workspace = ?1 AND id = ?2",
            params![workspace.as_str(), id.to_string()],
            |row| row.get(0),
        )
        .optional()?;
    let Some(current) = current else {
        return Ok(Some(HeldClose::Missing));
    };
    let current = HeldStatus::parse(&current)
        .ok_or_else(|| SqliteStoreError::Malformed(format!("held status {current:?}")))?;
    Ok((current != HeldStatus::Held).then_some(HeldClose::AlreadyDecided(current)))
}

/// Writes the memory of an admission, inside [`levh_core::Store::store_held_memory`]'s
/// transaction.
pub(crate) fn store_memory(
    tx: &Connection,
    held: HeldId,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    supersede: Option<MemoryId>,
    actor: &Actor,
) -> Result<MemoryId, SqliteStoreError> {
    let already: Option<String> = tx
        .query_row(
            "SELECT id FROM memories WHERE held_id = ?1",
            [held.to_string()],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(id) = already {
        return crate::rows::parse_id(&id);
    }
    let m = &record.memory;
    writes::insert_memory(tx, record, Some(held), actor)?;
    writes::apply_interference(tx, record, neighbours, interfere, actor)?;
    if let Some(old) = supersede {
        // Retired at the decision (see `writes::supersede`).
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

/// Compare-and-set from `held` to `status`.
pub(crate) fn close(
    tx: &Connection,
    workspace: &Workspace,
    id: HeldId,
    status: HeldStatus,
    memory_id: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<HeldClose, SqliteStoreError> {
    if let Some(decided) = still_held(tx, workspace, id)? {
        return Ok(decided);
    }
    if status == HeldStatus::Discarded {
        let stored: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM memories WHERE held_id = ?1)",
            [id.to_string()],
            |row| row.get(0),
        )?;
        if stored {
            return Ok(HeldClose::AdmissionIncomplete);
        }
    }
    tx.execute(
        "UPDATE held_candidates SET status = ?3, decided_at = ?4, decided_by = ?5, decided_surface = ?6, memory_id = ?7
         WHERE workspace = ?1 AND id = ?2 AND status = 'held'",
        params![
            workspace.as_str(),
            id.to_string(),
            status.as_str(),
            micros(now),
            actor.decider(),
            actor.surface.as_str(),
            memory_id.map(|m| m.to_string()),
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

/// The admission of a held new memory: it is stored (retiring `supersede`, if any) and
/// the candidate closes as admitted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn store_held_memory(
    store: &SqliteStore,
    workspace: &Workspace,
    held: HeldId,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    supersede: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<HeldClose, SqliteStoreError> {
    // One immediate transaction: the status is read and changed under the write lock,
    // so a discard in another process cannot slip between the check and the store.
    store.write(|tx| {
        if let Some(decided) = still_held(tx, workspace, held)? {
            return Ok(decided);
        }
        let memory_id = store_memory(tx, held, record, neighbours, interfere, supersede, actor)?;
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

/// The admission of a held update: memory `target` gets the candidate's content, logged
/// as an update with `detail`, and the candidate closes as admitted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn admit_held_update(
    store: &SqliteStore,
    workspace: &Workspace,
    held: HeldId,
    target: MemoryId,
    content: &str,
    embedding: Option<&Embedding>,
    near_duplicate_keys: &[i64],
    detail: serde_json::Value,
    now: Timestamp,
    actor: &Actor,
) -> Result<HeldClose, SqliteStoreError> {
    // One immediate transaction, as for a new memory: a discard in another process
    // cannot slip between the check and the update.
    store.write(|tx| {
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
            detail,
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
