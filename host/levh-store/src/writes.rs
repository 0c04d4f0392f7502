//! Writes to memories, each inside the caller's transaction: new memories and batches
//! of them with their near-duplicate keys and vectors, new states, forgetting, and
//! replaced content or fields.

use levh_core::{
    Actor, BatchWrite, Embedding, EventKind, HeldId, Interference, Memory, MemoryId, MemoryState,
    NewMemoryRecord, StaleEmbedding, SyncedPage, Timestamp, Workspace,
};
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::json;

use crate::events::log_event;
use crate::reads::get_live;
use crate::rows::micros;
use crate::{SqliteStore, SqliteStoreError, held, sync, vectors};

/// Inserts a memory row with its vector and near-duplicate keys, and logs `store`.
/// `held` names the held candidate it was admitted from, if any. Returns its rowid.
pub(crate) fn insert_memory(
    tx: &Connection,
    record: &NewMemoryRecord,
    held: Option<HeldId>,
    actor: &Actor,
) -> Result<i64, SqliteStoreError> {
    let seq = insert_memory_without_keys(tx, record, held, actor)?;
    write_keys(tx, seq, &record.near_duplicate_keys, true)?;
    Ok(seq)
}

/// The recent keys move into the large index a slice of the key range at a time: each
/// transaction that stores keys moves those of the next slice, sized so that the whole
/// range goes by once every this many stored memories. A recent key thus waits for half
/// of that on average, and the recent table holds the keys of about 32,768 memories
/// (~15 MB). Each transaction writes a contiguous slice of the large index in proportion
/// to what it stores (a capture: a page or two; a group of 5,000: 8%), never the whole
/// index at once: no pause for a merge, and a bulk import's writer stays as busy as its
/// judge.
const MERGE_CYCLE_MEMORIES: u64 = 65_536;

/// Stores the near-duplicate keys of new memories, `(seq, keys)` each: its list, and its
/// (key, memory) pairs in the recent keys (migration 0010), all of them in key order so
/// a batch's keys visit each page once instead of jumping between them; then moves the
/// next slice of recent keys into the large index ([`MERGE_CYCLE_MEMORIES`]).
pub(crate) fn insert_keys(
    tx: &Connection,
    memories: &[(i64, &[i64])],
) -> Result<(), SqliteStoreError> {
    let mut list = tx.prepare_cached(
        "INSERT OR REPLACE INTO near_duplicate_key_lists (memory_seq, keys) VALUES (?1, ?2)",
    )?;
    let mut pairs = Vec::with_capacity(memories.iter().map(|(_, keys)| keys.len()).sum());
    let mut stored = 0;
    for (seq, keys) in memories {
        if keys.is_empty() {
            continue;
        }
        stored += 1;
        let bytes: Vec<u8> = keys.iter().flat_map(|key| key.to_be_bytes()).collect();
        list.execute(params![seq, bytes])?;
        pairs.extend(keys.iter().map(|key| (*key, *seq)));
    }
    pairs.sort_unstable();
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO near_duplicate_keys_recent (key, memory_seq) VALUES (?1, ?2)",
    )?;
    for (key, seq) in pairs {
        insert.execute(params![key, seq])?;
    }
    merge_next_slice(tx, stored)
}

/// Removes memory `seq`'s near-duplicate keys, found through its list, from both tables
/// of keys (neither has an index by memory), and the list.
pub(crate) fn delete_keys(tx: &Connection, seq: i64) -> Result<(), SqliteStoreError> {
    let list: Option<Vec<u8>> = tx
        .prepare_cached("SELECT keys FROM near_duplicate_key_lists WHERE memory_seq = ?1")?
        .query_row([seq], |row| row.get(0))
        .optional()?;
    let Some(list) = list else { return Ok(()) };
    if list.len() % 8 != 0 {
        return Err(SqliteStoreError::Malformed(format!(
            "near-duplicate key list of memory {seq} is {} bytes, not a multiple of 8",
            list.len()
        )));
    }
    for table in ["near_duplicate_keys", "near_duplicate_keys_recent"] {
        let mut delete = tx.prepare_cached(&format!(
            "DELETE FROM {table} WHERE key = ?1 AND memory_seq = ?2"
        ))?;
        for key in list.chunks_exact(8) {
            let key = i64::from_be_bytes(key.try_into().expect("chunks of 8"));
            delete.execute(params![key, seq])?;
        }
    }
    tx.prepare_cached("DELETE FROM near_duplicate_key_lists WHERE memory_seq = ?1")?
        .execute([seq])?;
    Ok(())
}

