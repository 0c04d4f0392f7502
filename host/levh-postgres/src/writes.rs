//! Writes to memories, each inside the caller's transaction: new memories and batches of
//! them with their near-duplicate keys and vectors, new states, forgetting, superseding
//! and replaced content or fields.
//!
//! Where SQLite serialises every writer with `BEGIN IMMEDIATE`, PostgreSQL runs them side
//! by side: a write that reads a memory's state to compute the next one (interference,
//! reinforcement) first locks the rows it will change (`FOR UPDATE`, in seq order so two
//! writers never wait on each other in a cycle), so no concurrent change is overwritten.

use crate::connection::{Db, Tx};
use levh_core::{
    Actor, BatchWrite, Embedding, EventKind, HeldId, Interference, Memory, MemoryId, MemoryState,
    NewMemoryRecord, SyncedPage, Timestamp, Workspace,
};
use serde_json::json;

use crate::events::log_event;
use crate::query::id_texts;
use crate::reads::get_live;
use crate::rows::micros;
use crate::{PostgresStoreError, held};

/// Inserts a memory row with its vector and near-duplicate keys, and logs `store`.
/// `held` names the held candidate it was admitted from, if any. Returns its seq.
pub(crate) fn insert_memory(
    tx: &mut Tx<'_>,
    record: &NewMemoryRecord,
    held: Option<HeldId>,
    actor: &Actor,
) -> Result<i64, PostgresStoreError> {
    let m = &record.memory;
    let seq: i64 = tx
        .query_one(
            "INSERT INTO memories (id, workspace, project, content, kind, source, importance, pinned,
                 stability_hours, last_recalled_at, recall_count, created_at, valid_from, valid_to,
                 superseded_by, content_hash, admission_verdict, admission_reasons,
                 admission_decided_by, metadata, session_id, updated_at, held_id, forgotten_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                 $18, $19, $20, $21, $12, $22, $23)
             RETURNING seq",
            &[
                &m.id.to_string(),
                &m.workspace.as_str(),
                &m.project,
                &m.content,
                &m.kind.as_str(),
                &m.source,
                &m.state.importance,
                &m.state.pinned,
                &m.state.stability_hours,
                &m.state.last_recalled_at.map(micros),
                &i64::from(m.state.recall_count),
                &micros(m.state.created_at),
                &micros(m.valid_from),
                &m.valid_to.map(micros),
                &m.superseded_by.map(|id| id.to_string()),
                &m.content_hash,
                &m.admission.verdict.as_str(),
                &serde_json::to_value(&m.admission.reasons)?,
                &m.admission.decided_by,
                &m.metadata,
                &m.session_id.as_ref().map(|s| s.as_str().to_owned()),
                &held.map(|id| id.to_string()),
                &record.forgotten_at.map(micros),
            ],
        )?
        .get(0);
    if let Some(embedding) = &record.embedding {
        write_embedding(tx, seq, embedding)?;
    }
    write_keys(tx, seq, &record.near_duplicate_keys)?;
    if record.working
        && let Some(session) = &m.session_id
    {
        tx.execute(
            "INSERT INTO working_memories (memory_seq, session_id) VALUES ($1, $2)
             ON CONFLICT (memory_seq) DO UPDATE SET session_id = excluded.session_id",
            &[&seq, &session.as_str()],
        )?;
    }
    // Its size, for usage by client and day (`levh report usage`): a count, not content.
    let detail = match held {
        Some(held) => json!({ "held_id": held, "bytes": m.content.len() }),
        None => json!({ "bytes": m.content.len() }),
    };
    log_event(
        tx,
        m.state.created_at,
        EventKind::Store,
        &m.workspace,
        Some(m.id),
        actor,
        detail,
    )?;
    Ok(seq)
}

