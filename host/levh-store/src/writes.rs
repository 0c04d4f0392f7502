//! Writes shared by several store operations, each inside the caller's transaction.

use levh_core::{
    Actor, Embedding, EventKind, HeldId, Interference, MemoryId, MemoryState, NewMemoryRecord,
    StoreError, Workspace,
};
use rusqlite::{Connection, params};
use serde_json::json;

use crate::rows::micros;
use crate::{get_live, log_event, sqlite, vectors, write_state};

/// Inserts a memory row with its vector and near-duplicate keys, and logs `store`.
/// `held` names the held candidate it was admitted from, if any. Returns its rowid.
pub(crate) fn insert_memory(
    tx: &Connection,
    record: &NewMemoryRecord,
    held: Option<HeldId>,
    actor: &Actor,
) -> Result<i64, StoreError> {
    let seq = insert_memory_without_keys(tx, record, held, actor)?;
    write_keys(tx, seq, &record.near_duplicate_keys, true)?;
    Ok(seq)
}

/// Near-duplicate keys of many memories, inserted in key order. Each memory's keys fall
/// at random places of one large index, so a batch's keys sorted visit each of its pages
/// once, in order, instead of jumping between them (at a million memories the index is
/// far larger than the page cache).
pub(crate) fn insert_keys_sorted(
    tx: &Connection,
    mut keys: Vec<(i64, i64)>,
) -> Result<(), StoreError> {
    keys.sort_unstable();
    let mut statement = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO memory_near_duplicate_keys (key, memory_seq) VALUES (?1, ?2)",
        )
        .map_err(sqlite)?;
    for (key, seq) in keys {
        statement.execute(params![key, seq]).map_err(sqlite)?;
    }
    Ok(())
}

/// A memory's row, vector and event: everything but its near-duplicate keys.
pub(crate) fn insert_memory_without_keys(
    tx: &Connection,
    record: &NewMemoryRecord,
    held: Option<HeldId>,
    actor: &Actor,
) -> Result<i64, StoreError> {
    let m = &record.memory;
    // Cached statements: a batch inserts a thousand rows, and parsing the SQL again for
    // each was a tenth of an import's time.
    tx.prepare_cached(
        "INSERT INTO memories (id, workspace, project, content, kind, source, importance, pinned,
             stability_hours, last_recalled_at, recall_count, created_at, valid_from, valid_to,
             superseded_by, content_hash, admission_verdict, admission_reasons,
             admission_decided_by, metadata, session_id, updated_at, held_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
             ?19, ?20, ?21, ?12, ?22)",
    )
    .map_err(sqlite)?
    .execute(params![
        m.id.to_string(),
        m.workspace.as_str(),
        m.project,
        m.content,
        m.kind.as_str(),
        m.source,
        m.state.importance,
        m.state.pinned,
        m.state.stability_hours,
        m.state.last_recalled_at.map(micros),
        m.state.recall_count,
        micros(m.state.created_at),
        micros(m.valid_from),
        m.valid_to.map(micros),
        m.superseded_by.map(|id| id.to_string()),
        m.content_hash,
        m.admission.verdict,
        serde_json::to_string(&m.admission.reasons).map_err(StoreError::new)?,
        m.admission.decided_by,
        m.metadata.to_string(),
        m.session_id.as_ref().map(|s| s.as_str().to_owned()),
        held.map(|id| id.to_string()),
    ])
    .map_err(sqlite)?;
    let seq = tx.last_insert_rowid();
    if let Some(embedding) = &record.embedding {
        write_embedding(tx, seq, embedding)?;
    }
    let detail = match held {
        Some(held) => json!({ "held_id": held }),
        None => json!({}),
    };
    log_event(
        tx,
        m.state.created_at,
        EventKind::Store,
        &m.workspace,
        Some(m.id),
        actor,
        detail,
    )
    .map_err(sqlite)?;
    Ok(seq)
}

pub(crate) fn write_embedding(
    tx: &Connection,
    seq: i64,
    embedding: &Embedding,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO memory_embeddings (memory_seq, model, dimension, vector) VALUES (?1, ?2, ?3, ?4)",
    )
    .map_err(sqlite)?
    .execute(params![seq, embedding.model, embedding.vector.len() as i64, vectors::encode(&embedding.vector)])
    .map_err(sqlite)?;
    Ok(())
}

/// Replaces a memory's near-duplicate keys; `fresh`: it is a new row, with none to delete.
fn write_keys(tx: &Connection, seq: i64, keys: &[i64], fresh: bool) -> Result<(), StoreError> {
    if !fresh {
        tx.execute(
            "DELETE FROM memory_near_duplicate_keys WHERE memory_seq = ?1",
            [seq],
        )
        .map_err(sqlite)?;
    }
    insert_keys_sorted(tx, keys.iter().map(|key| (*key, seq)).collect())
}

/// Applies `interfere` to the current state of each older neighbour and logs it.
pub(crate) fn apply_interference(
    tx: &Connection,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    actor: &Actor,
) -> Result<Vec<Interference>, StoreError> {
    let m = &record.memory;
    let now = m.state.created_at;
    let mut applied = Vec::new();
    for &(neighbour, similarity) in neighbours {
        if neighbour == m.id {
            continue;
        }
        let Some(older) = get_live(tx, &m.workspace, neighbour).map_err(sqlite)? else {
            continue;
        };
        let Some(state) = interfere(&older.state) else {
            continue;
        };
        write_state(tx, neighbour, &state, now).map_err(sqlite)?;
        let detail = json!({ "by": m.id, "similarity": similarity, "stability_hours": state.stability_hours });
        log_event(
            tx,
            now,
            EventKind::Interfere,
            &m.workspace,
            Some(neighbour),
            actor,
            detail,
        )
        .map_err(sqlite)?;
        applied.push(Interference {
            memory_id: neighbour,
            similarity,
            stability_hours: state.stability_hours,
        });
    }
    Ok(applied)
}

/// Replaces a memory's content and everything derived from it. False when missing.
pub(crate) fn replace_content(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    content: &str,
    embedding: Option<&Embedding>,
    keys: &[i64],
    now: levh_core::Timestamp,
) -> Result<bool, StoreError> {
    let seq: Option<i64> = rusqlite::OptionalExtension::optional(tx.query_row(
        "SELECT seq FROM memories WHERE workspace = ?1 AND id = ?2",
        params![workspace.as_str(), id.to_string()],
        |row| row.get(0),
    ))
    .map_err(sqlite)?;
    let Some(seq) = seq else { return Ok(false) };
    tx.execute(
        "UPDATE memories SET content = ?2, content_hash = ?3, updated_at = ?4 WHERE seq = ?1",
        params![
            seq,
            content,
            levh_core::text::content_hash(content),
            micros(now)
        ],
    )
    .map_err(sqlite)?;
    match embedding {
        Some(embedding) => write_embedding(tx, seq, embedding)?,
        None => {
            tx.execute("DELETE FROM memory_embeddings WHERE memory_seq = ?1", [seq])
                .map_err(sqlite)?;
        }
    }
    write_keys(tx, seq, keys, false)?;
    Ok(true)
}
