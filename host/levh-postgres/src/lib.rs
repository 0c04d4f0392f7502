//! levh-postgres: levh-core's [`Store`], [`VectorIndex`] and [`ServerStore`] on a
//! PostgreSQL database with pgvector — the team server, where many `levh serve`
//! processes share one memory that the database's own replicas and backups keep.
//!
//! It mirrors the SQLite store (`levh-store`) table for table and rule for rule, so the
//! engine behaves the same on both; what differs is how each database gets there:
//! full text is a generated `tsvector` column with a GIN index instead of FTS5; vectors
//! are `vector(N)` with an HNSW index per dimension instead of an exact scan; and where
//! SQLite serialises all writers, the decisions that must be taken once (held
//! candidates, keyed memories, reinforcement) lock the rows or keys they decide.
//!
//! This file only wires the traits to the modules that do the work. Each returns the
//! crate's own [`PostgresStoreError`], which becomes a [`StoreError`] once, at the trait
//! method.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod attachments;
mod connection;
mod consolidation;
mod entities;
mod error;
mod events;
mod health;
mod held;
mod keys;
mod lexical;
mod migrations;
mod places;
mod presence;
mod purge;
mod query;
mod reads;
mod reembed;
mod reports;
mod rows;
mod sessions;
mod standings;
mod statistics;
mod sync;
#[cfg(feature = "testing")]
pub mod testing;
mod tokens;
mod vectors;
mod writes;

pub use connection::{PoolOptions, PostgresStore};
pub use error::PostgresStoreError;
pub use health::DatabaseFacts;
pub use migrations::latest_version as latest_schema_version;
pub use tokens::secret_hash;

use levh_core::entities::{
    CommitmentDone, ConflictRecord, ConflictResolution, EntityEdge, EntityId, EntityKey,
    EntityMemory, EntityQuery, EntityRole, EntityStore, EntitySummary, IndexedMemory,
};
use levh_core::sync::{SyncReport, SyncedItem};
use levh_core::{
    Activity, Actor, Backend, BatchWrite, ComparedText, Embedding, EventKind, EventSignal,
    HeldCandidate, HeldClose, HeldId, HeldStatus, Interference, IssuedToken, KindsRead,
    LoggedEvent, Memory, MemoryFilter, MemoryId, MemoryState, NewMemoryRecord, Page, PlacedText,
    Presence, Principal, PurgeReport, RankingRow, Role, ServerStore, Session, SessionId,
    StaleEmbedding, StandingGroup, Store, StoreError, StoreHealth, StoredText, SyncedPage,
    TextPlace, Timestamp, TokenInfo, Usage, VectorIndex, Workspace,
};

impl PostgresStore {
    /// One change to memory `id` and its `event`, in one transaction; `change` says
    /// whether the memory was there.
    #[allow(clippy::too_many_arguments)]
    fn change_memory(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        event: EventKind,
        detail: &serde_json::Value,
        now: Timestamp,
        actor: &Actor,
        mut change: impl FnMut(&mut crate::connection::Tx<'_>) -> Result<bool, PostgresStoreError>,
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| {
            let changed = change(tx)?;
            if changed {
                events::log_event(tx, now, event, workspace, Some(id), actor, detail.clone())?;
            }
            Ok(changed)
        })
    }
}

impl Store for PostgresStore {
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn insert(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Interference>, StoreError> {
        self.ensure_vector_indexes(record.embedding.iter().map(|e| e.vector.len()))?;
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
        self.ensure_vector_indexes(writes.iter().filter_map(|write| match write {
            BatchWrite::Memory { record, .. } => record.embedding.as_ref().map(|e| e.vector.len()),
            BatchWrite::Held { .. } => None,
        }))?;
        let applied = self.write(|tx| writes::write_batch(tx, writes, synced, interfere, actor))?;
        self.note_rows_written(writes.len() as u64);
        Ok(applied)
    }

    fn get(&self, workspace: &Workspace, id: MemoryId) -> Result<Option<Memory>, StoreError> {
        Ok(reads::get_live(&mut *self.connection()?, workspace, id)?)
    }

    fn get_forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, StoreError> {
        Ok(self.forgotten(workspace, id)?)
    }

    fn id_in_use(&self, id: MemoryId) -> Result<bool, StoreError> {
        Ok(self.is_id_in_use(id)?)
    }

    fn identical_memories(
        &self,
        filter: &MemoryFilter,
        content_hash: &str,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.identical(filter, content_hash)?)
    }

