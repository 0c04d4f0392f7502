//! levh-store: the SQLite implementation of levh-core's [`Store`] and [`VectorIndex`].
//!
//! One file (`$LEVH_HOME/levh.db`) in WAL mode holds memories, their FTS5 index (kept in
//! step by triggers), their vectors, sessions and the append-only event log. Many
//! processes may open it at once: every write is a `BEGIN IMMEDIATE` transaction and the
//! busy timeout makes writers queue instead of failing, so no write is lost and
//! "database is locked" never reaches the user under normal contention.
//!
//! This file only wires the traits to the modules that do the work: writes to memories
//! in `writes`, reads in `reads` (full text in `lexical`, vectors in `exact_scan` and
//! `ann`), the held queue in `held`, sessions in `sessions`, sync state in `sync`, erasure
//! in `purge`. Each returns the crate's own [`SqliteStoreError`], which becomes a
//! [`StoreError`] once, at the trait method.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod ann;
mod attachments;
mod connection;
mod consolidation;
mod entities;
mod error;
mod event_buffer;
mod events;
mod exact_scan;
mod health;
mod held;
mod keys;
mod lease;
mod lexical;
mod lexicon;
mod migrations;
mod places;
mod project_seqs;
mod purge;
mod query;
mod readers;
mod reads;
mod review;
mod rows;
mod sessions;
mod snapshot;
mod standings;
mod sync;
#[cfg(test)]
mod test_records;
mod tokens;
mod vectors;
mod writes;