/// Writes (or replaces) a memory's vector.
pub(crate) fn write_embedding(
    tx: &mut Tx<'_>,
    seq: i64,
    embedding: &Embedding,
) -> Result<(), PostgresStoreError> {
    let dimension = i32::try_from(embedding.vector.len())
        .map_err(|_| PostgresStoreError::Corrupt("a vector of more than 2³¹ numbers".into()))?;
    tx.execute(
        "INSERT INTO memory_embeddings (memory_seq, model, dimension, vector)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (memory_seq) DO UPDATE
             SET model = excluded.model, dimension = excluded.dimension, vector = excluded.vector",
        &[
            &seq,
            &embedding.model,
            &dimension,
            &pgvector::Vector::from(embedding.vector.clone()),
        ],
    )?;
    Ok(())
}

/// Replaces a memory's near-duplicate keys.
fn write_keys(tx: &mut Tx<'_>, seq: i64, keys: &[i64]) -> Result<(), PostgresStoreError> {
    tx.execute(
        "DELETE FROM near_duplicate_keys WHERE memory_seq = $1",
        &[&seq],
    )?;
    if !keys.is_empty() {
        tx.execute(
            "INSERT INTO near_duplicate_keys (key, memory_seq)
             SELECT DISTINCT key, $2::bigint FROM unnest($1::bigint[]) AS key",
            &[&keys, &seq],
        )?;
    }
    Ok(())
}

/// Locks the live rows of `ids` in the workspace, in seq order, for the rest of the
/// transaction: a state read after this is the state that will be overwritten.
pub(crate) fn lock_live(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<(), PostgresStoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    tx.query(
        "SELECT seq FROM memories WHERE workspace = $1 AND id = ANY($2) AND forgotten_at IS NULL
         ORDER BY seq FOR UPDATE",
        &[&workspace.as_str(), &id_texts(ids)],
    )?;
    Ok(())
}

/// Applies `interfere` to the current state of each older neighbour and logs it.
pub(crate) fn apply_interference(
    tx: &mut Tx<'_>,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    actor: &Actor,
) -> Result<Vec<Interference>, PostgresStoreError> {
    let m = &record.memory;
    let now = m.state.created_at;
    let ids: Vec<MemoryId> = neighbours
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| *id != m.id)
        .collect();
    lock_live(tx, &m.workspace, &ids)?;
    let mut applied = Vec::new();
    for &(neighbour, similarity) in neighbours {
        if neighbour == m.id {
            continue;
        }
        let Some(older) = get_live(tx, &m.workspace, neighbour)? else {
            continue;
        };
        let Some(state) = interfere(&older.state) else {
            continue;
        };
        write_state(tx, neighbour, &state, now)?;
        let detail = json!({ "by": m.id, "similarity": similarity, "stability_hours": state.stability_hours });
        log_event(
            tx,
            now,
            EventKind::Interfere,
            &m.workspace,
            Some(neighbour),
            actor,
            detail,
        )?;
        applied.push(Interference {
            memory_id: neighbour,
            similarity,
            stability_hours: state.stability_hours,
        });
    }
    Ok(applied)
}

/// A batch of new memories and held candidates, and the sync state of the page they came
/// from, in the caller's one transaction; the interference each memory applied, in order.
pub(crate) fn write_batch(
    tx: &mut Tx<'_>,
    writes: &[BatchWrite],
    synced: Option<&SyncedPage>,
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    actor: &Actor,
) -> Result<Vec<Vec<Interference>>, PostgresStoreError> {
    if let Some(raced) = raced(tx, writes)? {
        return Err(PostgresStoreError::Raced(raced));
    }
    let mut applied = Vec::with_capacity(writes.len());
    for write in writes {
        applied.push(match write {
            BatchWrite::Memory {
                record, neighbours, ..
            } => {
                insert_memory(tx, record, None, actor)?;
                apply_interference(tx, record, neighbours, interfere, actor)?
            }
            BatchWrite::Held { candidate, .. } => {
                held::insert(tx, candidate, actor)?;
                Vec::new()
            }
        });
    }
    if let Some(page) = synced {
        for (source_id, item) in &page.items {
            crate::sync::record_item(
                tx,
                &page.workspace,
                &page.connector,
                source_id,
                item,
                page.now,
            )?;
        }
        if let Some((key, cursor)) = &page.cursor {
            crate::sync::save_cursor(tx, &page.workspace, key, cursor.as_deref(), page.now)?;
        }
    }
    Ok(applied)
}