    fn get_many(&self, workspace: &Workspace, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError> {
        Ok(self.get_many_memories(workspace, ids)?)
    }

    fn ranking_rows(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<RankingRow>, StoreError> {
        Ok(self.ranking_rows_of(workspace, ids)?)
    }

    fn compared_texts(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, StoreError> {
        Ok(self.compared_texts_of(workspace, ids)?)
    }

    fn list(&self, filter: &MemoryFilter, page: Page) -> Result<Vec<Memory>, StoreError> {
        Ok(self.list_memories(filter, page)?)
    }

    fn count(&self, filter: &MemoryFilter) -> Result<u64, StoreError> {
        Ok(self.count_memories(filter)?)
    }

    fn keyed(&self, filter: &MemoryFilter, key: &str) -> Result<Vec<Memory>, StoreError> {
        Ok(self.keyed_memories(filter, key)?)
    }

    fn store_keyed(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        key: &str,
        replaces: Option<MemoryId>,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.store_under_key(record, neighbours, interfere, key, replaces, actor)?)
    }

    fn adopt_key(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        key: &str,
        memory: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.adopt_as_key(workspace, project, key, memory, now, actor)?)
    }

    fn matching_ids(&self, filter: &MemoryFilter) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.matching(filter)?)
    }

    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn lexical_candidates(
        &self,
        filter: &MemoryFilter,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(MemoryId, f64)>, StoreError> {
        Ok(self.lexical(filter, query, limit)?)
    }

    fn embeddings(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        model: &str,
    ) -> Result<Vec<(MemoryId, Vec<f32>)>, StoreError> {
        Ok(self.embeddings_of(workspace, ids, model)?)
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
        Ok(self.write(|tx| writes::update_states(tx, workspace, ids, event, actor, now, update))?)
    }

    fn review_schedules(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, levh_core::review::ReviewSchedule)>, StoreError> {
        Ok(self.schedules_of(workspace, ids)?)
    }

    fn review_hidden(&self, workspace: &Workspace, now: Timestamp) -> Result<usize, StoreError> {
        Ok(self.hidden_from_review(workspace, now)?)
    }

    fn record_review(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        decision: levh_core::review::ReviewDecision,
        schedule: &levh_core::review::ReviewSchedule,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.review(workspace, id, decision, schedule, now, actor)?)
    }

    fn consolidate(
        &self,
        summary: &NewMemoryRecord,
        members: &[MemoryId],
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.consolidate_into(summary, members, actor)?)
    }

    fn undo_consolidation(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<Vec<MemoryId>>, StoreError> {
        Ok(self.undo_consolidation_of(workspace, summary, now, actor)?)
    }

    fn consolidated_members(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.members_of(workspace, summary)?)
    }

    fn save_attachment(
        &self,
        workspace: &Workspace,
        attachment: &levh_core::Attachment,
        file: &[u8],
    ) -> Result<bool, StoreError> {
        Ok(self.attach(workspace, attachment, file)?)
    }

    fn attachments(
        &self,
        workspace: &Workspace,
        attached_to: MemoryId,
    ) -> Result<Vec<levh_core::Attachment>, StoreError> {
        Ok(self.attachments_of(workspace, attached_to)?)
    }

    fn attachment(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Option<levh_core::Attachment>, StoreError> {
        Ok(self.attachment_of(workspace, memory)?)
    }

    fn promote(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        stability_hours: f64,
        why: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.promote_working(workspace, ids, stability_hours, why, now, actor)?)
    }

    fn working_sessions(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, SessionId)>, StoreError> {
        Ok(self.working_of(workspace, ids)?)
    }

    fn forget(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.write(|tx| writes::forget(tx, workspace, id, now, actor, serde_json::json!({})))?)
    }

    fn standings(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, StoreError> {
        Ok(self.standing_groups(workspace, project, now, visit)?)
    }

    fn health(&self) -> Result<StoreHealth, StoreError> {
        Ok(self.check_health()?)
    }

    fn near_duplicates(
        &self,
        filter: &MemoryFilter,
        keys: &[i64],
        limit: usize,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.near_duplicates_of(filter, keys, limit)?)
    }

    fn log_event(
        &self,
        workspace: &Workspace,
        kind: EventKind,
        actor: &Actor,
        at: Timestamp,
        detail: &serde_json::Value,
    ) -> Result<(), StoreError> {
        Ok(self
            .write(|tx| events::log_event(tx, at, kind, workspace, None, actor, detail.clone()))?)
    }

    fn insert_held(&self, held: &HeldCandidate, actor: &Actor) -> Result<(), StoreError> {
        Ok(self.write(|tx| held::insert(tx, held, actor))?)
    }

    fn get_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::get(&mut *self.connection()?, workspace, id)?)
    }

    fn waiting_held(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        content_hash: &str,
    ) -> Result<Option<HeldCandidate>, StoreError> {
        Ok(held::waiting(
            &mut *self.connection()?,
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
        Ok(self.admit_held_memory(
            workspace, held, record, neighbours, interfere, supersede, now, actor,
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
        Ok(self.admit_update(
            workspace,
            held,
            target,
            content,
            embedding,
            near_duplicate_keys,
            &detail,
            now,
            actor,
        )?)
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

    fn contents(&self, workspace: &Workspace) -> Result<Vec<StoredText>, StoreError> {
        Ok(self.stored_texts(workspace)?)
    }

    fn placed_texts(&self, workspace: &Workspace) -> Result<Vec<PlacedText>, StoreError> {
        Ok(self.texts(workspace)?)
    }

    fn rewrite_placed_text(
        &self,
        workspace: &Workspace,
        place: &TextPlace,
        text: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.rewrite_text(workspace, place, text, now, actor)?)
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
            self.change_memory(workspace, id, event, &detail, now, actor, |tx| {
                writes::replace_fields(tx, workspace, id, project, source, metadata, now)
            })?,
        )
    }

    fn set_valid_from(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        valid_from: Timestamp,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(
            self.change_memory(workspace, id, event, &detail, now, actor, |tx| {
                writes::set_valid_from(tx, workspace, id, valid_from, now)
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
        self.ensure_vector_indexes(embedding.iter().map(|e| e.vector.len()))?;
        Ok(
            self.change_memory(workspace, id, event, &detail, now, actor, |tx| {
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
        Ok(sync::cursor(
            &mut *self.connection()?,
            workspace,
            connector,
        )?)
    }

    fn save_sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
        cursor: Option<&str>,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(sync::save_cursor(
            &mut *self.connection()?,
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
        Ok(sync::item(
            &mut *self.connection()?,
            workspace,
            connector,
            source_id,
        )?)
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
            &mut *self.connection()?,
            workspace,
            connector,
            source_id,
            item,
            now,
        )?)
    }

    fn mark_listed(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
        source_ids: &[String],
    ) -> Result<(), StoreError> {
        Ok(PostgresStore::mark_listed(
            self, workspace, connector, listing, source_ids,
        )?)
    }

    fn listed_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(PostgresStore::listed_items(
            self, workspace, connector, listing,
        )?)
    }

    fn retire_synced_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        removals: &[levh_core::sync::SourceRemoval],
        run_id: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<levh_core::sync::Retirement>, StoreError> {
        Ok(self.retire_items(workspace, connector, removals, run_id, now, actor)?)
    }

    fn save_sync_run(
        &self,
        workspace: &Workspace,
        report: &SyncReport,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.save_run(workspace, report, actor)?)
    }

    fn sync_runs(
        &self,
        workspace: &Workspace,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>, StoreError> {
        Ok(self.runs(workspace, connector, limit)?)
    }

    fn sync_run(&self, workspace: &Workspace, id: &str) -> Result<Option<SyncReport>, StoreError> {
        Ok(self.run(workspace, id)?)
    }

    fn purge(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<PurgeReport>, StoreError> {
        Ok(self.erase(workspace, id, now, actor)?)
    }

    fn stale_embeddings(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<StaleEmbedding>, StoreError> {
        Ok(self.stale(model, limit)?)
    }

    fn count_stale_embeddings(&self, model: &str) -> Result<u64, StoreError> {
        Ok(self.count_stale(model)?)
    }

    fn set_embeddings(&self, vectors: &[(StaleEmbedding, Embedding)]) -> Result<usize, StoreError> {
        Ok(self.write_embeddings(vectors)?)
    }

    fn start_session(&self, session: &Session) -> Result<(), StoreError> {
        Ok(self.start_session_row(session)?)
    }

    fn end_session(
        &self,
        workspace: &Workspace,
        id: &SessionId,
        now: Timestamp,
    ) -> Result<Option<Session>, StoreError> {
        Ok(self.end_session_row(workspace, id, now)?)
    }

    fn session(
        &self,
        workspace: &Workspace,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError> {
        Ok(self.session_row(workspace, id)?)
    }

    fn session_memories(
        &self,
        workspace: &Workspace,
        session: &Session,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(self.memories_of_session(workspace, session, limit)?)
    }

    fn sessions(
        &self,
        workspace: &Workspace,
        before: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<levh_core::SessionListing>, StoreError> {
        Ok(self.session_listings(workspace, before, limit)?)
    }

    fn session_exists(&self, workspace: &Workspace, id: &SessionId) -> Result<bool, StoreError> {
        Ok(self.session_row(workspace, id)?.is_some())
    }
}

impl VectorIndex for PostgresStore {
    /// pgvector's HNSW index, filtered in the same query (see `vectors.rs`).
    fn nearest(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, StoreError> {
        Ok(self.nearest_vectors(filter, model, query, limit)?)
    }
}

/// Runs `work` where the synchronous driver may block: right here on an ordinary thread,
/// or on a thread of its own when called from an async runtime's thread — where the driver
/// would panic ("Cannot start a runtime from within a runtime"). The engine calls the
/// store from `spawn_blocking` threads, but a server calls [`ServerStore`] from many
/// places (a feed, a session's end in a `Drop`), so those methods are safe anywhere.
fn off_runtime<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    std::thread::scope(|threads| {
        threads
            .spawn(work)
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Every method runs [`off_runtime`].
impl ServerStore for PostgresStore {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn principal_for_token(&self, secret: &str) -> Result<Option<Principal>, StoreError> {
        off_runtime(|| {
            Ok(self.verify_token(secret)?.map(|token| Principal {
                workspace: token.workspace,
                role: token.role,
                name: Some(token.id),
            }))
        })
    }

    fn liveness(&self) -> Result<(i64, String), StoreError> {
        off_runtime(|| Ok(PostgresStore::liveness(self)?))
    }

    fn last_event_seq(&self) -> Result<i64, StoreError> {
        off_runtime(|| Ok(PostgresStore::last_event_seq(self)?))
    }

    fn events_after(&self, seq: i64, limit: usize) -> Result<Vec<LoggedEvent>, StoreError> {
        off_runtime(|| Ok(PostgresStore::events_after(self, seq, limit)?))
    }

    fn event_signal(&self) -> Result<Option<Box<dyn EventSignal>>, StoreError> {
        off_runtime(|| {
            let listener: Box<dyn EventSignal> = Box::new(self.listen_for_events()?);
            Ok(Some(listener))
        })
    }

    fn memory_events(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        off_runtime(|| Ok(PostgresStore::memory_events(self, workspace, id, limit)?))
    }

    fn activity(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Activity, StoreError> {
        off_runtime(|| Ok(self.activity_since(workspace, since, scan_at_most)?))
    }

    fn events_of_kinds(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        kinds: &[EventKind],
        scan_at_most: usize,
    ) -> Result<KindsRead, StoreError> {
        off_runtime(|| Ok(self.kinds_since(workspace, since, kinds, scan_at_most)?))
    }

    fn usage(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Usage, StoreError> {
        off_runtime(|| Ok(self.usage_since(workspace, since, scan_at_most)?))
    }

    fn touch_presence(&self, presence: &Presence) -> Result<(), StoreError> {
        off_runtime(|| Ok(self.touch(presence)?))
    }

    fn end_presence(&self, id: &str, at: Timestamp) -> Result<(), StoreError> {
        off_runtime(|| Ok(self.end(id, at)?))
    }

    fn presences(
        &self,
        workspace: &Workspace,
        ended_after: Timestamp,
    ) -> Result<Vec<Presence>, StoreError> {
        off_runtime(|| Ok(self.present(workspace, ended_after)?))
    }

    fn issue_token(
        &self,
        workspace: &Workspace,
        role: Role,
        label: Option<&str>,
        now: Timestamp,
    ) -> Result<IssuedToken, StoreError> {
        off_runtime(|| Ok(self.create_token(workspace, role, label, now)?))
    }

    fn workspace_tokens(&self, workspace: &Workspace) -> Result<Vec<TokenInfo>, StoreError> {
        off_runtime(|| Ok(self.list_tokens(Some(workspace))?))
    }

    fn revoke_workspace_token(
        &self,
        workspace: &Workspace,
        id: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        off_runtime(|| Ok(self.revoke_token(Some(workspace), id, now)?))
    }

    fn all_tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        off_runtime(|| Ok(self.list_tokens(None)?))
    }

    fn revoke_any_token(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        off_runtime(|| Ok(self.revoke_token(None, id, now)?))
    }
}

impl EntityStore for PostgresStore {
    fn known_people(&self, workspace: &Workspace) -> Result<Vec<String>, StoreError> {
        Ok(self.people(workspace)?)
    }

    fn index_entities(
        &self,
        workspace: &Workspace,
        batch: &[IndexedMemory],
        version: u32,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(self.index(workspace, batch, version, now)?)
    }

    fn unindexed_memories(
        &self,
        workspace: &Workspace,
        version: u32,
        after: Option<MemoryId>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(self.unindexed(workspace, version, after, limit)?)
    }

    fn count_unindexed(&self, workspace: &Workspace, version: u32) -> Result<u64, StoreError> {
        Ok(self.count_unindexed_of(workspace, version)?)
    }

    fn mark_all_unindexed(&self, workspace: &Workspace) -> Result<u64, StoreError> {
        Ok(self.unindex_all(workspace)?)
    }

    fn entities(
        &self,
        workspace: &Workspace,
        query: &EntityQuery,
    ) -> Result<Vec<EntitySummary>, StoreError> {
        Ok(self.find_entities(workspace, query)?)
    }

    fn entities_by_id(
        &self,
        workspace: &Workspace,
        ids: &[EntityId],
    ) -> Result<Vec<EntitySummary>, StoreError> {
        Ok(self.entities_with_ids(workspace, ids)?)
    }

    fn entity_by_key(
        &self,
        workspace: &Workspace,
        key: &EntityKey,
    ) -> Result<Option<EntityId>, StoreError> {
        Ok(self.entity_of_key(workspace, key)?)
    }

    fn entity_memories(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<EntityMemory>, StoreError> {
        Ok(self.memories_of_entity(workspace, id, limit)?)
    }

    fn memory_entities(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Vec<(EntityId, Vec<EntityRole>)>, StoreError> {
        Ok(self.entities_of_memory(workspace, memory)?)
    }

    fn related_entities(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<(EntityId, u64)>, StoreError> {
        Ok(self.related(workspace, id, limit)?)
    }

    fn memberships(
        &self,
        workspace: &Workspace,
        id: EntityId,
    ) -> Result<Vec<EntityId>, StoreError> {
        Ok(PostgresStore::members(self, workspace, id)?)
    }

    fn entity_edges(
        &self,
        workspace: &Workspace,
        among: &[EntityId],
        limit: usize,
    ) -> Result<Vec<EntityEdge>, StoreError> {
        Ok(self.edges(workspace, among, limit)?)
    }

    fn merge_entities(
        &self,
        workspace: &Workspace,
        into: EntityId,
        from: EntityId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.merge_into(workspace, into, from, now, actor)?)
    }

    fn commitments_done(&self, workspace: &Workspace) -> Result<Vec<CommitmentDone>, StoreError> {
        Ok(self.done_commitments(workspace)?)
    }

    fn mark_commitment_done(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
        done: &CommitmentDone,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(self.commitment_done(workspace, memory, done, actor)?)
    }

    fn record_conflicts(
        &self,
        workspace: &Workspace,
        found: &[(MemoryId, MemoryId, String)],
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<ConflictRecord>, StoreError> {
        Ok(self.record_conflict_pairs(workspace, found, now, actor)?)
    }

    fn conflicts(
        &self,
        workspace: &Workspace,
        open: bool,
    ) -> Result<Vec<ConflictRecord>, StoreError> {
        Ok(self.conflict_records(workspace, open)?)
    }

    fn resolve_conflict(
        &self,
        workspace: &Workspace,
        id: &str,
        resolution: ConflictResolution,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.resolve_conflict_once(workspace, id, resolution, now, actor)?)
    }
}