/// Moves the recent keys of the slice of the key range after the merge cursor into the
/// large index, the slice in proportion to `stored` memories, and moves the cursor past
/// it (wrapping from the largest key to the smallest).
fn merge_next_slice(tx: &Connection, stored: u64) -> Result<(), SqliteStoreError> {
    if stored == 0 {
        return Ok(());
    }
    let cursor: i64 = tx
        .prepare_cached("SELECT next_key FROM near_duplicate_keys_merge_cursor")?
        .query_row([], |row| row.get(0))?;
    let slice = MergeSlice::after(cursor, stored);
    for (from, to) in slice.ranges() {
        let (bounds, [insert, delete]) = match to {
            Some(to) => (vec![from, to], slice_moves(true)),
            None => (vec![from], slice_moves(false)),
        };
        for sql in [insert, delete] {
            tx.prepare_cached(&sql)?
                .execute(params_from_iter(&bounds))?;
        }
    }
    tx.prepare_cached("UPDATE near_duplicate_keys_merge_cursor SET next_key = ?1")?
        .execute([slice.next])?;
    Ok(())
}

/// The two statements that move the recent keys of `key >= ?1` (`bounded`: `AND key <
/// ?2`) into the large index. Two forms, not `?2 IS NULL OR key < ?2`: with the OR,
/// SQLite reads the table from `?1` to its end. In key order (the table's own) and
/// inserted in that order, each page of the slice of the large index is visited once.
fn slice_moves(bounded: bool) -> [String; 2] {
    let range = if bounded {
        "key >= ?1 AND key < ?2"
    } else {
        "key >= ?1"
    };
    [
        format!(
            "INSERT OR IGNORE INTO near_duplicate_keys (key, memory_seq)
                 SELECT key, memory_seq FROM near_duplicate_keys_recent
                 WHERE {range} ORDER BY key, memory_seq"
        ),
        format!("DELETE FROM near_duplicate_keys_recent WHERE {range}"),
    ]
}

/// One transaction's slice of the key range, from `from` (the cursor) for `width` keys of
/// the 2⁶⁴, wrapping from the largest key to the smallest; `next` starts the following.
#[derive(Debug, PartialEq, Eq)]
struct MergeSlice {
    from: i64,
    /// 2⁶⁴ · stored / cycle, at most 2⁶⁴ (the whole range).
    width: u128,
    next: i64,
}

impl MergeSlice {
    fn after(cursor: i64, stored: u64) -> Self {
        let width = ((u128::from(stored) << 64) / u128::from(MERGE_CYCLE_MEMORIES)).min(1 << 64);
        let next = key_at(position(cursor).wrapping_add(width as u64));
        Self {
            from: cursor,
            width,
            next,
        }
    }

    /// The key ranges `from..to` (`to` `None`: through the largest key) the slice covers,
    /// one or, when it wraps, two.
    fn ranges(&self) -> Vec<(i64, Option<i64>)> {
        let start = u128::from(position(self.from));
        let end = start + self.width;
        if end < 1 << 64 {
            return vec![(self.from, Some(key_at(end as u64)))];
        }
        let wrapped = (end - (1 << 64)) as u64;
        let mut ranges = vec![(self.from, None)];
        if wrapped > 0 {
            // From the smallest key up to the wrapped end (at most back to `from`).
            ranges.push((i64::MIN, Some(key_at(wrapped.min(position(self.from))))));
        }
        ranges
    }
}

/// A key's place among all keys, 0..2⁶⁴ (flipping the sign bit keeps the order).
fn position(key: i64) -> u64 {
    (key as u64) ^ (1 << 63)
}