/// Advisory lock stripes for the texts of batches (see [`raced`]). A lock per text would
/// take one slot of the server's shared lock table each — a batch of 5,000 would fill
/// most of its default 6,400 — so texts share one of this many locks: a batch holds at
/// most this many, and two single captures of different texts wait on each other one
/// time in 256.
const TEXT_LOCK_STRIPES: i32 = 256;

/// The first key of the text locks' two-key advisory locks ("levh" in ASCII).
const TEXT_LOCK_CLASS: i32 = 0x6c65_7668;

/// What another writer stored of a batch's texts after the gate judged them (see
/// [`BatchWrite`]): the first such write, described. Unlike SQLite's single writer,
/// two servers' transactions run side by side, and each would find nothing of the
/// other's uncommitted text; so the transaction first takes the advisory locks of its
/// texts' stripes (in one order, so two batches never wait on each other in a cycle, and
/// before any row lock), which makes a second writer of the same text wait until the
/// first commits — its reads below, each a new snapshot, then see the first's text.
/// Runs before the batch writes anything, so its own writes never count.
fn raced(tx: &mut Tx<'_>, writes: &[BatchWrite]) -> Result<Option<String>, PostgresStoreError> {
    if writes.is_empty() {
        return Ok(None);
    }
    let texts: Vec<String> = writes
        .iter()
        .map(|write| {
            // Not the project: a write without one is compared with every project's
            // memories, so it must wait for a writer of the same text in any of them.
            let (workspace, _, hash, _) = write.identity();
            format!("levh text\u{1f}{}\u{1f}{hash}", workspace.as_str())
        })
        .collect();
    // The two-key form: its keys never meet the one-key locks of the event log,
    // migrations and the entity index.
    tx.execute(
        "SELECT pg_advisory_xact_lock($3, stripe)
           FROM (SELECT DISTINCT abs(hashtext(text) % $2) AS stripe
                   FROM unnest($1::text[]) AS text) AS stripes
          ORDER BY stripe",
        &[&texts, &TEXT_LOCK_STRIPES, &TEXT_LOCK_CLASS],
    )?;
    for write in writes {
        let (workspace, project, hash, seen) = write.identity();
        if let Some(waiting) = held::waiting(tx, workspace, project, hash)? {
            return Ok(Some(format!(
                "held candidate {} waits with the same text",
                waiting.id
            )));
        }
        if let Some(other) = crate::reads::identical(tx, &write.identical_filter(), hash)?
            .into_iter()
            .find(|id| !seen.contains(id))
        {
            return Ok(Some(format!("memory {other} has the same text")));
        }
    }
    Ok(None)
}

/// Gives each live memory of `ids` the state `update` computes from it, logging `event`
/// with the new state; a memory is left alone when `update` returns `None` or the same
/// state. Returns the memories changed, as updated.
pub(crate) fn update_states(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    ids: &[MemoryId],
    event: EventKind,
    actor: &Actor,
    now: Timestamp,
    update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
) -> Result<Vec<Memory>, PostgresStoreError> {
    lock_live(tx, workspace, ids)?;
    let mut updated = Vec::new();
    for &id in ids {
        let Some(mut memory) = get_live(tx, workspace, id)? else {
            continue;
        };
        let Some(state) = update(&memory) else {
            continue;
        };
        if state == memory.state {
            continue;
        }
        write_state(tx, id, &state, now)?;
        let detail = state.change_detail(event, &memory.state);
        log_event(tx, now, event, workspace, Some(id), actor, detail)?;
        memory.state = state;
        updated.push(memory);
    }
    Ok(updated)
}

/// Retires a live memory from every read (the row stays, for `known_at` history) and logs
/// `forget` with `detail`. False when there was no live memory `id`.
pub(crate) fn forget(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: MemoryId,
    now: Timestamp,
    actor: &Actor,
    detail: serde_json::Value,
) -> Result<bool, PostgresStoreError> {
    let changed = tx.execute(
        "UPDATE memories SET forgotten_at = $3, updated_at = $3
             WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL",
        &[&workspace.as_str(), &id.to_string(), &micros(now)],
    )?;
    if changed == 1 {
        log_event(
            tx,
            now,
            EventKind::Forget,
            workspace,
            Some(id),
            actor,
            detail,
        )?;
    }
    Ok(changed == 1)
}

