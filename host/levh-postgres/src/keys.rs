//! Keyed memories: every memory written under a (project, key), the current one found
//! by the key, and a new one stored in place of the current one in one transaction that
//! first checks the current one is still the one the caller replaced (compare-and-set).
//!
//! SQLite serialises writers, so reading the current memory and replacing it cannot
//! interleave. Here two transactions could both read the same current memory and both
//! replace it; a transaction-scoped advisory lock on the key makes the second wait for the
//! first to commit, then read the new current memory and find it is not the one it meant
//! to replace.

use crate::connection::{Db, Tx};
use levh_core::{
    Actor, Memory, MemoryFilter, MemoryId, MemoryState, NewMemoryRecord, Timestamp, Workspace,
};
use serde_json::json;

use crate::query::{Bound, where_clause};
use crate::rows::{MEMORY_COLUMNS, MEMORY_FROM, column, parse_id, read_memory};
use crate::{PostgresStore, PostgresStoreError, writes};

/// Serialises the writers of one key, until the transaction ends.
fn lock_key(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    project: &str,
    key: &str,
) -> Result<(), PostgresStoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!(
            "levh key\u{1f}{}\u{1f}{project}\u{1f}{key}",
            workspace.as_str()
        )],
    )?;
    Ok(())
}

/// The current memory of a key, read in the writer's transaction.
fn current(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    project: &str,
    key: &str,
) -> Result<Option<MemoryId>, PostgresStoreError> {
    tx.query_opt(
        "SELECT m.id FROM memory_keys k JOIN memories m ON m.seq = k.memory_seq
          WHERE k.workspace = $1 AND k.project = $2 AND k.key = $3
            AND m.forgotten_at IS NULL AND m.superseded_by IS NULL AND m.valid_to IS NULL
          ORDER BY m.seq DESC LIMIT 1",
        &[&workspace.as_str(), &project, &key],
    )?
    .map(|row| parse_id(column(&row, 0)?))
    .transpose()
}

/// Records `memory` as the key's current memory, retiring `replaces` as superseded by it.
#[allow(clippy::too_many_arguments)]
fn adopt(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    project: &str,
    key: &str,
    memory: MemoryId,
    replaces: Option<MemoryId>,
    now: Timestamp,
    actor: &Actor,
) -> Result<(), PostgresStoreError> {
    tx.execute(
        "INSERT INTO memory_keys (memory_seq, workspace, project, key)
         SELECT seq, $2, $3, $4 FROM memories WHERE id = $1
         ON CONFLICT (memory_seq) DO UPDATE
             SET workspace = excluded.workspace, project = excluded.project, key = excluded.key",
        &[&memory.to_string(), &workspace.as_str(), &project, &key],
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

impl PostgresStore {
    pub(crate) fn keyed_memories(
        &self,
        filter: &MemoryFilter,
        key: &str,
    ) -> Result<Vec<Memory>, PostgresStoreError> {
        let mut bound = Bound::default();
        let clause = where_clause(filter, &mut bound);
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {clause} AND m.seq IN (
                 SELECT k.memory_seq FROM memory_keys k
                  WHERE k.workspace = {} AND k.project = {} AND k.key = {})
             ORDER BY m.created_at DESC, m.seq DESC LIMIT 50",
            bound.bind(filter.workspace.as_str().to_owned()),
            bound.bind(filter.project.clone().unwrap_or_default()),
            bound.bind(key.to_owned()),
        );
        let rows = self.connection()?.query(&sql, &bound.params())?;
        rows.iter().map(read_memory).collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store_under_key(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        key: &str,
        replaces: Option<MemoryId>,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        let m = &record.memory;
        let project = m.project.clone().unwrap_or_default();
        self.ensure_vector_indexes(record.embedding.iter().map(|e| e.vector.len()))?;
        self.write(|tx| {
            lock_key(tx, &m.workspace, &project, key)?;
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

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn adopt_as_key(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        key: &str,
        memory: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        let project = project.unwrap_or_default();
        self.write(|tx| {
            lock_key(tx, workspace, project, key)?;
            let live: bool = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM memories
                      WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL)",
                    &[&workspace.as_str(), &memory.to_string()],
                )?
                .get(0);
            if !live {
                return Ok(false);
            }
            let before = current(tx, workspace, project, key)?.filter(|id| *id != memory);
            adopt(tx, workspace, project, key, memory, before, now, actor)?;
            Ok(true)
        })
    }
}
