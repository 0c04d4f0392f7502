//! The [`Levh`] facade: the one entry point every surface (CLI, MCP, HTTP, sync) calls.

mod attachments;
mod batch;
mod capture;
mod conflicts;
mod consolidate;
mod entities;
mod held;
mod keyed;
mod memories;
mod recall;
mod review;
mod sync;

pub use attachments::{ATTACHMENT_KIND, Attached, AttachmentFile};
pub use batch::MAX_BATCH;
pub use conflicts::{in_order, judge_conflicts};
pub use consolidate::{
    ConsolidatedCluster, ConsolidationReport, ConsolidationRequest, DEFAULT_CONSIDERED,
    SUMMARY_KIND, SUMMARY_SOURCE, SummaryWriter,
};
pub use entities::{REINDEX_BATCH, ReindexReport};
pub use keyed::{MAX_KEY_VALUE_BYTES, Upsert, Upserted};
pub use memories::Moved;
pub use review::{ReviewItem, Reviewed};

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::gate::{self, Measure, Nearest, Redaction, Verdict};
use crate::rank::{self, HScore, Scorer};
use crate::sync::{
    ItemFate, ItemOutcome, MAX_ERROR_LINES, MAX_NOT_STORED, NotStoredItem, Source, SourceItem,
    SyncOptions, SyncReport, SyncStatus, SyncedItem,
};
use crate::time::add_hours;
use crate::{
    AdmissionRecord, Clock, ComparedText, Config, Embedder, Embedding, Error, EventKind,
    HeldCandidate, HeldClose, HeldId, HeldStatus, Interference, Kind, Memory, MemoryFilter,
    MemoryId, MemoryState, NewMemory, NewMemoryRecord, Page, PurgeReport, Result, Scope, Store,
    StoreHealth, Timestamp, VectorIndex, Workspace, model, temporal, text,
};

/// The parts the engine is assembled from.
#[derive(Debug)]
pub struct Parts {
    /// Storage.
    pub store: Arc<dyn Store>,
    /// Nearest-vector search.
    pub index: Arc<dyn VectorIndex>,
    /// Embeddings.
    pub embedder: Arc<dyn Embedder>,
    /// Where `now` comes from.
    pub clock: Arc<dyn Clock>,
    /// Model, ranking and recall numbers.
    pub config: Config,
}

/// What happened to a write: the gate's verdict and where the content went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaptureOutcome {
    /// The gate's verdict.
    pub verdict: Verdict,
    /// The stored memory (admit, redact).
    pub memory_id: Option<MemoryId>,
    /// The held candidate (review).
    pub held_id: Option<HeldId>,
    /// Secrets replaced before anything was stored or embedded.
    pub redactions: Vec<Redaction>,
    /// Older memories the new one interfered with.
    pub interference: Vec<Interference>,
}

impl CaptureOutcome {
    /// Why the gate decided as it did, for review and reject.
    pub fn reason(&self) -> Option<String> {
        self.verdict.reason()
    }

    /// The existing memory that decided a review or a duplicate reject.
    pub fn nearest(&self) -> Option<Nearest> {
        self.verdict.nearest()
    }
}

/// A gate evaluation without storing anything (`levh admit --dry-run`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// What the gate would decide.
    pub verdict: Verdict,
    /// The content as it would be stored.
    pub content: String,
    /// Secrets that would be replaced.
    pub redactions: Vec<Redaction>,
    /// The nearest existing memory, whatever the verdict.
    pub nearest: Option<Nearest>,
}

/// The result of admitting a held candidate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeldAdmission {
    /// The candidate.
    pub held_id: HeldId,
    /// The memory it became.
    pub memory_id: MemoryId,
    /// The memory it replaced, with `--supersede`.
    pub superseded: Option<MemoryId>,
    /// Whether the candidate was an update: `memory_id` kept its id, its content changed.
    pub updated: bool,
}

/// A memory with secrets in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecretFinding {
    /// The memory.
    pub memory_id: MemoryId,
    /// The kinds found (never the secrets).
    pub kinds: Vec<String>,
    /// Where: `content`, `project`, `source`, `metadata`.
    pub fields: Vec<String>,
}