/// Retires `old` at `now` as superseded by `by`, with a `supersede` event carrying
/// `detail`. False when `old` was not live.
pub(crate) fn supersede(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    old: MemoryId,
    by: MemoryId,
    now: Timestamp,
    actor: &Actor,
    detail: serde_json::Value,
) -> Result<bool, PostgresStoreError> {
    let retired = tx.execute(
        "UPDATE memories SET valid_to = $3, superseded_by = $4, updated_at = $3
             WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL",
        &[
            &workspace.as_str(),
            &old.to_string(),
            &micros(now),
            &by.to_string(),
        ],
    )?;
    if retired == 1 {
        log_event(
            tx,
            now,
            EventKind::Supersede,
            workspace,
            Some(old),
            actor,
            detail,
        )?;
    }
    Ok(retired == 1)
}

/// Replaces a memory's content and everything derived from it (hash, vector, keys; the
/// full-text column follows by itself). False when missing.
pub(crate) fn replace_content(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: MemoryId,
    content: &str,
    embedding: Option<&Embedding>,
    keys: &[i64],
    now: Timestamp,
) -> Result<bool, PostgresStoreError> {
    let row = tx.query_opt(
        "UPDATE memories SET content = $3, content_hash = $4, updated_at = $5
          WHERE workspace = $1 AND id = $2 RETURNING seq",
        &[
            &workspace.as_str(),
            &id.to_string(),
            &content,
            &levh_core::text::content_hash(content),
            &micros(now),
        ],
    )?;
    let Some(row) = row else { return Ok(false) };
    let seq: i64 = row.get(0);
    match embedding {
        Some(embedding) => write_embedding(tx, seq, embedding)?,
        None => {
            tx.execute(
                "DELETE FROM memory_embeddings WHERE memory_seq = $1",
                &[&seq],
            )?;
        }
    }
    write_keys(tx, seq, keys)?;
    Ok(true)
}

/// Replaces a memory's project, source and metadata. False when missing.
pub(crate) fn replace_fields(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: MemoryId,
    project: Option<&str>,
    source: &str,
    metadata: &serde_json::Value,
    now: Timestamp,
) -> Result<bool, PostgresStoreError> {
    Ok(tx.execute(
        "UPDATE memories SET project = $3, source = $4, metadata = $5, updated_at = $6
             WHERE workspace = $1 AND id = $2",
        &[
            &workspace.as_str(),
            &id.to_string(),
            &project,
            &source,
            metadata,
            &micros(now),
        ],
    )? > 0)
}

/// Moves a live memory's `valid_from`, when its `valid_to` (if any) stays after it.
pub(crate) fn set_valid_from(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    id: MemoryId,
    valid_from: Timestamp,
    now: Timestamp,
) -> Result<bool, PostgresStoreError> {
    Ok(tx.execute(
        "UPDATE memories SET valid_from = $3, updated_at = $4
             WHERE workspace = $1 AND id = $2 AND (valid_to IS NULL OR valid_to > $3)",
        &[
            &workspace.as_str(),
            &id.to_string(),
            &micros(valid_from),
            &micros(now),
        ],
    )? > 0)
}

/// Writes a memory's model state.
pub(crate) fn write_state(
    tx: &mut impl Db,
    id: MemoryId,
    state: &MemoryState,
    now: Timestamp,
) -> Result<(), PostgresStoreError> {
    tx.execute(
        "UPDATE memories SET importance = $2, pinned = $3, stability_hours = $4,
             last_recalled_at = $5, recall_count = $6, updated_at = $7
         WHERE id = $1",
        &[
            &id.to_string(),
            &state.importance,
            &state.pinned,
            &state.stability_hours,
            &state.last_recalled_at.map(micros),
            &i64::from(state.recall_count),
            &micros(now),
        ],
    )?;
    Ok(())
}