/// The key at a place among all keys.
fn key_at(position: u64) -> i64 {
    (position ^ (1 << 63)) as i64
}

/// A memory's row, vector and event: everything but its near-duplicate keys.
pub(crate) fn insert_memory_without_keys(
    tx: &Connection,
    record: &NewMemoryRecord,
    held: Option<HeldId>,
    actor: &Actor,
) -> Result<i64, SqliteStoreError> {
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
    )?
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
        m.admission.verdict.as_str(),
        serde_json::to_string(&m.admission.reasons)?,
        m.admission.decided_by,
        m.metadata.to_string(),
        m.session_id.as_ref().map(|s| s.as_str().to_owned()),
        held.map(|id| id.to_string()),
    ])?;
    let seq = tx.last_insert_rowid();
    if let Some(embedding) = &record.embedding {
        write_embedding(tx, seq, embedding)?;
    }
    if record.working
        && let Some(session) = &m.session_id
    {
        crate::consolidation::mark_working(tx, seq, session)?;
    }
    if let Some(at) = record.forgotten_at {
        tx.prepare_cached("UPDATE memories SET forgotten_at = ?2 WHERE seq = ?1")?
            .execute(params![seq, micros(at)])?;
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

pub(crate) fn write_embedding(
    tx: &Connection,
    seq: i64,
    embedding: &Embedding,
) -> Result<(), SqliteStoreError> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO memory_embeddings (memory_seq, model, dimension, vector) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![seq, embedding.model, embedding.vector.len() as i64, vectors::encode(&embedding.vector)])?;
    Ok(())
}

