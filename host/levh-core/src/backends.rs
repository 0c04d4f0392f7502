//! The traits other crates implement for the engine: storage ([`Store`]), nearest-vector
//! search ([`VectorIndex`]) and embeddings ([`Embedder`]). The engine holds them as trait
//! objects, so only the binary names concrete types.

use std::fmt;

use serde::Serialize;

use crate::sync::{SyncReport, SyncedItem};
use crate::{
    Actor, Embedding, EventKind, HeldCandidate, HeldId, HeldStatus, Interference, Kind, Memory,
    MemoryId, MemoryState, NewMemoryRecord, Timestamp, Workspace,
};

/// A storage backend failure, carried opaquely through the engine. Its message includes
/// the backend's, so the backend error is not also a `source` (a printed chain would
/// say it twice).
#[derive(Debug, thiserror::Error)]
#[error("storage error: {0}")]
pub struct StoreError(pub Box<dyn std::error::Error + Send + Sync>);

impl StoreError {
    /// Wraps any backend error.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(error.into())
    }

    /// A write refused because the disk holding the store is full: nothing was written.
    pub fn disk_full(detail: impl Into<String>) -> Self {
        Self(Box::new(DiskFull(detail.into())))
    }

    /// Whether the disk holding the store is full (a condition a person can fix, not a
    /// fault of levh's).
    pub fn is_disk_full(&self) -> bool {
        self.0.downcast_ref::<DiskFull>().is_some()
    }

    /// A page of a list asked to continue after a memory that is no longer stored
    /// (purged while the caller was listing): the caller's to start again, not a fault.
    pub fn cursor_gone(detail: impl Into<String>) -> Self {
        Self(Box::new(CursorGone(detail.into())))
    }

    /// Whether this is [`StoreError::cursor_gone`].
    pub fn is_cursor_gone(&self) -> bool {
        self.0.downcast_ref::<CursorGone>().is_some()
    }

    /// A batch refused because another writer (a second server on the same database, or
    /// another request of this one) stored the same text after the gate judged it:
    /// nothing was written, and the batch is to be judged again.
    pub fn raced(detail: impl Into<String>) -> Self {
        Self(Box::new(Raced(detail.into())))
    }

    /// Whether this is [`StoreError::raced`].
    pub fn is_raced(&self) -> bool {
        self.0.downcast_ref::<Raced>().is_some()
    }
}

/// A list's cursor names a memory that is no longer stored.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CursorGone(pub String);

/// Another writer stored the same text after the gate judged a batch.
#[derive(Debug, thiserror::Error)]
#[error("another writer stored the same text meanwhile ({0})")]
pub struct Raced(pub String);

/// The disk holding the store is full.
#[derive(Debug, thiserror::Error)]
#[error("the disk holding the store is full ({0})")]
pub struct DiskFull(pub String);

/// An embedder failure.
#[derive(Debug, thiserror::Error)]
#[error("embedding error: {0}")]
pub struct EmbedError(pub Box<dyn std::error::Error + Send + Sync>);

impl EmbedError {
    /// Wraps any embedder error.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(error.into())
    }
}

/// Which memories a read may see. Applied by the store BEFORE any ranking or limit, so a
/// filtered recall fills its page from the matching memories only (SPEC §4.1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryFilter {
    /// Mandatory: nothing crosses workspaces.
    pub workspace: Workspace,
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only this source.
    pub source: Option<String>,
    /// Only memories recorded at or after this instant.
    pub created_after: Option<Timestamp>,
    /// Only memories recorded before this instant.
    pub created_before: Option<Timestamp>,
    /// Only memories whose validity window contains this world time
    /// (`valid_from <= t < valid_to`). `None`: any validity.
    pub valid_at: Option<Timestamp>,
    /// Only memories not yet retired at this time (`valid_to` unset or later), whenever
    /// their validity starts: what the gate compares a candidate with, so a future-dated
    /// fact (a calendar event next week) is still recognised as a duplicate.
    pub not_retired_at: Option<Timestamp>,
    /// What levh knew at this record time: recorded at or before it and not yet forgotten
    /// then. `None`: what levh knows now.
    pub known_at: Option<Timestamp>,
    /// Only pinned (`Some(true)`) or only unpinned (`Some(false)`) memories.
    pub pinned: Option<bool>,
    /// Only memories a newest-first list puts after this one (recorded before it, or at
    /// the same instant and stored before it): a cursor for reading a whole workspace a
    /// page at a time, each page as cheap as the first (an offset re-reads every row
    /// before it: an export of 1M memories took 6 minutes).
    pub listed_after: Option<MemoryId>,
    /// Leave out working memory (SPEC §3: what an agent stored in a session and nothing
    /// promoted yet), except that of the session given: what default recall reads.
    /// `None` shows working memory too (lists, statistics, a memory's page).
    pub working_except: Option<Option<crate::SessionId>>,
    /// Only forgotten memories (retired from every read, kept until purged): what an
    /// export with `include_forgotten` adds. Ignored with `known_at`.
    pub forgotten: bool,
    /// Only memories this entity (a person, an organization, ...) appears in.
    pub entity: Option<crate::entities::EntityId>,
    /// The order a list is read in, and so what `listed_after` continues from.
    pub order: ListOrder,
}

