//! levh-store: the SQLite implementation of levh-core's [`Store`] and [`VectorIndex`].
//!
//! One file (`$LEVH_HOME/levh.db`) in WAL mode holds memories, their FTS5 index (kept in
//! step by triggers), their vectors, sessions and the append-only event log. Many
//! processes may open it at once: every write is a `BEGIN IMMEDIATE` transaction and the
//! busy timeout makes writers queue instead of failing, so no write is lost and
//! "database is locked" never reaches the user under normal contention.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod ann;
mod connection;
mod entities;
mod error;
mod events;
mod exact_scan;
mod health;
mod held;
mod lease;
mod lexical;
mod lexicon;
mod migrations;
mod places;
mod purge;
mod query;
mod readers;
mod reads;
mod rows;
mod snapshot;
mod standings;
mod sync;
#[cfg(test)]
mod test_records;
mod tokens;
mod vectors;
mod writes;

pub use ann::{AnnConfig, AnnIndex, AnnStats};
pub use connection::{DEFAULT_BUSY_TIMEOUT, SqliteStore};
pub use error::SqliteStoreError;
pub use lease::{ExclusiveLease, LeaseError, acquire_exclusive};
pub use levh_core::LoggedEvent;
pub use levh_core::{IssuedToken, TokenInfo};
pub use migrations::latest_version as latest_schema_version;
pub use snapshot::{
    ExclusiveHold, HoldError, SnapshotSummary, check_restorable, hold_exclusively, snapshot,
};
pub use tokens::secret_hash;

use levh_core::sync::{SyncReport, SyncedItem};
use levh_core::{
    Actor, BatchWrite, ComparedText, Embedding, EventKind, HeldCandidate, HeldClose, HeldId,
    HeldStatus, Interference, Memory, MemoryFilter, MemoryId, MemoryState, NewMemoryRecord, Page,
    PlacedText, PurgeReport, RankingRow, StaleEmbedding, StandingGroup, Store, StoreError,
    StoreHealth, StoredText, SyncedPage, TextPlace, Timestamp, VectorIndex, Workspace,
};
use rusqlite::{OptionalExtension, params};
use serde_json::json;

use crate::rows::micros;

