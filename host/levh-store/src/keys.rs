//! Keyed memories (migration 0018): every memory written under a (project, key), the
//! current one found by the key, and a new one stored in place of the current one in one
//! transaction that first checks the current one is still the one the caller replaced
//! (compare-and-set: two agents rewriting one key at once never leave two current).

use levh_core::{
    Actor, MemoryFilter, MemoryId, MemoryState, NewMemoryRecord, Timestamp, Workspace,
};
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::json;

use crate::query::where_clause;
use crate::rows::{MEMORY_COLUMNS, MEMORY_FROM, read_memory};
use crate::{SqliteStore, SqliteStoreError, writes};

/// The memories written under `key` in the filter's workspace and project that the filter
/// matches (with a read time: the one valid then), newest first.
pub(crate) fn keyed(
    store: &SqliteStore,
    filter: &MemoryFilter,
    key: &str,
) -> Result<Vec<levh_core::Memory>, SqliteStoreError> {
    let (clause, mut values) = where_clause(filter);
    values.push(filter.workspace.as_str().to_owned().into());
    values.push(filter.project.clone().unwrap_or_default().into());
    values.push(key.to_owned().into());
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {clause} AND m.seq IN (
             SELECT k.memory_seq FROM memory_keys k
              WHERE k.workspace = ? AND k.project = ? AND k.key = ?)
         ORDER BY m.created_at DESC, m.seq DESC LIMIT 50"
    );
    let conn = store.read();
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(values), read_memory)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The current memory of a key, read in the writer's transaction.
fn current(
    tx: &Connection,
    workspace: &Workspace,
    project: &str,
    key: &str,
) -> Result<Option<MemoryId>, SqliteStoreError> {
    let id: Option<String> = tx
        .query_row(
            "SELECT m.id FROM memory_keys k JOIN memories m ON m.seq = k.memory_seq
              WHERE k.workspace = ?1 AND k.project = ?2 AND k.key = ?3
                AND m.forgotten_at IS NULL AND m.superseded_by IS NULL AND m.valid_to IS NULL
              ORDER BY m.seq DESC LIMIT 1",
            params![workspace.as_str(), project, key],
            |row| row.get(0),
        )
        .optional()?;
    id.map(|id| crate::rows::parse_id(&id)).transpose()
}

/// Records `memory` as the key's current memory, retiring `replaces` as superseded by it.
#[allow(clippy::too_many_arguments)]
fn adopt(
    tx: &Connection,
    workspace: &Workspace,
    project: &str,
    key: &str,
    memory: MemoryId,
    replaces: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<(), SqliteStoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO memory_keys (memory_seq, workspace, project, key)
         SELECT seq, ?2, ?3, ?4 FROM memories WHERE id = ?1",
        params![memory.to_string(), workspace.as_str(), project, key],
    )?;
    if let Some(old) = replaces {
        writes::supersede(
            tx,
            workspace,
            old,
            memory,
            now,
            actor,
            json!({ "by": memory, "key": true }),
        )?;
    }
    Ok(())
}

/// Stores `record` as the current memory of `key` in place of `replaces`, with its
/// interference, in one transaction — if and only if `replaces` is still the key's current
/// memory (`None`: the key has none). False when it is not: nothing was written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn store_keyed(
    store: &SqliteStore,
    record: &NewMemoryRecord,
    neighbours: &[(MemoryId, f64)],
    interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
    key: &str,
    replaces: Option<MemoryId>,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    let m = &record.memory;
    let project = m.project.clone().unwrap_or_default();
    store.write(|tx| {
        if current(tx, &m.workspace, &project, key)? != replaces {
            return Ok(false);
        }
        writes::insert_memory(tx, record, None, actor)?;
        writes::apply_interference(tx, record, neighbours, interfere, actor)?;
        adopt(
            tx,
            &m.workspace,
            &project,
            key,
            m.id,
            replaces,
            m.state.created_at,
            actor,
        )?;
        Ok(true)
    })
}

/// Makes a stored memory (a keyed candidate a person admitted from the held queue) the
/// current memory of `key`, retiring the one before it. False when the memory is not live.
pub(crate) fn adopt_key(
    store: &SqliteStore,
    workspace: &Workspace,
    project: Option<&str>,
    key: &str,
    memory: MemoryId,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    let project = project.unwrap_or_default();
    store.write(|tx| {
        let live: bool = tx.query_row(
            "SELECT count(*) > 0 FROM memories WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
            params![workspace.as_str(), memory.to_string()],
            |row| row.get(0),
        )?;
        if !live {
            return Ok(false);
        }
        let before = current(tx, workspace, project, key)?.filter(|id| *id != memory);
        adopt(tx, workspace, project, key, memory, before, now, actor)?;
        Ok(true)
    })
}