/// The orders a memory list can be read in, each backed by an index so that every page
/// (after a cursor) is as cheap as the first. Ties go to the newer-stored memory first.
/// (Weakest-first by retention is not here: retention moves with the clock, so no index
/// can hold it; the engine orders by it from its standings, see `Levh::list_by_retention`.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListOrder {
    /// Newest recorded first.
    #[default]
    Created,
    /// Most important first.
    Importance,
    /// Most recently recalled or reinforced first; never recalled last.
    Recalled,
}

/// The outcome of closing a held candidate (compare-and-set on its status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldClose {
    /// It was held and is now closed with the new status.
    Closed,
    /// Someone decided first; this is what they decided.
    AlreadyDecided(HeldStatus),
    /// No such candidate in the workspace.
    Missing,
    /// A discard found the candidate already stored as a memory (an admission that
    /// crashed before closing the row); it stays held.
    AdmissionIncomplete,
}

/// What a purge removed and what, if anything, remains.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PurgeReport {
    /// The erased memory.
    pub memory_id: MemoryId,
    /// Held candidates with the same content that were erased too.
    pub held_removed: u64,
    /// Places where the content or its hash can still be found (empty when clean).
    pub residue: Vec<String>,
}

impl MemoryFilter {
    /// The one rule of what reads show (CLI, REST, MCP, recall, lists, stats): with
    /// `as_of`, memories valid at that world time; without, every memory whose validity
    /// has not ended by `now` — including those valid only from a later time, since what
    /// levh knows about the future (next week's meeting, a deadline) is knowledge now.
    pub fn read_at(mut self, as_of: Option<Timestamp>, now: Timestamp) -> Self {
        match as_of {
            Some(at) => self.valid_at = Some(at),
            None => self.not_retired_at = Some(now),
        }
        self
    }

    /// Everything live in a workspace.
    pub fn workspace(workspace: Workspace) -> Self {
        Self {
            workspace,
            ..Self::default()
        }
    }
}

/// A page of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// At most this many rows.
    pub limit: usize,
    /// After skipping this many.
    pub offset: usize,
}

/// The fields of a memory that statistics and fading need, without its content.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySummary {
    /// Its id.
    pub id: MemoryId,
    /// Its project.
    pub project: Option<String>,
    /// Its kind.
    pub kind: Kind,
    /// Its source.
    pub source: String,
    /// Its model state.
    pub state: MemoryState,
}

/// How many memories [`Store::standings`] found with one set of labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingGroup {
    /// Their project.
    pub project: Option<String>,
    /// Their kind.
    pub kind: Kind,
    /// Their source.
    pub source: String,
    /// How many.
    pub count: u64,
}

/// What `levh doctor` reports about the store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreHealth {
    /// Where the database lives.
    pub path: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// Newest schema version this build knows.
    pub latest_schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// Whether the full-text index answers queries.
    pub fts5: bool,
    /// Whether the FTS index holds exactly the stored memories.
    pub fts_in_step: bool,
    /// Live memories (all workspaces).
    pub memories: u64,
    /// Forgotten memories kept for history.
    pub forgotten: u64,
    /// Rows in the event log.
    pub events: u64,
    /// Stored vectors per embedding model.
    pub embeddings: Vec<(String, u64)>,
    /// Memories and held candidates with a time outside what levh can show (written by an
    /// older levh): they read as the nearest time it can.
    pub times_out_of_range: u64,
}

/// A memory whose vector is missing or of another model, with what to embed.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleEmbedding {
    /// The memory.
    pub id: MemoryId,
    /// Its content (already redacted when it was stored).
    pub content: String,
    /// The hash of that content, so a vector is never written for a stale text.
    pub content_hash: String,
}

/// Where levh keeps a text outside a memory's content and labels: what a secret audit
/// reads besides [`StoredText`]. Exhaustive on purpose: a new place must be read and
/// rewritten by every store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextPlace {
    /// A memory's kind.
    MemoryKind(MemoryId),
    /// A field of a held candidate.
    Held {
        /// The candidate.
        id: HeldId,
        /// Which field.
        field: HeldField,
    },
    /// The id a connector gave a synced item (a file's name, a mail's Message-ID).
    SyncedItem {
        /// The connector.
        connector: String,
        /// The id as stored.
        source_id: String,
    },
    /// A token's label.
    TokenLabel(String),
}

/// A held candidate's field that holds text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldField {
    /// What it would remember.
    Content,
    /// Its kind.
    Kind,
    /// Its project label.
    Project,
    /// Its source label.
    Source,
    /// Its metadata (JSON).
    Metadata,
}

impl HeldField {
    /// The field's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Content => "content",
            Self::Kind => "kind",
            Self::Project => "project",
            Self::Source => "source",
            Self::Metadata => "metadata",
        }
    }
}

impl fmt::Display for TextPlace {
    /// Names the place without the text (a synced item's id may be the secret itself).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MemoryKind(id) => write!(f, "memory {id} kind"),
            Self::Held { id, field } => write!(f, "held candidate {id} {}", field.as_str()),
            Self::SyncedItem { connector, .. } => write!(f, "a synced item's id ({connector})"),
            Self::TokenLabel(id) => write!(f, "token {id} label"),
        }
    }
}

