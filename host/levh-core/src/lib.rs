//! levh-core: the domain of levh.
//!
//! It owns the types every surface speaks ([`Memory`], [`MemoryId`], [`Workspace`]), the
//! memory model of SPEC §3 as pure functions of state and an injected `now`
//! ([`model`]), the H-score ranking of SPEC §4 ([`rank`]), and the [`Levh`] facade that
//! the CLI, MCP and HTTP call. Storage and embeddings are traits ([`Store`],
//! [`VectorIndex`], [`Embedder`]) implemented by other crates; this crate does no I/O,
//! and never reads the clock itself: time comes in through [`Clock`].

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod access;
mod backends;
pub mod config;
pub mod consolidation;
mod engine;
pub mod entities;
mod error;
pub mod gate;
mod ids;
mod memory;
pub mod model;
pub mod rank;
pub mod review;
pub mod sync;
pub mod temporal;
pub mod text;
mod time;

pub use access::{IssuedToken, Principal, Role, Scope, Surface, TokenInfo, secret_hash};
pub use backends::{
    Activity, ActivityRow, AnswerModel, Backend, BatchWrite, ComparedText, EmbedError, Embedder,
    EventSignal, HeldClose, HeldField, KindsRead, ListOrder, LoggedEvent, MemoryFilter,
    MemorySummary, Page, PlacedText, Presence, PurgeReport, RankingRow, ServerStore,
    StaleEmbedding, StandingGroup, Store, StoreError, StoreHealth, StoredText, SyncedPage,
    TextPlace, Usage, UsageRow, VectorIndex,
};
pub use config::{Config, ConfigError, ModelConfig, RankingWeights, RecallConfig};
pub use engine::{
    ATTACHMENT_KIND, Attached, AttachmentFile, ConsolidatedCluster, ConsolidationReport,
    ConsolidationRequest, ContentUpdate, DEFAULT_CONSIDERED, RelatedMemory, ReviewItem, Reviewed,
    SUMMARY_KIND, SUMMARY_SOURCE, Session, SessionListing, SummaryWriter, in_order,
    judge_conflicts,
};
pub use engine::{
    CaptureOutcome, CurvePoint, DEFAULT_IMPORTANCE, Evaluation, FadingMemory, H_SCORE,
    HeldAdmission, Levh, MAX_BATCH, MAX_KEY_VALUE_BYTES, MAX_QUERY_CHARS, MAX_RECALL_LIMIT, Moved,
    PREVIEW_CHARS, Parts, PersonSettings, REINDEX_BATCH, RecallHit, RecallOutput, RecallRequest,
    ReindexReport, SecretFinding, SecretPlace, Stats, Upsert, Upserted,
};
pub use error::{Error, Result};
pub use gate::{GateConfig, Measure, Nearest, Redaction, Verdict};
pub use ids::{HeldId, Kind, MemoryId, SessionId, Workspace};
pub use memory::{
    Actor, AdmissionRecord, AdmissionVerdict, Attachment, Embedding, EventKind, HeldCandidate,
    HeldDecision, HeldStatus, Interference, Memory, MemoryState, NewMemory, NewMemoryRecord,
    PriorMemory,
};
pub use time::{Clock, FixedClock, SystemClock, Timestamp, parse_instant};
/// The range of instants levh stores (see [`time::latest`]).
pub use time::{
    EARLIEST_MICROS, LATEST_MICROS, earliest, from_stored_micros, latest, stored_micros,
    within_range,
};