/// A secret kept outside memories' content and labels (see [`crate::TextPlace`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretPlace {
    /// Where, named without the text (`held candidate … content`, `token … label`).
    pub place: String,
    /// The kinds found (never the secrets).
    pub kinds: Vec<String>,
}

/// How a candidate compares with what is stored.
struct Comparison {
    /// The most similar memory valid now, pinned or not.
    nearest: Option<Nearest>,
    /// Its content, for the gate's changed-number guard.
    nearest_content: Option<String>,
    /// Unpinned memories similar enough to interfere with.
    neighbours: Vec<(MemoryId, f64)>,
}

/// A candidate after validation and redaction, before it is embedded and compared.
struct Draft {
    content: String,
    redactions: Vec<Redaction>,
    project: Option<String>,
    kind: Kind,
    source: String,
    importance: f64,
    pinned: bool,
    valid_from: Timestamp,
    valid_to: Option<Timestamp>,
    metadata: serde_json::Value,
    session_id: Option<crate::SessionId>,
    now: Timestamp,
    prior: Option<crate::PriorMemory>,
}

/// A candidate after validation, redaction, embedding and comparison: everything the gate
/// looks at, and everything a store needs.
struct Prepared {
    content: String,
    redactions: Vec<Redaction>,
    embedding: Embedding,
    keys: Vec<i64>,
    nearest: Option<Nearest>,
    nearest_content: Option<String>,
    /// Unpinned neighbours similar enough to interfere with.
    neighbours: Vec<(MemoryId, f64)>,
    project: Option<String>,
    kind: Kind,
    source: String,
    importance: f64,
    pinned: bool,
    valid_from: Timestamp,
    valid_to: Option<Timestamp>,
    metadata: serde_json::Value,
    session_id: Option<crate::SessionId>,
    now: Timestamp,
    prior: Option<crate::PriorMemory>,
    /// The stored memories of the same text, read before the comparison: what the store
    /// checks at the write ([`crate::BatchWrite`]).
    identical_seen: Vec<MemoryId>,
}

impl Prepared {
    /// For a candidate whose validity has already ended (history: an old fact imported,
    /// an expired item), the world time it is judged at: its start. It is compared with
    /// the memories valid then — a copy of itself, not the fact that later replaced it —
    /// and interferes with nothing. `None` for everything else, judged against now.
    fn history_at(&self) -> Option<Timestamp> {
        history_at(self.valid_from, self.valid_to, self.now)
    }
}

fn history_at(
    valid_from: Timestamp,
    valid_to: Option<Timestamp>,
    now: Timestamp,
) -> Option<Timestamp> {
    valid_to.filter(|to| *to <= now).map(|_| valid_from)
}

/// A recall query. Filters apply before ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallRequest {
    /// What to look for.
    pub query: String,
    /// At most this many results (1..=1000).
    pub limit: usize,
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only this source.
    pub source: Option<String>,
    /// Only memories recorded at or after this.
    pub since: Option<Timestamp>,
    /// Only memories recorded before this.
    pub until: Option<Timestamp>,
    /// World time: what was true then (default: now, or `known_at` when that is given).
    pub as_of: Option<Timestamp>,
    /// Record time: what levh knew then.
    pub known_at: Option<Timestamp>,
    /// Pack results, best first, into roughly this many tokens.
    pub max_tokens: Option<usize>,
    /// Count a result's preview rather than its full content against `max_tokens`.
    pub compact: bool,
    /// Reinforce what is returned (the default). Looking into the past with `as_of` or
    /// `known_at` never reinforces: it inspects history rather than using a memory.
    pub reinforce: bool,
    /// The least cosine a candidate found only by the vector index needs to be returned
    /// (0..=1); `None` uses the configured floor for the embedder
    /// ([`RecallConfig::floor`](crate::RecallConfig::floor)). Lexical matches always pass:
    /// they share a word with the query.
    pub min_similarity: Option<f64>,
    /// The session asking: its own working memory is found, other sessions' is not
    /// (SPEC §3). `None`: no session's working memory.
    pub session_id: Option<crate::SessionId>,
}