/// A text and where it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedText {
    /// Where.
    pub place: TextPlace,
    /// The text (metadata as JSON).
    pub text: String,
}

/// The text a memory stores besides its vector: what a secret audit reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredText {
    /// The memory.
    pub id: MemoryId,
    /// Its content.
    pub content: String,
    /// Its project label.
    pub project: Option<String>,
    /// Its source label.
    pub source: String,
    /// Its metadata.
    pub metadata: serde_json::Value,
}

/// One write of a batch, in the order the gate judged the batch's items.
///
/// Each carries the memories of the same text the gate saw when it judged it: those of
/// the workspace with the same content hash, not forgotten, in the write's project (any
/// project for a write without one, as the gate compares it), read before the gate's
/// comparison. The store writes a batch only if, inside
/// its write transaction, no other memory of a write's text and no held candidate of it
/// waiting for a person has appeared since: otherwise another writer (a second server on
/// the same database, another request of this one) stored that text between the
/// judgement and the write, and the whole batch is refused with [`StoreError::raced`],
/// to be judged again. Without that, the same text sent to two servers at once was
/// admitted twice (18 of 20 times on PostgreSQL, 11 of 20 with two SQLite servers).
#[derive(Debug, Clone)]
pub enum BatchWrite {
    /// A memory to store, with the older memories it interferes with — stored ones, or
    /// memories written earlier in the same batch.
    Memory {
        /// The memory.
        record: NewMemoryRecord,
        /// Its unpinned neighbours at or above the interference threshold.
        neighbours: Vec<(MemoryId, f64)>,
        /// The memories of the same text the gate saw (see the type's comment).
        identical_seen: Vec<MemoryId>,
    },
    /// A candidate for the held queue.
    Held {
        /// The candidate.
        candidate: HeldCandidate,
        /// The memories of the same text the gate saw (see the type's comment).
        identical_seen: Vec<MemoryId>,
    },
}

impl BatchWrite {
    /// The filter that selects the memories of this write's text (with its content
    /// hash): the ones [`BatchWrite`]'s check reads.
    pub fn identical_filter(&self) -> MemoryFilter {
        let (workspace, project, _, _) = self.identity();
        MemoryFilter {
            project: project.map(str::to_owned),
            ..MemoryFilter::workspace(workspace.clone())
        }
    }

    /// What the store checks before writing: the workspace, project and content hash
    /// of the write's text, and the memories of that text the gate saw.
    pub fn identity(&self) -> (&Workspace, Option<&str>, &str, &[MemoryId]) {
        match self {
            Self::Memory {
                record,
                identical_seen,
                ..
            } => (
                &record.memory.workspace,
                record.memory.project.as_deref(),
                &record.memory.content_hash,
                identical_seen,
            ),
            Self::Held {
                candidate,
                identical_seen,
            } => (
                &candidate.workspace,
                candidate.project.as_deref(),
                &candidate.content_hash,
                identical_seen,
            ),
        }
    }
}

/// What a sync page records beside its writes, in the same transaction, so that a crash
/// leaves either the whole page (its memories, what became of each item, the cursor
/// past it) or none of it, and a re-run fetches the page again.
#[derive(Debug, Clone)]
pub struct SyncedPage {
    /// The workspace synced into.
    pub workspace: Workspace,
    /// The connector whose items these are.
    pub connector: String,
    /// What became of each item, by its source id.
    pub items: Vec<(String, SyncedItem)>,
    /// The cursor's key and where the next page starts (`None`: the source is done).
    pub cursor: Option<(String, Option<String>)>,
    /// When.
    pub now: Timestamp,
}

/// What the gate compares a candidate with: a stored memory's id, content and whether it
/// is pinned — read without the rest of the row, since a capture reads up to twenty.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedText {
    /// The memory.
    pub id: MemoryId,
    /// Its content.
    pub content: String,
    /// Pinned memories are never interfered with.
    pub pinned: bool,
    /// Who wrote it (`cli`, `connector:calendar`, ...).
    pub source: String,
    /// The item's id at its source, for a memory a connector wrote.
    pub source_id: Option<String>,
    /// Its kind (`note`, `event`, ...).
    pub kind: String,
    /// When it became true (an event: when it starts).
    pub valid_from: Timestamp,
}

/// What ranking reads of a stored memory: its model state and the start of its validity
/// (for a query naming a period) — no content, metadata or vector.
#[derive(Debug, Clone, PartialEq)]
pub struct RankingRow {
    /// The memory.
    pub id: MemoryId,
    /// Its model state.
    pub state: MemoryState,
    /// When it became true.
    pub valid_from: Timestamp,
}