/// Replaces a memory's near-duplicate keys; `fresh`: it is a new row, with none to delete.
fn write_keys(
    tx: &Connection,
    seq: i64,
    keys: &[i64],
    fresh: bool,
) -> Result<(), SqliteStoreError> {
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
) -> Result<Vec<Interference>, SqliteStoreError> {
    let m = &record.memory;
    let now = m.state.created_at;
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

/// Replaces a memory's content and everything derived from it. False when missing.
pub(crate) fn replace_content(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    content: &str,
    embedding: Option<&Embedding>,
    keys: &[i64],
    now: levh_core::Timestamp,
) -> Result<bool, SqliteStoreError> {
    let seq: Option<i64> = rusqlite::OptionalExtension::optional(tx.query_row(
        "SELECT seq FROM memories WHERE workspace = ?1 AND id = ?2",
        params![workspace.as_str(), id.to_string()],
        |row| row.get(0),
    ))?;
    let Some(seq) = seq else { return Ok(false) };
    tx.execute(
        "UPDATE memories SET content = ?2, content_hash = ?3, updated_at = ?4 WHERE seq = ?1",
        params![
            seq,
            content,
            levh_core::text::content_hash(content),
            micros(now)
        ],
    )?;
    match embedding {
        Some(embedding) => write_embedding(tx, seq, embedding)?,
        None => {
            tx.execute("DELETE FROM memory_embeddings WHERE memory_seq = ?1", [seq])?;
        }
    }
    write_keys(tx, seq, keys, false)?;
    Ok(true)
}

/// A batch of new memories and held candidates, and the sync state of the page they came
/// from, in the caller's one transaction; the interference each memory applied, in order
/// (none for a held candidate). The memories' near-duplicate keys are stored together,
/// after the rows, so the batch visits each page of the key tables once.
pub(crate) fn write_batch(
    tx: &Connection,
    writes: &[BatchWrite],
    synced: Option<&SyncedPage>,
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    actor: &Actor,
) -> Result<Vec<Vec<Interference>>, SqliteStoreError> {
    if let Some(raced) = raced(tx, writes)? {
        return Err(SqliteStoreError::Raced(raced));
    }
    let mut applied = Vec::with_capacity(writes.len());
    let mut keys: Vec<(i64, &[i64])> = Vec::new();
    for write in writes {
        applied.push(match write {
            BatchWrite::Memory {
                record, neighbours, ..
            } => {
                let seq = insert_memory_without_keys(tx, record, None, actor)?;
                keys.push((seq, &record.near_duplicate_keys));
                apply_interference(tx, record, neighbours, interfere, actor)?
            }
            BatchWrite::Held { candidate, .. } => {
                held::insert(tx, candidate, actor)?;
                Vec::new()
            }
        });
    }
    insert_keys(tx, &keys)?;
    if let Some(page) = synced {
        for (source_id, item) in &page.items {
            sync::record_item(
                tx,
                &page.workspace,
                &page.connector,
                source_id,
                item,
                page.now,
            )?;
        }
        if let Some((key, cursor)) = &page.cursor {
            sync::save_cursor(tx, &page.workspace, key, cursor.as_deref(), page.now)?;
        }
    }
    Ok(applied)
}

/// What another writer stored of a batch's texts after the gate judged them (see
/// [`BatchWrite`]): the first such write, described. Read inside the batch's write
/// transaction (`BEGIN IMMEDIATE`: no other process writes until it ends) and before the
/// batch writes anything, so its own writes never count.
fn raced(tx: &Connection, writes: &[BatchWrite]) -> Result<Option<String>, SqliteStoreError> {
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
    tx: &Connection,
    workspace: &Workspace,
    ids: &[MemoryId],
    event: EventKind,
    actor: &Actor,
    now: Timestamp,
    update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
) -> Result<Vec<Memory>, SqliteStoreError> {
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
/// `forget`. False when there was no live memory `id`.
pub(crate) fn forget(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    forget_saying(tx, workspace, id, now, actor, json!({}))
}

/// [`forget`], with the event's `detail` saying why (a sync run's retirement).
pub(crate) fn forget_saying(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    now: Timestamp,
    actor: &Actor,
    detail: serde_json::Value,
) -> Result<bool, SqliteStoreError> {
    let changed = tx.execute(
        "UPDATE memories SET forgotten_at = ?3, updated_at = ?3
             WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
        params![workspace.as_str(), id.to_string(), micros(now)],
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

/// Replaces a memory's project, source and metadata (the change of
/// [`SqliteStore::change_memory`], which logs it). False when missing.
pub(crate) fn replace_fields(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    project: Option<&str>,
    source: &str,
    metadata: &serde_json::Value,
    now: Timestamp,
) -> Result<bool, SqliteStoreError> {
    Ok(tx.execute(
        "UPDATE memories SET project = ?3, source = ?4, metadata = ?5, updated_at = ?6
             WHERE workspace = ?1 AND id = ?2",
        params![
            workspace.as_str(),
            id.to_string(),
            project,
            source,
            metadata.to_string(),
            micros(now)
        ],
    )? > 0)
}

/// Retires `old` at `now` as superseded by `by` (`valid_to`, `superseded_by`) with a
/// `supersede` event carrying `detail`: levh believed it until then, and a retirement
/// dated earlier would rewrite what `known_at` says it knew. False when `old` was not live.
pub(crate) fn supersede(
    tx: &Connection,
    workspace: &Workspace,
    old: MemoryId,
    by: MemoryId,
    now: Timestamp,
    actor: &Actor,
    detail: serde_json::Value,
) -> Result<bool, SqliteStoreError> {
    let retired = tx.execute(
        "UPDATE memories SET valid_to = ?3, superseded_by = ?4, updated_at = ?3
             WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
        params![
            workspace.as_str(),
            old.to_string(),
            micros(now),
            by.to_string()
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

/// Moves a live memory's `valid_from`, when its `valid_to` (if any) stays after it.
pub(crate) fn set_valid_from(
    tx: &Connection,
    workspace: &Workspace,
    id: MemoryId,
    valid_from: Timestamp,
    now: Timestamp,
) -> Result<bool, SqliteStoreError> {
    Ok(tx.execute(
        "UPDATE memories SET valid_from = ?3, updated_at = ?4
             WHERE workspace = ?1 AND id = ?2 AND (valid_to IS NULL OR valid_to > ?3)",
        params![
            workspace.as_str(),
            id.to_string(),
            micros(valid_from),
            micros(now)
        ],
    )? > 0)
}

/// Writes memories' new vectors, each only if the memory still has the content it was
/// embedded from: an edit meanwhile brought its own vector. Returns how many were written.
pub(crate) fn set_embeddings(
    tx: &Connection,
    vectors: &[(StaleEmbedding, Embedding)],
) -> Result<usize, SqliteStoreError> {
    let mut written = 0;
    for (memory, embedding) in vectors {
        let seq: Option<i64> = tx
            .query_row(
                "SELECT seq FROM memories WHERE id = ?1 AND content_hash = ?2",
                params![memory.id.to_string(), memory.content_hash],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(seq) = seq {
            write_embedding(tx, seq, embedding)?;
            written += 1;
        }
    }
    Ok(written)
}

impl SqliteStore {
    /// One change to memory `id` and its `event`, in one transaction; `change` says
    /// whether the memory was there. A redaction then compacts the file: the old text must
    /// leave the index segments and the log, not only the rows.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn change_memory(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
        change: impl FnOnce(&Connection) -> Result<bool, SqliteStoreError>,
    ) -> Result<bool, SqliteStoreError> {
        let changed = self.write(|tx| {
            let changed = change(tx)?;
            if changed {
                log_event(tx, now, event, workspace, Some(id), actor, detail)?;
            }
            Ok(changed)
        })?;
        if changed && event == EventKind::Redact {
            crate::purge::compact(&self.lock())?;
        }
        Ok(changed)
    }
}

pub(crate) fn write_state(
    conn: &Connection,
    id: MemoryId,
    state: &MemoryState,
    now: Timestamp,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE memories SET importance = ?2, pinned = ?3, stability_hours = ?4,
             last_recalled_at = ?5, recall_count = ?6, updated_at = ?7
         WHERE id = ?1",
    )?
    .execute(params![
        id.to_string(),
        state.importance,
        state.pinned,
        state.stability_hours,
        state.last_recalled_at.map(micros),
        state.recall_count,
        micros(now),
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use levh_core::{MemoryFilter, Store};

    use super::*;

    const CYCLE: u128 = MERGE_CYCLE_MEMORIES as u128;

    #[test]
    fn a_slice_is_in_proportion_to_what_a_transaction_stores() {
        let one = MergeSlice::after(i64::MIN, 1);
        let width = ((1u128 << 64) / CYCLE) as i64;
        assert_eq!(one.ranges(), [(i64::MIN, Some(i64::MIN + width))]);
        assert_eq!(one.next, i64::MIN + width);
        let group = MergeSlice::after(0, 5_000);
        assert_eq!(group.ranges(), [(0, Some(5_000 * width))]);
    }

    /// A slice is read and deleted by a range of the recent table's key, never by a scan
    /// to its end (a capture would read half the table).
    #[test]
    fn a_slice_is_read_by_its_key_range() {
        let store = crate::SqliteStore::open_in_memory().unwrap();
        store.with_connection(|c| {
            for (bounded, range) in [(true, "(key>? AND key<?)"), (false, "(key>?)")] {
                for sql in slice_moves(bounded) {
                    let mut explain = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
                    let unbound = vec![rusqlite::types::Value::Null; explain.parameter_count()];
                    let plan: Vec<String> = explain
                        .query_map(params_from_iter(unbound), |row| row.get(3))
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap();
                    assert!(
                        plan.iter().any(|step| step
                            == &format!(
                                "SEARCH near_duplicate_keys_recent USING PRIMARY KEY {range}"
                            )),
                        "{sql}: {plan:?}"
                    );
                }
            }
        });
    }

    #[test]
    fn slices_cover_the_whole_key_range_once_per_cycle() {
        // One memory per transaction: a cycle of slices, end to end, ends where it began.
        let mut cursor = 12_345;
        let mut covered = 0u128;
        for _ in 0..MERGE_CYCLE_MEMORIES {
            let slice = MergeSlice::after(cursor, 1);
            covered += slice.width;
            cursor = slice.next;
        }
        assert_eq!((cursor, covered), (12_345, 1 << 64));
    }

    #[test]
    fn a_slice_wraps_from_the_largest_key_to_the_smallest() {
        let width = ((1u128 << 64) / CYCLE) as i64;
        let near_end = i64::MAX - width / 2;
        let slice = MergeSlice::after(near_end, 1);
        let end = i64::MIN + (width - width / 2) - 1;
        assert_eq!(slice.ranges(), [(near_end, None), (i64::MIN, Some(end))]);
        assert_eq!(slice.next, end);
        // More than a cycle's worth: the whole range, once, from the cursor round to it.
        let all = MergeSlice::after(7, MERGE_CYCLE_MEMORIES * 3);
        assert_eq!(all.ranges(), [(7, None), (i64::MIN, Some(7))]);
        assert_eq!(all.next, 7);
        let from_start = MergeSlice::after(i64::MIN, MERGE_CYCLE_MEMORIES);
        assert_eq!(from_start.ranges(), [(i64::MIN, None)]);
    }

    /// Near-duplicate keys live first in the recent table and move into the large index
    /// when the merge cursor's slice passes them, in a transaction that stores keys;
    /// lookups find a memory by its keys wherever they are, a content change replaces
    /// them (through the memory's list of keys) and a purge removes them.
    #[test]
    fn near_duplicate_keys_are_found_before_and_after_they_move_to_the_large_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("levh.db")).unwrap();
        let workspace = Workspace::default();
        let filter = MemoryFilter::workspace(workspace.clone());
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let insert = |content: &str| {
            let mut record =
                crate::test_records::record(content.to_owned(), at, "default", "p", None);
            record.near_duplicate_keys = levh_core::text::near_duplicate_keys(content);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            record.memory.id
        };
        let counts = || {
            let conn = store.lock();
            let count = |table: &str| -> i64 {
                conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .unwrap()
            };
            (
                count("near_duplicate_keys"),
                count("near_duplicate_keys_recent"),
                count("near_duplicate_key_lists"),
            )
        };
        let found = |content: &str| {
            store
                .near_duplicates(&filter, &levh_core::text::near_duplicate_keys(content), 5)
                .unwrap()
        };
        let deploy = "the deploy branch for atlas is main and releases are tagged weekly";
        let first = insert(deploy);
        let (large, recent, lists) = counts();
        assert_eq!((large + recent, lists), (21, 1));
        assert_eq!(found(deploy), [first]);

        // The next slice starts at the smallest key still waiting: storing one more
        // memory moves that key (and whatever else waits in the slice) to the large index.
        let waiting: i64 = store
            .lock()
            .query_row("SELECT min(key) FROM near_duplicate_keys_recent", [], |r| {
                r.get(0)
            })
            .unwrap();
        store
            .lock()
            .execute(
                "UPDATE near_duplicate_keys_merge_cursor SET next_key = ?1",
                [waiting],
            )
            .unwrap();
        let kafka = "kafka consumer lag alerts fire after five minutes on the billing cluster";
        let second = insert(kafka);
        let (moved_large, moved_recent, lists) = counts();
        assert_eq!((moved_large + moved_recent, lists), (42, 2));
        let in_large: i64 = store
            .lock()
            .query_row(
                "SELECT count(*) FROM near_duplicate_keys WHERE key = ?1",
                [waiting],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!((in_large, moved_large > large), (1, true));
        assert_eq!(found(deploy), [first]);
        assert_eq!(found(kafka), [second]);

        // New content: the old keys leave both tables, the new ones take their place.
        let moved = "grafana dashboards for the payments team live in the ops folder";
        let keys = levh_core::text::near_duplicate_keys(moved);
        assert!(
            store
                .replace_content(
                    &workspace,
                    first,
                    moved,
                    None,
                    &keys,
                    EventKind::Update,
                    json!({}),
                    at,
                    &Actor::cli(),
                )
                .unwrap()
        );
        let (large, recent, lists) = counts();
        assert_eq!((large + recent, lists), (42, 2));
        assert!(found(deploy).is_empty());
        assert_eq!(found(moved), [first]);

        store.purge(&workspace, first, at, &Actor::cli()).unwrap();
        store.purge(&workspace, second, at, &Actor::cli()).unwrap();
        assert_eq!(counts(), (0, 0, 0));
        assert!(found(moved).is_empty() && found(kafka).is_empty());
    }
}