impl RecallRequest {
    /// A plain query with default limit (10) and reinforcement on.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            limit: 10,
            project: None,
            kind: None,
            source: None,
            since: None,
            until: None,
            as_of: None,
            known_at: None,
            max_tokens: None,
            compact: false,
            reinforce: true,
            min_similarity: None,
            session_id: None,
        }
    }
}

/// Characters of content shown by a compact result.
pub const PREVIEW_CHARS: usize = 120;

/// One recall result: the memory as it was scored (before this recall reinforced it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallHit {
    /// The memory.
    pub memory: Memory,
    /// Its H-score and the four terms (computed even when a scorer ranked the results).
    pub score: HScore,
    /// The relevance behind the H-score's first term, with its lexical and semantic parts.
    pub relevance: rank::Relevance,
    /// The active scorer's score, when a scorer ranked this recall.
    pub policy_score: Option<f64>,
    /// Found by the full-text index.
    pub lexical_match: bool,
}

/// A recall candidate as ranking sees it: scored from its [`crate::RankingRow`]; the
/// whole memory is read only for those returned.
pub(super) struct Candidate {
    id: MemoryId,
    state: MemoryState,
    score: HScore,
    relevance: rank::Relevance,
    policy_score: Option<f64>,
    lexical_match: bool,
}

/// The result of a recall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallOutput {
    /// Best first.
    pub hits: Vec<RecallHit>,
    /// How many distinct candidates were scored.
    pub candidates: usize,
    /// Which memories this recall reinforced.
    pub reinforced: Vec<MemoryId>,
    /// Estimated tokens of the returned content.
    pub tokens: usize,
    /// Results left out because they did not fit `max_tokens`.
    pub omitted_by_budget: usize,
    /// `h-score`, or the id of the scorer that ranked the results.
    pub ranked_by: String,
    /// What went wrong on the way, e.g. a scorer that failed and was replaced by the
    /// H-score. Empty when all went well.
    pub warnings: Vec<String>,
}

/// The name of the built-in ranking in [`RecallOutput::ranked_by`].
pub const H_SCORE: &str = "h-score";

/// A point of a forgetting curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Days from now.
    pub day: u32,
    /// The instant.
    pub at: Timestamp,
    /// Predicted retention with no recall in between.
    pub retention: f64,
}

/// A fading memory and when it crossed the threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FadingMemory {
    /// The memory.
    pub memory: Memory,
    /// Its retention now.
    pub retention: f64,
}

/// Workspace statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Live memories.
    pub total: u64,
    /// Pinned among them.
    pub pinned: u64,
    /// Fading among them (retention below the threshold).
    pub fading: u64,
    /// Mean retention now.
    pub average_retention: f64,
    /// How many memories' retention now falls in each tenth of 0..1 (the last one holds 1).
    pub retention_histogram: [u64; 10],
    /// Sum of recall counts.
    pub recalls: u64,
    /// Count per project.
    pub by_project: BTreeMap<String, u64>,
    /// Memories in no project.
    pub without_project: u64,
    /// Count per source.
    pub by_source: BTreeMap<String, u64>,
    /// Count per kind.
    pub by_kind: BTreeMap<String, u64>,
    /// The embedding model in use.
    pub embedder: String,
}

/// The engine. Cheap to clone (every surface clones it per request): what it holds is
/// shared, not copied — the personal domains were a set of strings copied on every
/// clone, a tenth of a search's server CPU over REST at 3k.
#[derive(Debug, Clone)]
pub struct Levh {
    store: Arc<dyn Store>,
    index: Arc<dyn VectorIndex>,
    embedder: Arc<dyn Embedder>,
    clock: Arc<dyn Clock>,
    config: Config,
    scorer: Option<Arc<dyn Scorer>>,
    personal: Arc<levh_knowledge::organizations::PersonalDomains>,
    person: Arc<PersonSettings>,
}

