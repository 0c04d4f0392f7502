//! Writes shared by several store operations, each inside the caller's transaction.

use levh_core::{
    Actor, Embedding, EventKind, HeldId, Interference, MemoryId, MemoryState, NewMemoryRecord,
    StoreError, Workspace,
};
use rusqlite::{Connection, OptionalExtension, params};
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

/// Once this many memories have come since the last merge, the recent keys are merged
/// into the large index.
/// Each merge writes about every page of the large index once (~400 MB at a million
/// memories), while a transaction's keys re-write about every page of the recent table
/// (at most ~30 MB here): this size keeps their sum per memory small from 100k to 1M,
/// for bulk groups of 5,000 and single captures alike.
const RECENT_KEYS_SPAN: i64 = 65_536;

/// Stores the near-duplicate keys of new memories, `(seq, keys)` each: its list, and its
/// (key, memory) pairs in the recent keys (migration 0010), all of them in key order so
/// a batch's keys visit each page once instead of jumping between them. The recent keys
/// move into the large index in the same transaction once [`RECENT_KEYS_SPAN`] memories
/// have come since the last merge.
pub(crate) fn insert_keys(tx: &Connection, memories: &[(i64, &[i64])]) -> Result<(), StoreError> {
    let mut list = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO near_duplicate_key_lists (memory_seq, keys) VALUES (?1, ?2)",
        )
        .map_err(sqlite)?;
    let mut pairs = Vec::with_capacity(memories.iter().map(|(_, keys)| keys.len()).sum());
    for (seq, keys) in memories {
        if keys.is_empty() {
            continue;
        }
        let bytes: Vec<u8> = keys.iter().flat_map(|key| key.to_be_bytes()).collect();
        list.execute(params![seq, bytes]).map_err(sqlite)?;
        pairs.extend(keys.iter().map(|key| (*key, *seq)));
    }
    pairs.sort_unstable();
    let mut insert = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO near_duplicate_keys_recent (key, memory_seq) VALUES (?1, ?2)",
        )
        .map_err(sqlite)?;
    for (key, seq) in pairs {
        insert.execute(params![key, seq]).map_err(sqlite)?;
    }
    merge_recent_keys_when_due(tx)
}

/// Removes memory `seq`'s near-duplicate keys, found through its list, from both tables
/// of keys (neither has an index by memory), and the list.
pub(crate) fn delete_keys(tx: &Connection, seq: i64) -> Result<(), StoreError> {
    let list: Option<Vec<u8>> = tx
        .prepare_cached("SELECT keys FROM near_duplicate_key_lists WHERE memory_seq = ?1")
        .map_err(sqlite)?
        .query_row([seq], |row| row.get(0))
        .optional()
        .map_err(sqlite)?;
    let Some(list) = list else { return Ok(()) };
    if list.len() % 8 != 0 {
        return Err(StoreError::new(format!(
            "near-duplicate key list of memory {seq} is {} bytes, not a multiple of 8",
            list.len()
        )));
    }
    for table in ["near_duplicate_keys", "near_duplicate_keys_recent"] {
        let mut delete = tx
            .prepare_cached(&format!(
                "DELETE FROM {table} WHERE key = ?1 AND memory_seq = ?2"
            ))
            .map_err(sqlite)?;
        for key in list.chunks_exact(8) {
            let key = i64::from_be_bytes(key.try_into().expect("chunks of 8"));
            delete.execute(params![key, seq]).map_err(sqlite)?;
        }
    }
    tx.prepare_cached("DELETE FROM near_duplicate_key_lists WHERE memory_seq = ?1")
        .map_err(sqlite)?
        .execute([seq])
        .map_err(sqlite)?;
    Ok(())
}

/// Moves every recent key into the large index when [`RECENT_KEYS_SPAN`] memories have
/// come since the last merge (by sequence number: purged memories leave gaps, which only
/// makes a merge come sooner; an older memory's new content waits for the next one).
fn merge_recent_keys_when_due(tx: &Connection) -> Result<(), StoreError> {
    let span: Option<i64> = tx
        .prepare_cached(
            "SELECT (SELECT max(memory_seq) FROM near_duplicate_key_lists)
                  - (SELECT through_seq FROM near_duplicate_keys_merged)",
        )
        .map_err(sqlite)?
        .query_row([], |row| row.get(0))
        .map_err(sqlite)?;
    if span.is_none_or(|span| span < RECENT_KEYS_SPAN) {
        return Ok(());
    }
    // Read in key order (the table's own order) and inserted in that order: each page
    // of the large index is visited once. The recent table then empties at once (no
    // foreign key, no trigger: SQLite drops its pages instead of deleting row by row).
    tx.execute_batch(
        "INSERT OR IGNORE INTO near_duplicate_keys (key, memory_seq)
             SELECT key, memory_seq FROM near_duplicate_keys_recent ORDER BY key, memory_seq;
         DELETE FROM near_duplicate_keys_recent;
         UPDATE near_duplicate_keys_merged
             SET through_seq = (SELECT max(memory_seq) FROM near_duplicate_key_lists);",
    )
    .map_err(sqlite)
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
        delete_keys(tx, seq)?;
    }
    insert_keys(tx, &[(seq, keys)])
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