pub use ann::{AnnConfig, AnnIndex, AnnStats};
pub use connection::{DEFAULT_BUSY_TIMEOUT, LogCheckpoint, SqliteStore};
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
    PlacedText, PurgeReport, RankingRow, Session, SessionId, StaleEmbedding, StandingGroup, Store,
    StoreError, StoreHealth, StoredText, SyncedPage, TextPlace, Timestamp, VectorIndex, Workspace,
};

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
        Ok(self.write(|tx| writes::write_batch(tx, writes, synced, interfere, actor))?)
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
        Ok(reads::ranking_rows(&self.read(), workspace, ids)?)
    }

    fn compared_texts(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, StoreError> {
        Ok(reads::compared_texts(&self.read(), workspace, ids)?)
    }

    fn list(&self, filter: &MemoryFilter, page: Page) -> Result<Vec<Memory>, StoreError> {
        Ok(reads::list(self, filter, page)?)
    }

    fn count(&self, filter: &MemoryFilter) -> Result<u64, StoreError> {
        Ok(reads::count(self, filter)?)
    }

    fn keyed(&self, filter: &MemoryFilter, key: &str) -> Result<Vec<Memory>, StoreError> {
        Ok(keys::keyed(self, filter, key)?)
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
        Ok(keys::store_keyed(
            self, record, neighbours, interfere, key, replaces, actor,
        )?)
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
        Ok(keys::adopt_key(
            self, workspace, project, key, memory, now, actor,
        )?)
    }

    fn matching_ids(&self, filter: &MemoryFilter) -> Result<Vec<MemoryId>, StoreError> {
        Ok(reads::matching_ids(self, filter)?)
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
        Ok(reads::embeddings(&self.read(), workspace, ids, model)?)
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

    fn forget(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(self.write(|tx| writes::forget(tx, workspace, id, now, actor))?)
    }

    fn consolidate(
        &self,
        summary: &NewMemoryRecord,
        members: &[MemoryId],
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(self.write(|tx| consolidation::consolidate(tx, summary, members, actor))?)
    }

    fn undo_consolidation(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<Vec<MemoryId>>, StoreError> {
        Ok(self.write(|tx| consolidation::undo(tx, workspace, summary, now, actor))?)
    }

    fn consolidated_members(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(consolidation::members(self, workspace, summary)?)
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
        Ok(self.write(|tx| {
            consolidation::promote(tx, workspace, ids, stability_hours, why, now, actor)
        })?)
    }

    fn save_attachment(
        &self,
        workspace: &Workspace,
        attachment: &levh_core::Attachment,
        file: &[u8],
    ) -> Result<bool, StoreError> {
        let database = self.file_path().ok_or_else(|| {
            StoreError::new(std::io::Error::other(
                "attachments need a store on disk (this one is in memory)",
            ))
        })?;
        attachments::put_file(&attachments::directory(database), &attachment.sha256, file)
            .map_err(StoreError::new)?;
        Ok(attachments::record(self, workspace, attachment)?)
    }

    fn attachments(
        &self,
        workspace: &Workspace,
        attached_to: MemoryId,
    ) -> Result<Vec<levh_core::Attachment>, StoreError> {
        Ok(attachments::of_owner(self, workspace, attached_to)?)
    }

    fn attachment(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Option<levh_core::Attachment>, StoreError> {
        Ok(attachments::by_memory(self, workspace, memory)?)
    }

    fn working_sessions(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, levh_core::SessionId)>, StoreError> {
        Ok(consolidation::working_of(self, workspace, ids)?)
    }

    fn review_schedules(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, levh_core::review::ReviewSchedule)>, StoreError> {
        Ok(review::review_schedules(self, workspace, ids)?)
    }

    fn review_hidden(&self, workspace: &Workspace, now: Timestamp) -> Result<usize, StoreError> {
        Ok(review::review_hidden(self, workspace, now)?)
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
        Ok(review::record_review(
            self, workspace, id, decision, schedule, now, actor,
        )?)
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

    fn log_event(
        &self,
        workspace: &Workspace,
        kind: EventKind,
        actor: &Actor,
        at: Timestamp,
        detail: &serde_json::Value,
    ) -> Result<(), StoreError> {
        Ok(self.log_buffered(event_buffer::Pending {
            at,
            kind,
            workspace: workspace.clone(),
            actor: actor.clone(),
            detail: detail.clone(),
        })?)
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
        Ok(held::admit_held_update(
            self,
            workspace,
            held,
            target,
            content,
            embedding,
            near_duplicate_keys,
            detail,
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

    fn get_forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, StoreError> {
        Ok(reads::get_forgotten(self, workspace, id)?)
    }

    fn id_in_use(&self, id: MemoryId) -> Result<bool, StoreError> {
        Ok(reads::id_in_use(&self.lock(), id)?)
    }

    fn identical_memories(
        &self,
        filter: &MemoryFilter,
        content_hash: &str,
    ) -> Result<Vec<MemoryId>, StoreError> {
        Ok(reads::identical(&self.read(), filter, content_hash)?)
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
            self.change_memory(workspace, id, event, detail, now, actor, |tx| {
                writes::set_valid_from(tx, workspace, id, valid_from, now)
            })?,
        )
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
                writes::replace_fields(tx, workspace, id, project, source, metadata, now)
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

    fn mark_listed(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
        source_ids: &[String],
    ) -> Result<(), StoreError> {
        Ok(self.write(|tx| sync::mark_listed(tx, workspace, connector, listing, source_ids))?)
    }

    fn listed_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sync::listed_items(
            &self.read(),
            workspace,
            connector,
            listing,
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
        Ok(self.write(|tx| {
            sync::retire_items(tx, workspace, connector, removals, run_id, now, actor)
        })?)
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
        let mut conn = self.lock();
        let files = attachments::files_of(&conn, workspace, id)?;
        let mut report = purge::purge(&mut conn, self.file_path(), workspace, id, now, actor)?;
        // The attached files the purge left unnamed go too; one that cannot be deleted is
        // residue like any other.
        if let (Some(report), Some(database)) = (report.as_mut(), self.file_path()) {
            let left =
                attachments::remove_unreferenced(&conn, &attachments::directory(database), &files)?;
            report.residue.extend(left);
        }
        Ok(report)
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
        Ok(self.write(|tx| writes::set_embeddings(tx, vectors))?)
    }

    fn start_session(&self, session: &Session) -> Result<(), StoreError> {
        Ok(self.write(|tx| sessions::start(tx, session))?)
    }

    fn session(
        &self,
        workspace: &Workspace,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError> {
        Ok(sessions::get(&self.read(), workspace, id)?)
    }

    fn session_memories(
        &self,
        workspace: &Workspace,
        session: &Session,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(sessions::memories(&self.read(), workspace, session, limit)?)
    }

    fn sessions(
        &self,
        workspace: &Workspace,
        before: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<levh_core::SessionListing>, StoreError> {
        Ok(sessions::list(&self.read(), workspace, before, limit)?)
    }

    fn session_exists(&self, workspace: &Workspace, id: &SessionId) -> Result<bool, StoreError> {
        Ok(sessions::exists(&self.read(), workspace, id)?)
    }

    fn end_session(
        &self,
        workspace: &Workspace,
        id: &SessionId,
        now: Timestamp,
    ) -> Result<Option<Session>, StoreError> {
        Ok(self.write(|tx| sessions::end(tx, workspace, id, now))?)
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