/// Who the user is and where: what the knowledge views need to read "today" and "my
/// promises" (`LEVH_TZ`, `LEVH_ME`, from the environment or `config.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersonSettings {
    /// An IANA time zone name (`Europe/Istanbul`); the system's when none.
    pub time_zone: Option<String>,
    /// The user's names and addresses, comma-separated.
    pub me: Option<String>,
    /// Whether ending a session summarises it (`LEVH_AUTO_SUMMARIZE`: 1/true/yes, 0/false/no).
    pub auto_summarize: Option<String>,
}

/// Importance when the caller gives none.
pub const DEFAULT_IMPORTANCE: f64 = 0.5;
/// Existing memories compared with every candidate (for the gate and interference).
const COMPARE_NEIGHBOURS: usize = 20;
/// Most results a recall may ask for.
pub const MAX_RECALL_LIMIT: usize = 1000;
/// Longest query, in characters: a memory's own limit, so any memory's text can be used
/// to look for its like. A query's cost grows with its words; anyone who may search
/// (a viewer included) would otherwise set it.
pub const MAX_QUERY_CHARS: usize = 32_000;

/// A query trimmed, refused when empty or longer than [`MAX_QUERY_CHARS`] (counted
/// without reading past the limit).
fn check_query(query: &str) -> Result<&str> {
    let query = query.trim();
    if query.is_empty() {
        return Err(Error::invalid("query", "is empty"));
    }
    if query.chars().nth(MAX_QUERY_CHARS).is_some() {
        return Err(Error::invalid(
            "query",
            format!(
                "is longer than {MAX_QUERY_CHARS} characters ({} bytes); shorten it",
                query.len()
            ),
        ));
    }
    Ok(query)
}

fn check_importance(importance: f64) -> Result<f64> {
    if importance.is_finite() && (0.0..=1.0).contains(&importance) {
        Ok(importance)
    } else {
        Err(Error::invalid(
            "importance",
            format!("{importance} is outside 0..1"),
        ))
    }
}

/// `text` with its secrets replaced, the kinds added to `found`.
fn redact_into(text: &str, found: &mut Vec<Redaction>) -> String {
    let (redacted, kinds) = gate::secrets::redact(text);
    found.extend(kinds);
    redacted
}

/// The most metadata one memory carries, as serialised JSON: metadata is structured
/// context (ids, links, people), not a place for documents, and every read returns it.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

fn check_metadata_size(metadata: &serde_json::Value) -> Result<()> {
    let size = metadata.to_string().len();
    if size > MAX_METADATA_BYTES {
        return Err(Error::invalid(
            "metadata",
            format!(
                "is {size} bytes as JSON; at most {MAX_METADATA_BYTES} (64 KiB) are kept per memory — put long text in content"
            ),
        ));
    }
    Ok(())
}

fn check_label(field: &'static str, value: Option<String>) -> Result<Option<String>> {
    let Some(value) = value else { return Ok(None) };
    let value = value.trim().to_owned();
    if value.is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
        // Never echo what may hold a secret: an error travels to logs and clients.
        let shown = if gate::secrets::detect(&value).is_empty() {
            format!("{value:?}")
        } else {
            "the value (which holds a secret)".to_owned()
        };
        return Err(Error::invalid(
            field,
            format!("{shown} must be 1-200 printable characters"),
        ));
    }
    Ok(Some(value))
}