/// Persistent storage of memories, sessions and the event log.
///
/// Reads never return forgotten memories unless a filter's `known_at` predates the
/// forgetting. Every mutation is one transaction and appends its event(s), without content.
pub trait Store: crate::entities::EntityStore + Send + Sync + fmt::Debug {
    /// Inserts a new memory with its embedding and logs it; in the same transaction,
    /// applies `interfere` to the current state of each older neighbour (so a concurrent
    /// reinforcement is never overwritten with a stale value). Returns the interference
    /// actually applied (pinned or vanished neighbours are skipped).
    fn insert(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Interference>, StoreError>;

    /// Writes a batch in ONE transaction: each memory (with its vector, keys and `store`
    /// event, and `interfere` applied to the current state of its neighbours, earlier
    /// memories of the batch included) and each held candidate in order, then a sync
    /// page's item records and cursor. All or nothing. Returns the interference applied
    /// per write (empty for held candidates). Refuses the whole batch with
    /// [`StoreError::raced`] when another writer stored a write's text after the gate
    /// judged it (see [`BatchWrite`]); the check runs before the batch writes anything,
    /// so the batch's own writes never count.
    fn write_batch(
        &self,
        writes: &[BatchWrite],
        synced: Option<&SyncedPage>,
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        actor: &Actor,
    ) -> Result<Vec<Vec<Interference>>, StoreError>;

    /// One live memory of the workspace.
    fn get(&self, workspace: &Workspace, id: MemoryId) -> Result<Option<Memory>, StoreError>;

    /// A forgotten memory (retired from every read, kept for history) and when it was
    /// forgotten; `None` when there is no such forgotten memory.
    fn get_forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, StoreError>;

    /// The memories `filter` selects with exactly this content hash: read straight from
    /// the stored rows (never an index that may lag another writer), for the gate's
    /// exact duplicates and what [`BatchWrite`] carries as seen.
    fn identical_memories(
        &self,
        filter: &MemoryFilter,
        content_hash: &str,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Whether any workspace has a memory (forgotten ones included) with this id.
    fn id_in_use(&self, id: MemoryId) -> Result<bool, StoreError>;

    /// Several memories of the workspace by id, forgotten ones included (callers pass ids
    /// that came out of filtered queries), in no particular order; missing ids are skipped.
    fn get_many(&self, workspace: &Workspace, ids: &[MemoryId]) -> Result<Vec<Memory>, StoreError>;

    /// What ranking reads of memories of the workspace by id (forgotten ones included), in
    /// no particular order; missing ids are skipped. Recall ranks a few hundred candidates
    /// to return ten: whole rows for all of them were a tenth of a recall at 100k.
    fn ranking_rows(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<RankingRow>, StoreError> {
        Ok(self
            .get_many(workspace, ids)?
            .into_iter()
            .map(|m| RankingRow {
                id: m.id,
                state: m.state,
                valid_from: m.valid_from,
            })
            .collect())
    }

    /// The id, content and pinning of memories of the workspace (forgotten ones included),
    /// in no particular order; missing ids are skipped.
    fn compared_texts(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, StoreError>;

    /// Memories matching the filter, newest first.
    fn list(&self, filter: &MemoryFilter, page: Page) -> Result<Vec<Memory>, StoreError>;

    /// How many memories match the filter.
    fn count(&self, filter: &MemoryFilter) -> Result<u64, StoreError>;

    /// The memories written under `key` in the filter's workspace and project (none: no
    /// project) that the filter matches — with a read time, the one current then — newest
    /// first, at most 50.
    fn keyed(&self, filter: &MemoryFilter, key: &str) -> Result<Vec<Memory>, StoreError>;

    /// Stores `record` as the current memory of `key` (in its workspace and project) in
    /// place of `replaces`, retiring that one as superseded, with interference applied —
    /// in one transaction, if and only if `replaces` is still the key's current memory
    /// (`None`: the key has none yet). False when it is not: nothing was written.
    fn store_keyed(
        &self,
        record: &NewMemoryRecord,
        neighbours: &[(MemoryId, f64)],
        interfere: &dyn Fn(&MemoryState) -> Option<MemoryState>,
        key: &str,
        replaces: Option<MemoryId>,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// Makes a stored memory the current one of `key`, retiring the one before it (a keyed
    /// candidate a person admitted). False when the memory is not live.
    fn adopt_key(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        key: &str,
        memory: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// The id of every memory the filter matches, in no order: what an order the store
    /// cannot index (retention, which moves with the clock) is intersected with. Ids only,
    /// from the indexes the filter uses: no content is read.
    fn matching_ids(&self, filter: &MemoryFilter) -> Result<Vec<MemoryId>, StoreError>;

    /// Full-text candidates for `query` among memories matching the filter, best first,
    /// with a relevance where higher is better (negated BM25).
    fn lexical_candidates(
        &self,
        filter: &MemoryFilter,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(MemoryId, f64)>, StoreError>;

    /// The stored vectors of `model` for these memories of the workspace.
    fn embeddings(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        model: &str,
    ) -> Result<Vec<(MemoryId, Vec<f32>)>, StoreError>;

    /// Reads each memory, lets `update` compute its new state (`None`: leave it) and
    /// writes it back, all in one write transaction so concurrent updates are never lost.
    /// Logs `event` for every changed memory. Returns the memories as updated.
    fn update_states(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        event: EventKind,
        actor: &Actor,
        now: Timestamp,
        update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
    ) -> Result<Vec<Memory>, StoreError>;

    /// The review schedules of those of `ids` that were ever reviewed.
    fn review_schedules(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, crate::review::ReviewSchedule)>, StoreError>;

    /// How many memories of the workspace the review queue hides at `now` (due later).
    fn review_hidden(&self, workspace: &Workspace, now: Timestamp) -> Result<usize, StoreError>;

    /// Records a person's review decision on a memory: its new schedule, and a `review`
    /// event with the decision in its history. False when there is no live memory `id`.
    fn record_review(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        decision: crate::review::ReviewDecision,
        schedule: &crate::review::ReviewSchedule,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// Stores `summary` and, in the same transaction, retires each of `members` that is
    /// still live, unpinned and not retired, as superseded by the summary (its `valid_to`
    /// before is kept for an undo). Returns the members retired.
    fn consolidate(
        &self,
        summary: &NewMemoryRecord,
        members: &[MemoryId],
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Undoes a consolidation: its members as they were before it (those still superseded
    /// by the summary), the summary forgotten. Returns the members restored; `None` when
    /// `summary` is no live consolidation summary.
    fn undo_consolidation(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<Vec<MemoryId>>, StoreError>;

    /// The members a consolidation summary replaced, oldest first (none for any other id).
    fn consolidated_members(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Keeps an attached file (content-addressed beside the store) and links it: its text
    /// memory `attachment.memory_id` to the memory it is attached to. False when either
    /// memory is not live (nothing linked; the file stays for a retry and goes with the
    /// next purge that looks at it).
    fn save_attachment(
        &self,
        workspace: &Workspace,
        attachment: &crate::Attachment,
        file: &[u8],
    ) -> Result<bool, StoreError>;

    /// The live attachments of a memory, oldest first.
    fn attachments(
        &self,
        workspace: &Workspace,
        attached_to: MemoryId,
    ) -> Result<Vec<crate::Attachment>, StoreError>;

    /// The attachment whose text memory is `memory`, if it is one.
    fn attachment(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Option<crate::Attachment>, StoreError>;

    /// Makes working memories long-term ones, each with a `promote` event saying `why`
    /// and its stability raised to at least `stability_hours` (a new memory's). Returns
    /// those that were working.
    fn promote(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        stability_hours: f64,
        why: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Which of `ids` are still working memory, with their session.
    fn working_sessions(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, crate::SessionId)>, StoreError>;

    /// Retires a memory from every read (kept for `known_at` history). False when there
    /// was no live memory with that id.
    fn forget(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// The live memories of `workspace` (of `project` when given) whose validity has not
    /// ended by `now` — what statistics and the fading list read: how many there are of
    /// each label group, and each one's id and model state through `visit`. No content,
    /// no row per memory: this must stay fast at a million memories.
    fn standings(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, StoreError>;

    /// Store self-checks for `levh doctor`.
    fn health(&self) -> Result<StoreHealth, StoreError>;

    /// Memories matching the filter that share near-duplicate keys with a text, most
    /// shared keys first.
    fn near_duplicates(
        &self,
        filter: &MemoryFilter,
        keys: &[i64],
        limit: usize,
    ) -> Result<Vec<MemoryId>, StoreError>;

    /// Appends an event that changes no memory — a recall's answer (`recall`) — with its
    /// content-free `detail`.
    fn log_event(
        &self,
        workspace: &Workspace,
        kind: EventKind,
        actor: &Actor,
        at: Timestamp,
        detail: &serde_json::Value,
    ) -> Result<(), StoreError>;

    /// Records a held candidate (and a `hold` event).
    fn insert_held(&self, held: &HeldCandidate, actor: &Actor) -> Result<(), StoreError>;

    /// One held candidate of the workspace, whatever its status.
    fn get_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
    ) -> Result<Option<HeldCandidate>, StoreError>;

    /// A candidate still waiting for a person in the workspace and project (`None`: no
    /// project) whose content hashes to `content_hash`, if any: the gate rejects a repeat
    /// of it rather than queueing the same text twice.
    fn waiting_held(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        content_hash: &str,
    ) -> Result<Option<HeldCandidate>, StoreError>;

    /// Held candidates of the workspace, oldest first, optionally of one status. Candidates
    /// past their expiry are first marked `expired` (a status, never a delete).
    fn list_held(
        &self,
        workspace: &Workspace,
        status: Option<HeldStatus>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<HeldCandidate>, StoreError>;

    /// Marks held candidates past their expiry as `expired` (and logs each), without
    /// reading the queue.
    fn expire_held(
        &self,
        workspace: &Workspace,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<(), StoreError>;

    /// Admits a held candidate as a new memory, in one transaction: if and only if the
    /// candidate is still held (compare-and-set), stores the memory, applies interference,
    /// retires `supersede` if given, and closes the candidate as admitted. When someone
    /// decided first (another process, another surface), nothing is written and their
    /// decision is returned. A memory already stored from the candidate (by a build that
    /// wrote it in a transaction of its own and crashed before closing) is kept, not
    /// stored twice.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<HeldClose, StoreError>;

    /// Admits a held update in one transaction: if and only if the candidate is still
    /// held, replaces memory `target`'s content (as [`Store::replace_content`] does,
    /// logging an update with `detail`) and closes the candidate as admitted.
    /// [`HeldClose::Missing`] also when `target` is gone.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<HeldClose, StoreError>;

    /// Closes a held candidate if and only if it is still held (compare-and-set),
    /// recording who decided and when, and logging the decision.
    fn close_held(
        &self,
        workspace: &Workspace,
        id: HeldId,
        status: HeldStatus,
        memory_id: Option<MemoryId>,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<HeldClose, StoreError>;

    /// Every stored memory's text fields in the workspace, forgotten ones too (for secret
    /// audits: a secret in a retired row is still in the file).
    fn contents(&self, workspace: &Workspace) -> Result<Vec<StoredText>, StoreError>;

    /// Every text of the workspace kept outside memories' content and labels (see
    /// [`TextPlace`]), for secret audits.
    fn placed_texts(&self, workspace: &Workspace) -> Result<Vec<PlacedText>, StoreError>;

    /// Replaces the text at `place` with `text` (a held candidate's content hash follows
    /// its content), logging a `redact` event naming the place. False when the place is
    /// gone.
    fn rewrite_placed_text(
        &self,
        workspace: &Workspace,
        place: &TextPlace,
        text: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// Replaces a memory's labels and metadata (secrets found in them), logging `event`
    /// with `detail`. False when there is no such memory.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<bool, StoreError>;

    /// Moves a memory's `valid_from` (a synced item whose time changed at its source),
    /// logging `event` with `detail`. False when there is no such live memory, or its
    /// `valid_to` is not after the new time.
    #[allow(clippy::too_many_arguments)]
    fn set_valid_from(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        valid_from: Timestamp,
        event: EventKind,
        detail: serde_json::Value,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// Replaces a memory's content (and everything derived from it: hash, vector, keys,
    /// full-text entry), logging `event` with `detail`. False when there is no such memory.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<bool, StoreError>;

    /// Where the last sync of a connector stopped.
    fn sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Saves (or clears) a connector's cursor.
    fn save_sync_cursor(
        &self,
        workspace: &Workspace,
        connector: &str,
        cursor: Option<&str>,
        now: Timestamp,
    ) -> Result<(), StoreError>;

    /// What became of an item in earlier syncs.
    fn synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
    ) -> Result<Option<SyncedItem>, StoreError>;

    /// Remembers what became of an item.
    fn record_synced_item(
        &self,
        workspace: &Workspace,
        connector: &str,
        source_id: &str,
        item: &SyncedItem,
        now: Timestamp,
    ) -> Result<(), StoreError>;

    /// Records that the full listing `listing` (a connector's configuration, as its cursor
    /// key) named these items: a later complete listing that does not name one retires it.
    fn mark_listed(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
        source_ids: &[String],
    ) -> Result<(), StoreError>;

    /// The source ids of the items the full listing `listing` named last.
    fn listed_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        listing: &str,
    ) -> Result<Vec<String>, StoreError>;

    /// Retires items gone from their source, in one transaction: each live, unpinned
    /// memory is forgotten (its history says by which run and why), a waiting held
    /// candidate is discarded, and the item is no longer linked to the source (it is new
    /// should it come back). Ids never synced are passed over; the rest are returned.
    fn retire_synced_items(
        &self,
        workspace: &Workspace,
        connector: &str,
        removals: &[crate::sync::SourceRemoval],
        run_id: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<crate::sync::Retirement>, StoreError>;

    /// Creates or updates a sync run record; a finished run is also logged as an event.
    fn save_sync_run(
        &self,
        workspace: &Workspace,
        report: &SyncReport,
        actor: &Actor,
    ) -> Result<(), StoreError>;

    /// Recent sync runs, newest first, optionally of one connector.
    fn sync_runs(
        &self,
        workspace: &Workspace,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>, StoreError>;

    /// One sync run by its id.
    fn sync_run(&self, workspace: &Workspace, id: &str) -> Result<Option<SyncReport>, StoreError>;

    /// Erases a memory (live or forgotten) and every copy of its content: the row, its
    /// vector and keys, its full-text entries, held candidates with the same content;
    /// then compacts the index and the write-ahead log and scans the whole database for
    /// residue. `None` when there is no such memory.
    fn purge(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<PurgeReport>, StoreError>;

    /// Up to `limit` memories, in every workspace and forgotten ones included (a
    /// `known_at` recall still reads them), whose stored vector is missing or made by
    /// another model than `model`, oldest first: what `levh reembed` works through.
    fn stale_embeddings(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<StaleEmbedding>, StoreError>;

    /// How many memories [`Store::stale_embeddings`] would eventually return.
    fn count_stale_embeddings(&self, model: &str) -> Result<u64, StoreError>;

    /// Replaces memories' vectors in one transaction, each only if the memory still has
    /// the content it was embedded from (an edit meanwhile brought its own vector).
    /// Returns how many were written.
    fn set_embeddings(&self, vectors: &[(StaleEmbedding, Embedding)]) -> Result<usize, StoreError>;

    /// Records a new session.
    fn start_session(&self, session: &crate::Session) -> Result<(), StoreError>;

    /// Sets a session's end (if not already ended) and returns it; `None` when there is
    /// no such session in the workspace.
    fn end_session(
        &self,
        workspace: &Workspace,
        id: &crate::SessionId,
        now: Timestamp,
    ) -> Result<Option<crate::Session>, StoreError>;

    /// The session of this id, ended or not.
    fn session(
        &self,
        workspace: &Workspace,
        id: &crate::SessionId,
    ) -> Result<Option<crate::Session>, StoreError>;

    /// The live memories stored in `session`, oldest first, at most `limit`.
    fn session_memories(
        &self,
        workspace: &Workspace,
        session: &crate::Session,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError>;

    /// The workspace's sessions newest first with their live memories counted, at most
    /// `limit`, started before `before` when given (the next page).
    fn sessions(
        &self,
        workspace: &Workspace,
        before: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<crate::SessionListing>, StoreError>;

    /// Whether the workspace has a session of this id (ended or not).
    fn session_exists(
        &self,
        workspace: &Workspace,
        id: &crate::SessionId,
    ) -> Result<bool, StoreError>;
}

/// Nearest-neighbour search over stored vectors of one model, within a filter.
pub trait VectorIndex: Send + Sync + fmt::Debug {
    /// Up to `limit` memories matching `filter` whose `model` vectors are most similar
    /// (cosine) to `query`, best first.
    fn nearest(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, StoreError>;
}

/// Turns text into vectors.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// The model id recorded with every vector, e.g. `hash-v1-256`.
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dimension(&self) -> usize;
    /// Whether similarity of its vectors means similarity of meaning. The hash embedder's
    /// does not, so interference (and later the gate) use a lexical measure with it.
    fn is_semantic(&self) -> bool;
    /// One L2-normalised vector per text.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// A language model that writes an answer from evidence levh chose (`levh ask` with
/// `LEVH_LLM_URL` set). It is given text and returns text; levh checks what it cites.
pub trait AnswerModel: Send + Sync + fmt::Debug {
    /// The model's name, reported with each answer it wrote.
    fn model_id(&self) -> &str;
    /// The model's reply to a system prompt and a user message, or why there is none.
    fn complete(&self, system: &str, user: &str) -> Result<String, String>;
}

/// One row of the event log: what happened, where, through which surface. Never content.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoggedEvent {
    /// Position in the log; strictly increasing.
    pub seq: i64,
    /// When it happened.
    pub at: Timestamp,
    /// `store`, `pin`, `forget`, `purge`, `admit`, ...
    pub kind: String,
    /// The workspace it happened in.
    pub workspace: Workspace,
    /// The memory concerned, if any.
    pub memory_id: Option<MemoryId>,
    /// `cli`, `mcp`, `http`, `sync` (as recorded: a log written by an older levh may
    /// hold names this build does not know).
    pub surface: String,
    /// The client behind the surface, when known.
    pub client: Option<String>,
    /// The actor's role, as recorded.
    pub role: String,
    /// What the event changed, content-free: ids, counts, similarities, kinds of secret
    /// (`{}` when there is nothing to add).
    pub detail: serde_json::Value,
}

/// Events of some kinds read for a report ([`ServerStore::events_of_kinds`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KindsRead {
    /// Oldest first, each with the token (principal) behind it.
    pub events: Vec<(LoggedEvent, Option<String>)>,
    /// Whether older events within the time asked for were left unread.
    pub cut_short: bool,
}

/// Stored and recalled per day, token, surface, client and kind ([`ServerStore::usage`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Usage {
    /// One row per day, token, surface, client and kind.
    pub rows: Vec<UsageRow>,
    /// Whether older events within the time asked for were left unread.
    pub cut_short: bool,
}

/// One row of [`Usage`].
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    /// The day, UTC (`YYYY-MM-DD`).
    pub day: String,
    /// The token (its id) behind the events (`local` for the CLI); `None` for MCP over
    /// stdio.
    pub principal: Option<String>,
    /// `mcp`, `http`, `cli`, `dashboard`, `sync`.
    pub surface: String,
    /// The client, when known.
    pub client: Option<String>,
    /// `store`, `update` or `recall`.
    pub kind: String,
    /// Events.
    pub count: u64,
    /// Tokens of context the recalls returned (estimated as levh packs them).
    pub tokens: u64,
    /// Bytes stored (`store`) or returned (`recall`).
    pub bytes: u64,
    /// Memories the recalls returned.
    pub returned: u64,
}

/// An MCP session, as presence lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Presence {
    /// levh's id for the session (random; not the transport's session id).
    pub id: String,
    /// The workspace it works in.
    pub workspace: Workspace,
    /// `stdio` or `http`.
    pub transport: String,
    /// The name the client gave in `initialize`.
    pub client: Option<String>,
    /// The token behind it (HTTP).
    pub principal: Option<String>,
    /// The project of its latest call that named one.
    pub project: Option<String>,
    /// The process serving it, and the machine's name: a session whose process is gone
    /// ended without saying so.
    pub pid: u32,
    /// The machine's name, with [`Self::pid`].
    pub host: String,
    /// When it began.
    pub started_at: Timestamp,
    /// Its latest call.
    pub last_seen_at: Timestamp,
    /// When it ended, if it did.
    pub ended_at: Option<Timestamp>,
    /// Tool calls made.
    pub calls: u64,
}

/// The event log read by who did what ([`ServerStore::activity`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Activity {
    /// One row per surface, client and kind of event.
    pub rows: Vec<ActivityRow>,
    /// Whether older events within the time asked for were left unread (the scan's bound).
    pub cut_short: bool,
}

/// How often one client, through one surface, did one kind of thing.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityRow {
    /// `cli`, `mcp`, `http`, `dashboard`, `sync`.
    pub surface: String,
    /// The client behind it, when known.
    pub client: Option<String>,
    /// The event kind (`store`, `recall-reinforce`, ...).
    pub kind: String,
    /// How many.
    pub count: u64,
    /// The first of them.
    pub first: Timestamp,
    /// The last of them.
    pub last: Timestamp,
}

/// The database a store keeps its data in: what `GET /api/health` and `levh doctor`
/// name, so an operator sees which one a server is on without reading its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// One SQLite file in the home (the default).
    Sqlite,
    /// A PostgreSQL database with pgvector (the team server).
    Postgres,
}

impl Backend {
    /// The name the wire and the CLI use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// Tells a waiting reader that the event log has grown ([`ServerStore::event_signal`]).
/// Blocking: call it from a thread of its own.
pub trait EventSignal: Send {
    /// Waits until another transaction has appended events since the last call (`true`)
    /// or `timeout` passes (`false`). A lost connection is an error; the caller opens a
    /// new signal.
    fn wait(&mut self, timeout: std::time::Duration) -> Result<bool, StoreError>;
}

/// What a server reads besides memories: API tokens, a cheap liveness check and the
/// event log it tails for the live feed. The store implements it; `levh serve` holds it
/// as a trait object so that the HTTP crate never names the store.
pub trait ServerStore: Send + Sync + fmt::Debug {
    /// Which database this store is on.
    fn backend(&self) -> Backend;

    /// The principal a token secret stands for: `None` when it is unknown or revoked.
    fn principal_for_token(&self, secret: &str) -> Result<Option<crate::Principal>, StoreError>;

    /// Schema version and journal mode, reading no table.
    fn liveness(&self) -> Result<(i64, String), StoreError>;

    /// The newest sequence number in the event log (0 when empty).
    fn last_event_seq(&self) -> Result<i64, StoreError>;

    /// Events after `seq`, oldest first, at most `limit`.
    fn events_after(&self, seq: i64, limit: usize) -> Result<Vec<LoggedEvent>, StoreError>;

    /// Something that says when the event log has grown, for a store that can tell
    /// (PostgreSQL's `LISTEN`): the feed then reads the log when told instead of polling
    /// it. `None` (the default, and SQLite's: a file has no one to tell it) keeps the
    /// feed polling.
    fn event_signal(&self) -> Result<Option<Box<dyn EventSignal>>, StoreError> {
        Ok(None)
    }

    /// The newest `limit` events of one memory of the workspace, newest first: its history.
    fn memory_events(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError>;

    /// Who did what in the workspace since `since`: one row per surface, client and kind
    /// of event, counted, with the first and last time. Reads the newest `scan_at_most`
    /// events of the log (all workspaces') at most, by sequence: the answer's cost is
    /// bounded whatever the log's size, and says when the bound cut it short.
    fn activity(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Activity, StoreError>;

    /// The workspace's events of `kinds` since `since`, oldest first, each with the token
    /// (principal) behind it, from the newest `scan_at_most` events of the log; true when
    /// that bound left older ones of the time out.
    fn events_of_kinds(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        kinds: &[EventKind],
        scan_at_most: usize,
    ) -> Result<KindsRead, StoreError>;

    /// What each token and client stored and recalled per day (UTC) since `since`: one row
    /// per day, token, surface, client and kind (`store`, `update`, `recall`), with the
    /// bytes and tokens the events counted; bounded like [`Self::activity`].
    fn usage(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Usage, StoreError>;

    /// Records an MCP session that began (or an activity of one: the same id again moves
    /// its last activity and project).
    fn touch_presence(&self, presence: &Presence) -> Result<(), StoreError>;

    /// Marks an MCP session ended.
    fn end_presence(&self, id: &str, at: Timestamp) -> Result<(), StoreError>;

    /// The workspace's MCP sessions that have not ended, or ended after `ended_after`,
    /// most recently active first (at most 500).
    fn presences(
        &self,
        workspace: &Workspace,
        ended_after: Timestamp,
    ) -> Result<Vec<Presence>, StoreError>;

    /// Issues a token bound to `workspace` with `role`; its secret exists only in the
    /// answer.
    fn issue_token(
        &self,
        workspace: &Workspace,
        role: crate::Role,
        label: Option<&str>,
        now: Timestamp,
    ) -> Result<crate::IssuedToken, StoreError>;

    /// The workspace's tokens (revoked ones too), newest first, never their secrets.
    fn workspace_tokens(&self, workspace: &Workspace) -> Result<Vec<crate::TokenInfo>, StoreError>;

    /// Revokes one of the workspace's tokens; false when it has no live token of that id.
    fn revoke_workspace_token(
        &self,
        workspace: &Workspace,
        id: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError>;

    /// Every workspace's tokens (revoked ones too), never their secrets: for the
    /// operator at a terminal.
    fn all_tokens(&self) -> Result<Vec<crate::TokenInfo>, StoreError>;

    /// Revokes a token of any workspace; false when there is no live token of that id.
    fn revoke_any_token(&self, id: &str, now: Timestamp) -> Result<bool, StoreError>;
}