/// Each method runs its SQL through the crate's functions; their error becomes a
/// [`StoreError`] here, once.
impl Store for SqliteStore {
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn insert(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Interference>, StoreError> {
        Ok(self.write(|tx| {
            writes::insert_memory(tx, record, None, actor)?;
            writes::apply_interference(tx, record, neighbours, interfere, actor)
        })?)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(writes = writes.len()), err(level = "debug"))]
    fn write_batch(
        &self,
        writes: &[BatchWrite],
        synced: Option<&SyncedPage>,
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Vec<Interference>>, StoreError> {
        Ok(self.write(|tx| {
            let mut applied = Vec::with_capacity(writes.len());
            let mut keys: Vec<(i64, &[i64])> = Vec::new();
            for write in writes {
                applied.push(match write {
                    BatchWrite::Memory { record, neighbours } => {
                        let seq = writes::insert_memory_without_keys(tx, record, None, actor)?;
                        keys.push((seq, &record.near_duplicate_keys));
                        writes::apply_interference(tx, record, neighbours, interfere, actor)?
                    }
                    BatchWrite::Held(held) => {
                        held::insert(tx, held, actor)?;
                        Vec::new()
                    }
                });
            }
            writes::insert_keys(tx, &keys)?;
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
        })?)
    }

    fn get(&self, workspace: &Workspace, id: MemoryId) -> Result<Option<Memory>, StoreError> {
        Ok(reads::get_live(&self.read(), workspace, id)?)
    }

    fn get_many(&self, workspace: &Workspace, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        Ok(reads::get_many(self, workspace, ids)?)
    }

    fn ranking_rows(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<RankingRow>, StoreError> {
        Ok(reads::by_id_chunks(
            &self.read(),
            query::ranking_rows_sql,
            &[],
            workspace,
            ids,
            rows::read_ranking_row,
        )?)
    }

    fn compared_texts(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, StoreError> {
        Ok(reads::by_id_chunks(
            &self.read(),
            query::compared_texts_sql,
            &[],
            workspace,
            ids,
            |row| {
                Ok(ComparedText {
                    id: rows::id(row, 0)?,
                    pinned: row.get(1)?,
                    content: row.get(2)?,
                })
            },
        )?)
    }

    fn list(&self, filter: &MemoryFilter, page: Page) -> Result<Vec<Memory>, StoreError> {
        Ok(reads::list(self, filter, page)?)
    }

    fn count(&self, filter: &MemoryFilter) -> Result<u64, StoreError> {
        Ok(reads::count(self, filter)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn lexical_candidates(
        &self,
        filter: &MemoryFilter,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(MemoryId, f64)>, StoreError> {
        Ok(lexical::lexical_candidates(self, filter, query, limit)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn embeddings(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        model: &str,
    ) -> Result<Vec<(MemoryId, Vec<f32>)>, StoreError> {
        Ok(reads::by_id_chunks(
            &self.read(),
            query::embeddings_sql,
            &[model],
            workspace,
            ids,
            |row| {
                let blob = row.get_ref(1)?.as_blob()?;
                Ok((rows::id(row, 0)?, vectors::decode(blob)))
            },
        )?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn update_states(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        event: EventKind,
        actor: &Actor,
        now: Timestamp,
        update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(self.write(|tx| {
            let mut updated = Vec::new();
            for &id in ids {
                let Some(mut memory) = reads::get_live(tx, workspace, id)? else {
                    continue;
                };
                let Some(state) = update(&memory) else {
                    continue;
                };
                if state == memory.state {
                    continue;
                }
                writes::write_state(tx, id, &state, now)?;
                let detail = json!({
                    "stability_hours": state.stability_hours,
                    "recall_count": state.recall_count,
                    "pinned": state.pinned,
                });
                events::log_event(tx, now, event, workspace, Some(id), actor, detail)?;
                memory.state = state;
                updated.push(memory);
            }
            Ok(updated)
        })?)
    }

    fn forget(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.write(|tx| {
            let changed = tx.execute(
                "UPDATE memories SET forgotten_at = ?3, updated_at = ?3
                     WHERE workspace = ?1 AND id = ?2 AND forgotten_at IS NULL",
                params![workspace.as_str(), id.to_string(), micros(now)],
            )?;
            if changed == 1 {
                events::log_event(
                    tx,
                    now,
                    EventKind::Forget,
                    workspace,
                    Some(id),
                    actor,
                    json!({}),
                )?;
            }
            Ok(changed == 1)
        })?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn standings(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, StoreError> {
        Ok(self
            .standings
            .visit(&self.read(), workspace, project, now, visit)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn health(&self) -> Result<StoreHealth, StoreError> {
        Ok(health::health(self)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn near_duplicates(
        &self,
        filter: &MemoryFilter,
        keys: &[i64],
        limit: usize,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(reads::near_duplicates(self, filter, keys, limit)?)
    }

    fn insert_held(&self, held: &HeldCandidate, actor: &Actor) -> Result<(), StoreError> {
        Ok(self.write(|tx| held::insert(tx, held, actor))?)
    }

    fn get_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::get(&self.read(), workspace, id)?)
    }

    fn waiting_held(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        content_hash: &str,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::waiting(
            &self.read(),
            workspace,
            project,
            content_hash,
        )?)
    }

    fn list_held(
        &self,
        workspace: &Workspace,
        status: Option<HeldStatus>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<HeldCandidate>, StoreError> {
        Ok(self.write(|tx| {
            held::expire(tx, workspace, now, actor)?;
            held::list(tx, workspace, status)
        })?)
    }

    fn expire_held(
        &self,
        workspace: &Workspace,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.write(|tx| held::expire(tx, workspace, now, actor))?)
    }

    fn store_held_memory(
        &self,
        workspace: &Workspace,
        held: HeldId,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        supersede: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(held::store_held_memory(
            self, workspace, held, record, neighbours, interfere, supersede, now, actor,
        )?)
    }

    fn admit_held_update(
        &self,
        workspace: &Workspace,
        held: HeldId,
        target: MemoryId,
        content: &str,
        embedding: Option<&Embedding>,
        near_duplicate_keys: &[i64],
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(self.write(|tx| {
            if let Some(decided) = held::still_held(tx, workspace, held)? {
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
            events::log_event(
                tx,
                now,
                EventKind::Update,
                workspace,
                Some(target),
                actor,
                detail,
            )?;
            held::close(
                tx,
                workspace,
                held,
                HeldStatus::Admitted,
                Some(target),
                now,
                actor,
            )
        })?)
    }

    fn close_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
        status: HeldStatus,
        memory_id: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError> {
        Ok(self.write(|tx| held::close(tx, workspace, id, status, memory_id, now, actor))?)
    }

    fn get_forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, StoreError> {
        Ok(reads::get_forgotten(self, workspace, id)?)
    }

    fn id_in_use(&self, id: MemoryId) -> Result<bool, StoreError> {
        Ok(self
            .lock()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
                [id.to_string()],
                |row| row.get(0),
            )
            .map_err(SqliteStoreError::from)?)
    }

    fn placed_texts(&self, workspace: &Workspace) -> Result<Vec<PlacedText>, StoreError> {
        Ok(places::texts(&self.lock(), workspace)?)
    }

    fn rewrite_placed_text(
        &self,
        workspace: &Workspace,
        place: &TextPlace,
        text: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(places::rewrite_placed_text(
            self, workspace, place, text, now, actor,
        )?)
    }

    fn contents(&self, workspace: &Workspace) -> Result<Vec<StoredText>, StoreError> {
        Ok(reads::contents(self, workspace)?)
    }

    fn replace_fields(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        project: Option<&str>,
        source: &str,
        metadata: &serde_json::Value,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(
            self.change_memory(workspace, id, event, detail, now, actor, |tx| {
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
            })?,
        )
    }

    fn replace_content(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        content: &str,
        embedding: Option<&Embedding>,
        near_duplicate_keys: &[i64],
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(
            self.change_memory(workspace, id, event, detail, now, actor, |tx| {
                writes::replace_content(
                    tx,
                    workspace,
                    id,
                    content,
                    embedding,
                    near_duplicate_keys,
                    now,
                )
            })?,
        )
    }

    fn sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sync::cursor(&self.lock(), workspace, connector)?)
    }

    fn save_sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
        cursor: Option<&str>,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(sync::save_cursor(
            &self.lock(),
            workspace,
            connector,
            cursor,
            now,
        )?)
    }

    fn synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
    ) -> Result<Option<SyncedItem>, StoreError> {
        Ok(sync::item(&self.lock(), workspace, connector, source_id)?)
    }

    fn record_synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
        item: &SyncedItem,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(sync::record_item(
            &self.lock(),
            workspace,
            connector,
            source_id,
            item,
            now,
        )?)
    }

    fn save_sync_run(
        &self,
        workspace: &Workspace,
        report: &SyncReport,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.write(|tx| sync::save_run(tx, workspace, report, actor))?)
    }

    fn sync_runs(
        &self,
        workspace: &Workspace,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>, StoreError> {
        Ok(sync::runs(&self.lock(), workspace, connector, limit)?)
    }

    fn sync_run(&self, workspace: &Workspace, id: &str) -> Result<Option<SyncReport>, StoreError> {
        Ok(sync::run(&self.lock(), workspace, id)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn purge(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<PurgeReport>, StoreError> {
        Ok(purge::purge(
            &mut self.lock(),
            self.file_path(),
            workspace,
            id,
            now,
            actor,
        )?)
    }

    fn stale_embeddings(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<StaleEmbedding>, StoreError> {
        Ok(reads::stale_embeddings(self, model, limit)?)
    }

    fn count_stale_embeddings(&self, model: &str) -> Result<u64, StoreError> {
        Ok(reads::count_stale_embeddings(self, model)?)
    }

    fn set_embeddings(&self, vectors: &[(StaleEmbedding, Embedding)]) -> Result<usize, StoreError> {
        Ok(self.write(|tx| {
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
                    writes::write_embedding(tx, seq, embedding)?;
                    written += 1;
                }
            }
            Ok(written)
        })?)
    }

    fn start_session(&self, session: &levh_core::Session) -> Result<(), StoreError> {
        Ok(self.write(|tx| {
            tx.execute(
                "INSERT INTO sessions (id, workspace, project, client, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    session.id.as_str(),
                    session.workspace.as_str(),
                    session.project,
                    session.client,
                    micros(session.started_at),
                ],
            )?;
            Ok(())
        })?)
    }

    fn session_exists(
        &self,
        workspace: &Workspace,
        id: &levh_core::SessionId,
    ) -> Result<bool, StoreError> {
        Ok(self
            .read()
            .query_row(
                "SELECT 1 FROM sessions WHERE workspace = ?1 AND id = ?2",
                params![workspace.as_str(), id.as_str()],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(SqliteStoreError::from)?)
    }

    fn end_session(
        &self,
        workspace: &Workspace,
        id: &levh_core::SessionId,
        now: Timestamp,
    ) -> Result<Option<levh_core::Session>, StoreError> {
        Ok(self.write(|tx| {
            tx.execute(
                "UPDATE sessions SET ended_at = ?3
                 WHERE workspace = ?1 AND id = ?2 AND ended_at IS NULL",
                params![workspace.as_str(), id.as_str(), micros(now)],
            )?;
            Ok(tx
                .query_row(
                    "SELECT project, client, started_at, ended_at FROM sessions
                 WHERE workspace = ?1 AND id = ?2",
                    params![workspace.as_str(), id.as_str()],
                    |row| {
                        let at = |value: Option<i64>| value.map(rows::from_micros);
                        Ok(levh_core::Session {
                            id: id.clone(),
                            workspace: workspace.clone(),
                            project: row.get(0)?,
                            client: row.get(1)?,
                            started_at: at(row.get(2)?).unwrap_or(now),
                            ended_at: at(row.get(3)?),
                        })
                    },
                )
                .optional()?)
        })?)
    }
}

impl VectorIndex for SqliteStore {
    /// An exact scan of every matching vector: fine for tens of thousands of memories;
    /// [`AnnIndex`] puts an approximate index in front of it for large stores.
    fn nearest(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, StoreError> {
        Ok(exact_scan::exact_nearest(
            &self.read(),
            filter,
            model,
            query,
            limit,
        )?)
    }
}