/// Asks the scorer for one score per hit and stores them; any failure leaves the hits
/// untouched so the H-score ranks them.
fn apply_scorer(
    scorer: &dyn Scorer,
    query: &str,
    hits: &mut [Candidate],
    now: Timestamp,
) -> std::result::Result<(), String> {
    let features: Vec<rank::Features> = hits
        .iter()
        .map(|hit| rank::Features {
            relevance: hit.score.relevance,
            retention: hit.score.retention,
            importance: hit.score.importance,
            frequency: hit.score.frequency,
            age_hours: (now.as_second() - hit.state.created_at.as_second()).max(0) as f64 / 3600.0,
            pinned: hit.state.pinned,
        })
        .collect();
    let scores = scorer.score(query, &features)?;
    if scores.len() != hits.len() {
        return Err(format!(
            "it returned {} scores for {} candidates",
            scores.len(),
            hits.len()
        ));
    }
    if let Some(bad) = scores.iter().position(|s| !s.is_finite()) {
        return Err(format!("score {bad} is {}, not a number", scores[bad]));
    }
    for (hit, score) in hits.iter_mut().zip(scores) {
        hit.policy_score = Some(score);
    }
    Ok(())
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // Vectors are stored L2-normalised, so the dot product is the cosine.
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

impl Levh {
    /// Assembles the engine.
    pub fn new(parts: Parts) -> Self {
        let Parts {
            store,
            index,
            embedder,
            clock,
            config,
        } = parts;
        Self {
            store,
            index,
            embedder,
            clock,
            config,
            scorer: None,
            personal: Default::default(),
            person: Arc::default(),
        }
    }

    /// Ranks recall results with this policy instead of the H-score.
    pub fn with_scorer(mut self, scorer: Arc<dyn Scorer>) -> Self {
        self.scorer = Some(scorer);
        self
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The engine's `now`.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The embedder in use.
    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    fn embed_one(&self, text: &str) -> Result<Embedding> {
        let mut vectors = self.embedder.embed(&[text])?;
        let vector = vectors.pop().ok_or_else(|| {
            crate::EmbedError::new(format!(
                "embedder {} returned no vector",
                self.embedder.model_id()
            ))
        })?;
        Ok(Embedding {
            model: self.embedder.model_id().to_owned(),
            vector,
        })
    }

    /// Store self-checks.
    pub fn health(&self) -> Result<StoreHealth> {
        Ok(self.store.health()?)
    }

    /// How many memories (all workspaces) lack a vector of the active embedder.
    pub fn reembed_pending(&self) -> Result<u64> {
        Ok(self
            .store
            .count_stale_embeddings(self.embedder.model_id())?)
    }

    /// Embeds up to `batch` memories lacking a vector of the active embedder and stores
    /// the vectors. Returns how many memories it took (0: nothing left). Each step
    /// commits on its own, so an interrupted backfill resumes where it stopped.
    pub fn reembed_step(&self, batch: usize) -> Result<usize> {
        let model = self.embedder.model_id().to_owned();
        let stale = self.store.stale_embeddings(&model, batch.max(1))?;
        if stale.is_empty() {
            return Ok(0);
        }
        let texts: Vec<&str> = stale.iter().map(|s| s.content.as_str()).collect();
        let vectors = self.embedder.embed(&texts)?;
        if vectors.len() != stale.len() {
            return Err(crate::EmbedError::new(format!(
                "embedder {model} returned {} vectors for {} texts",
                vectors.len(),
                stale.len()
            ))
            .into());
        }
        let taken = stale.len();
        let pairs: Vec<(crate::StaleEmbedding, Embedding)> = stale
            .into_iter()
            .zip(vectors)
            .map(|(memory, vector)| {
                (
                    memory,
                    Embedding {
                        model: model.clone(),
                        vector,
                    },
                )
            })
            .collect();
        self.store.set_embeddings(&pairs)?;
        Ok(taken)
    }
}

/// An agent conversation (or any run) that groups the memories captured in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// Its id.
    pub id: crate::SessionId,
    /// Its workspace.
    pub workspace: Workspace,
    /// The project it works on, if any.
    pub project: Option<String>,
    /// The client that opened it (`claude-code`, ...).
    pub client: Option<String>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended, once it has.
    pub ended_at: Option<Timestamp>,
}

/// A session as listed: the session and how many live memories it stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionListing {
    /// The session.
    pub session: Session,
    /// Live memories stored in it.
    pub memories: u64,
}

/// A memory close to another one, with how close.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelatedMemory {
    /// The memory.
    pub memory: Memory,
    /// Cosine similarity of the two stored vectors.
    pub similarity: f64,
}

/// What the gate did with new content for an existing memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContentUpdate {
    /// Admit or redact (applied), review (held for a person) or reject (nothing changed).
    pub verdict: Verdict,
    /// The memory as updated, when the update was applied.
    pub memory: Option<Memory>,
    /// The held candidate that waits for a person, when the gate held the update.
    pub held_id: Option<HeldId>,
    /// Secrets replaced before the new content was stored, held or embedded.
    pub redactions: Vec<Redaction>,
}
