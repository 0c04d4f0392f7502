//! The [`Levh`] facade: the one entry point every surface (CLI, MCP, HTTP, sync) calls.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::gate::{self, Measure, Nearest, Redaction, Verdict};
use crate::rank::{self, HScore, Scorer};
use crate::sync::{
    ItemOutcome, MAX_ERROR_LINES, Source, SourceItem, SyncOptions, SyncReport, SyncStatus, SyncedItem,
};
use crate::time::add_hours;
use crate::{
    AdmissionRecord, Clock, Config, Embedder, Embedding, Error, EventKind, HeldCandidate,
    HeldClose, HeldId, HeldStatus, Interference, Kind, Memory, MemoryFilter, MemoryId, MemoryState,
    NewMemory, NewMemoryRecord, Page, PurgeReport, Result, Scope, Store, StoreHealth, Timestamp,
    VectorIndex, Workspace, model, temporal, text,
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
        match &self.verdict {
            Verdict::Review { nearest } => Some(gate::review_reason(nearest)),
            Verdict::Reject { reason, .. } => Some(reason.clone()),
            _ => None,
        }
    }

    /// The existing memory that decided a review or a duplicate reject.
    pub fn nearest(&self) -> Option<Nearest> {
        match &self.verdict {
            Verdict::Review { nearest } => Some(*nearest),
            Verdict::Reject { nearest, .. } => *nearest,
            _ => None,
        }
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
}

/// A memory with secrets in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecretFinding {
    /// The memory.
    pub memory_id: MemoryId,
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

/// The engine.
#[derive(Debug, Clone)]
pub struct Levh {
    store: Arc<dyn Store>,
    index: Arc<dyn VectorIndex>,
    embedder: Arc<dyn Embedder>,
    clock: Arc<dyn Clock>,
    config: Config,
    scorer: Option<Arc<dyn Scorer>>,
}

/// Importance when the caller gives none.
pub const DEFAULT_IMPORTANCE: f64 = 0.5;
/// Existing memories compared with every candidate (for the gate and interference).
const COMPARE_NEIGHBOURS: usize = 20;
/// Most results a recall may ask for.
pub const MAX_RECALL_LIMIT: usize = 1000;

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

fn check_label(field: &'static str, value: Option<String>) -> Result<Option<String>> {
    let Some(value) = value else { return Ok(None) };
    let value = value.trim().to_owned();
    if value.is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
        return Err(Error::invalid(
            field,
            format!("{value:?} must be 1-200 printable characters"),
        ));
    }
    Ok(Some(value))
}

/// Asks the scorer for one score per hit and stores them; any failure leaves the hits
/// untouched so the H-score ranks them.
fn apply_scorer(
    scorer: &dyn Scorer,
    query: &str,
    hits: &mut [RecallHit],
    now: Timestamp,
) -> std::result::Result<(), String> {
    let features: Vec<rank::Features> = hits
        .iter()
        .map(|hit| rank::Features {
            relevance: hit.score.relevance,
            retention: hit.score.retention,
            importance: hit.score.importance,
            frequency: hit.score.frequency,
            age_hours: (now.as_second() - hit.memory.state.created_at.as_second()).max(0) as f64
                / 3600.0,
            pinned: hit.memory.state.pinned,
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

    /// Validates, redacts, embeds and compares a candidate. Reads only.
    fn prepare(&self, scope: &Scope, new: NewMemory) -> Result<Prepared> {
        let importance = check_importance(new.importance.unwrap_or(DEFAULT_IMPORTANCE))?;
        let project = check_label("project", new.project)?;
        let source =
            check_label("source", new.source)?.unwrap_or_else(|| scope.actor.surface.to_string());
        let metadata = new.metadata.unwrap_or_else(|| serde_json::json!({}));
        if !metadata.is_object() {
            return Err(Error::invalid("metadata", "must be a JSON object"));
        }
        let now = self.clock.now();
        let valid_from = new.valid_from.unwrap_or(now);
        if let Some(valid_to) = new.valid_to
            && valid_to <= valid_from
        {
            return Err(Error::invalid(
                "valid_to",
                format!("{valid_to} is not after valid_from {valid_from}"),
            ));
        }
        // Redact first: neither the store nor the embedder ever sees a secret.
        let (content, redactions) = gate::secrets::redact(new.content.trim());
        let embedding = self.embed_one(&content)?;
        let keys = text::near_duplicate_keys(&content);
        let Comparison {
            nearest,
            nearest_content,
            neighbours,
        } = self.compare(
            scope,
            project.as_deref(),
            &content,
            &embedding.vector,
            &keys,
            now,
        )?;
        Ok(Prepared {
            content,
            redactions,
            embedding,
            keys,
            nearest,
            nearest_content,
            neighbours,
            project,
            kind: new.kind.unwrap_or_default(),
            source,
            importance,
            pinned: new.pinned,
            valid_from,
            valid_to: new.valid_to,
            metadata,
            session_id: new.session_id,
            now,
        })
    }

    /// The nearest existing memory valid now in the same workspace (and project, when the
    /// candidate has one), and the unpinned ones close enough to interfere with. Cosine
    /// when the embedder is semantic; word shingles when it is not (a hash vector's cosine
    /// means little), with candidates found through near-duplicate keys so the cost does
    /// not grow with the store.
    fn compare(
        &self,
        scope: &Scope,
        project: Option<&str>,
        content: &str,
        vector: &[f32],
        keys: &[i64],
        now: Timestamp,
    ) -> Result<Comparison> {
        let filter = MemoryFilter {
            project: project.map(str::to_owned),
            not_retired_at: Some(now),
            ..MemoryFilter::workspace(scope.workspace.clone())
        };
        let (measure, threshold, scored): (Measure, f64, Vec<(Memory, f64)>) =
            if self.embedder.is_semantic() {
                let near = self.index.nearest(
                    &filter,
                    self.embedder.model_id(),
                    vector,
                    COMPARE_NEIGHBOURS,
                )?;
                let near: Vec<(MemoryId, f64)> = near
                    .into_iter()
                    .map(|(id, cos)| (id, f64::from(cos)))
                    .collect();
                let scored = self.with_scores(&scope.workspace, &near)?;
                (
                    Measure::Cosine,
                    self.config.model.interference_threshold,
                    scored,
                )
            } else {
                let ids = self
                    .store
                    .near_duplicates(&filter, keys, COMPARE_NEIGHBOURS)?;
                let memories = self.store.get_many(&scope.workspace, &ids)?;
                let scored = memories
                    .into_iter()
                    .map(|m| {
                        let s = text::shingle_similarity(content, &m.content);
                        (m, s)
                    })
                    .collect();
                (
                    Measure::Lexical,
                    self.config.model.interference_lexical_threshold,
                    scored,
                )
            };
        // Only memories the candidate could copy or revise count (not another speaker's
        // words, not the question it answers): they neither make it a duplicate nor
        // interfere with it.
        let scored: Vec<(Memory, f64)> = scored
            .into_iter()
            .filter(|(m, _)| gate::comparable(content, &m.content))
            .collect();
        let closest = scored
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.id.cmp(&a.0.id)));
        let nearest = closest.map(|(m, similarity)| Nearest {
            id: m.id,
            similarity: *similarity,
            measure,
        });
        let neighbours = scored
            .iter()
            .filter(|(m, similarity)| !m.state.pinned && *similarity >= threshold)
            .map(|(m, similarity)| (m.id, *similarity))
            .collect();
        Ok(Comparison {
            nearest,
            nearest_content: closest.map(|(m, _)| m.content.clone()),
            neighbours,
        })
    }

    /// What the gate would decide for `new`, without storing anything.
    pub fn evaluate(&self, scope: &Scope, new: NewMemory) -> Result<Evaluation> {
        let prepared = self.prepare(scope, new)?;
        let verdict = gate::decide(
            &self.config.gate,
            &prepared.content,
            &prepared.redactions,
            prepared.nearest,
            prepared.nearest_content.as_deref(),
        );
        Ok(Evaluation {
            verdict,
            content: prepared.content,
            redactions: prepared.redactions,
            nearest: prepared.nearest,
        })
    }

    /// The one write path: every surface stores through here. The gate decides; admitted
    /// and redacted content is stored, reviewed content is held for a person, rejected
    /// content is not stored. There is no way around the gate.
    pub fn capture(&self, scope: &Scope, new: NewMemory) -> Result<CaptureOutcome> {
        let p = self.prepare(scope, new)?;
        let mut verdict = gate::decide(
            &self.config.gate,
            &p.content,
            &p.redactions,
            p.nearest,
            p.nearest_content.as_deref(),
        );
        // Held candidates are neighbours too: the same text again, while the first copy
        // waits for a person, is a duplicate of that copy — never a second row to decide.
        if !matches!(verdict, Verdict::Reject { .. })
            && let Some(waiting) = self.store.waiting_held(
                &scope.workspace,
                p.project.as_deref(),
                &text::content_hash(&p.content),
            )?
        {
            verdict = Verdict::Reject {
                reason: format!(
                    "duplicate of held candidate {}, which waits for a person's decision",
                    waiting.id
                ),
                nearest: None,
            };
        }
        let mut outcome = CaptureOutcome {
            verdict: verdict.clone(),
            memory_id: None,
            held_id: None,
            redactions: p.redactions.clone(),
            interference: Vec::new(),
        };
        match verdict {
            Verdict::Reject { .. } => {}
            Verdict::Review { nearest } => {
                let held = HeldCandidate {
                    id: HeldId::new_at(p.now),
                    workspace: scope.workspace.clone(),
                    project: p.project,
                    content_hash: text::content_hash(&p.content),
                    content: p.content,
                    kind: p.kind,
                    source: p.source,
                    importance: p.importance,
                    pinned: p.pinned,
                    valid_from: p.valid_from,
                    valid_to: p.valid_to,
                    metadata: p.metadata,
                    session_id: p.session_id,
                    redactions: p.redactions,
                    reason: gate::review_reason(&nearest),
                    nearest: Some(nearest),
                    status: HeldStatus::Held,
                    created_at: p.now,
                    expires_at: self
                        .config
                        .gate
                        .held_expiry_hours
                        .map(|hours| add_hours(p.now, hours)),
                    decision: None,
                    memory_id: None,
                };
                self.store.insert_held(&held, &scope.actor)?;
                outcome.held_id = Some(held.id);
            }
            Verdict::Admit | Verdict::Redact => {
                let mut reasons = vec![match p.nearest {
                    Some(n) => format!(
                        "nearest {} at {} similarity {:.2}",
                        n.id,
                        n.measure.as_str(),
                        n.similarity
                    ),
                    None => "nothing similar stored".to_owned(),
                }];
                if !p.redactions.is_empty() {
                    let kinds: Vec<&str> = p.redactions.iter().map(|r| r.kind.as_str()).collect();
                    reasons.push(format!("redacted: {}", kinds.join(", ")));
                }
                let admission = AdmissionRecord {
                    verdict: outcome.verdict.name().into(),
                    reasons,
                    decided_by: "gate".into(),
                };
                let neighbours = p.neighbours.clone();
                let record = self.record(scope, p, admission);
                let model = self.config.model;
                outcome.interference = self.store.insert(
                    &record,
                    &neighbours,
                    &|state| model::interfere(state, &model),
                    &scope.actor,
                )?;
                outcome.memory_id = Some(record.memory.id);
            }
        }
        Ok(outcome)
    }

    /// A memory record from a prepared candidate.
    fn record(&self, scope: &Scope, p: Prepared, admission: AdmissionRecord) -> NewMemoryRecord {
        let model = self.config.model;
        let memory = Memory {
            id: MemoryId::new_at(p.now),
            workspace: scope.workspace.clone(),
            project: p.project,
            content_hash: text::content_hash(&p.content),
            content: p.content,
            kind: p.kind,
            source: p.source,
            state: MemoryState {
                importance: p.importance,
                pinned: p.pinned,
                stability_hours: model.initial_stability_hours.min(model.max_stability_hours),
                last_recalled_at: None,
                recall_count: 0,
                created_at: p.now,
            },
            valid_from: p.valid_from,
            valid_to: p.valid_to,
            superseded_by: None,
            admission,
            metadata: p.metadata,
            session_id: p.session_id,
            embedding_model: Some(p.embedding.model.clone()),
            embedding_dimension: Some(p.embedding.vector.len() as u32),
        };
        NewMemoryRecord {
            memory,
            embedding: Some(p.embedding),
            near_duplicate_keys: p.keys,
        }
    }

    /// Held candidates of the workspace, oldest first; expired ones are marked first.
    pub fn held_list(
        &self,
        scope: &Scope,
        status: Option<HeldStatus>,
    ) -> Result<Vec<HeldCandidate>> {
        Ok(self
            .store
            .list_held(&scope.workspace, status, self.clock.now(), &scope.actor)?)
    }

    /// One held candidate.
    pub fn held_get(&self, scope: &Scope, id: HeldId) -> Result<HeldCandidate> {
        // Expiry first, so a candidate shown (or decided) is never stale.
        self.store
            .expire_held(&scope.workspace, self.clock.now(), &scope.actor)?;
        self.store
            .get_held(&scope.workspace, id)?
            .ok_or(Error::HeldNotFound(id))
    }

    /// A person admits a held candidate. The memory is stored first, then the row is
    /// closed (compare-and-set): a crash between the two loses nothing, and admitting
    /// again completes it. With `supersede`, the memory that caused the hold is retired
    /// (its `valid_to` and `superseded_by` set).
    pub fn held_admit(&self, scope: &Scope, id: HeldId, supersede: bool) -> Result<HeldAdmission> {
        let held = self.held_get(scope, id)?;
        if held.status != HeldStatus::Held {
            return Err(Error::AlreadyDecided {
                id,
                status: held.status,
            });
        }
        let superseded = match (supersede, held.nearest) {
            (false, _) => None,
            (true, Some(nearest)) => Some(nearest.id),
            (true, None) => {
                return Err(Error::invalid(
                    "supersede",
                    "this candidate has no nearest memory to replace",
                ));
            }
        };
        let new = NewMemory {
            content: held.content.clone(),
            project: held.project.clone(),
            kind: Some(held.kind.clone()),
            source: Some(held.source.clone()),
            importance: Some(held.importance),
            pinned: held.pinned,
            // A replacement takes effect when a person confirms it, so the retired fact's
            // window (closed at the same instant) and the new one's abut, never overlap.
            valid_from: Some(if superseded.is_some() {
                held.valid_from.max(self.clock.now())
            } else {
                held.valid_from
            }),
            valid_to: held.valid_to,
            metadata: Some(held.metadata.clone()),
            session_id: held.session_id.clone(),
        };
        let mut p = self.prepare(scope, new)?;
        p.neighbours
            .retain(|(neighbour, _)| Some(*neighbour) != superseded);
        let admission = AdmissionRecord {
            verdict: "review".into(),
            reasons: vec![
                held.reason.clone(),
                format!("admitted by {}", scope.actor.decider()),
            ],
            decided_by: scope.actor.decider(),
        };
        let neighbours = p.neighbours.clone();
        let record = self.record(scope, p, admission);
        let model = self.config.model;
        let memory_id = self.store.store_held_memory(
            id,
            &record,
            &neighbours,
            &|state| model::interfere(state, &model),
            superseded,
            &scope.actor,
        )?;
        match self.store.close_held(
            &scope.workspace,
            id,
            HeldStatus::Admitted,
            Some(memory_id),
            self.clock.now(),
            &scope.actor,
        )? {
            HeldClose::Closed => Ok(HeldAdmission {
                held_id: id,
                memory_id,
                superseded,
            }),
            HeldClose::AlreadyDecided(status) => Err(Error::AlreadyDecided { id, status }),
            HeldClose::Missing => Err(Error::HeldNotFound(id)),
            HeldClose::AdmissionIncomplete => Err(Error::AdmissionIncomplete(id)),
        }
    }

    /// A person discards a held candidate (compare-and-set).
    pub fn held_discard(&self, scope: &Scope, id: HeldId) -> Result<HeldCandidate> {
        let now = self.clock.now();
        self.store
            .expire_held(&scope.workspace, now, &scope.actor)?;
        match self.store.close_held(
            &scope.workspace,
            id,
            HeldStatus::Discarded,
            None,
            now,
            &scope.actor,
        )? {
            HeldClose::Closed => self
                .store
                .get_held(&scope.workspace, id)?
                .ok_or(Error::HeldNotFound(id)),
            HeldClose::AlreadyDecided(status) => Err(Error::AlreadyDecided { id, status }),
            HeldClose::Missing => Err(Error::HeldNotFound(id)),
            HeldClose::AdmissionIncomplete => Err(Error::AdmissionIncomplete(id)),
        }
    }

    /// Memories holding secrets that today's patterns recognise (stored before a pattern
    /// existed, or written to the database by other means).
    pub fn audit_secrets(&self, scope: &Scope) -> Result<Vec<SecretFinding>> {
        Ok(self
            .store
            .contents(&scope.workspace)?
            .into_iter()
            .filter_map(|(memory_id, content)| {
                let found = gate::secrets::detect(&content);
                (!found.is_empty()).then(|| SecretFinding {
                    memory_id,
                    kinds: found.into_iter().map(|r| r.kind).collect(),
                })
            })
            .collect())
    }

    /// Strips recognised secrets from stored memories, re-embedding each, and records a
    /// `redact` event per memory. Returns what was redacted.
    pub fn redact_secrets(&self, scope: &Scope) -> Result<Vec<SecretFinding>> {
        let findings = self.audit_secrets(scope)?;
        let now = self.clock.now();
        for finding in &findings {
            let Some(memory) = self.store.get(&scope.workspace, finding.memory_id)? else {
                continue;
            };
            let (content, _) = gate::secrets::redact(&memory.content);
            let embedding = self.embed_one(&content)?;
            let keys = text::near_duplicate_keys(&content);
            self.store.replace_content(
                &scope.workspace,
                memory.id,
                &content,
                Some(&embedding),
                &keys,
                EventKind::Redact,
                serde_json::json!({ "kinds": finding.kinds }),
                now,
                &scope.actor,
            )?;
        }
        Ok(findings)
    }

    /// Runs a connector sync: every page, every item through the gate. A failing item is
    /// counted and described, and the run goes on; a failing page fetch ends the run as
    /// `failed` (the cursor then still points at the last stored page, so re-running
    /// resumes there). `progress` is called after every item.
    pub fn sync(
        &self,
        scope: &Scope,
        source: &mut dyn Source,
        options: SyncOptions,
        project: Option<String>,
        progress: &mut dyn FnMut(&SyncReport),
    ) -> Result<SyncReport> {
        let project = check_label("project", project)?;
        let connector = source.connector().to_owned();
        let now = self.clock.now();
        let mut report = SyncReport {
            run_id: MemoryId::new_at(now).to_string(),
            connector: connector.clone(),
            status: if options.dry_run {
                SyncStatus::DryRun
            } else {
                SyncStatus::Running
            },
            started_at: Some(now),
            ..SyncReport::default()
        };
        if !options.dry_run {
            self.store
                .save_sync_run(&scope.workspace, &report, &scope.actor)?;
        }
        let cursor_key = source.cursor_key();
        let mut cursor = self.store.sync_cursor(&scope.workspace, &cursor_key)?;
        let mut failure = None;
        loop {
            let page = match source.fetch(cursor.clone()) {
                Ok(page) => page,
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            };
            report.pages += 1;
            report.fetched += page.items.len() as u64;
            for error in &page.errors {
                report.failed += 1;
                note(
                    &mut report,
                    format!("{}: {}", error.location, error.message),
                );
            }
            for item in page.items {
                let location = item.source_id.clone();
                match self.sync_item(scope, &connector, project.as_deref(), item, options.dry_run) {
                    Ok(outcome) => match outcome {
                        ItemOutcome::Admit => report.admitted += 1,
                        ItemOutcome::Redact => report.redacted += 1,
                        ItemOutcome::Review => report.held += 1,
                        ItemOutcome::Reject => report.rejected += 1,
                        ItemOutcome::Update => report.updated += 1,
                        ItemOutcome::Unchanged => report.unchanged += 1,
                    },
                    Err(error) => {
                        report.failed += 1;
                        note(&mut report, format!("{location}: {error}"));
                    }
                }
                progress(&report);
            }
            // The page is stored: only now may the cursor move past it.
            if !options.dry_run {
                self.store.save_sync_cursor(
                    &scope.workspace,
                    &cursor_key,
                    page.next_cursor.as_deref(),
                    self.clock.now(),
                )?;
            }
            if page.done || page.next_cursor.is_none() || page.next_cursor == cursor {
                break;
            }
            cursor = page.next_cursor;
        }
        report.finished_at = Some(self.clock.now());
        if let Some(error) = failure {
            report.status = SyncStatus::Failed;
            report.failure = Some(error.kind);
            note(&mut report, format!("fetching a page: {error}"));
        } else if !options.dry_run {
            report.status = SyncStatus::Ok;
        }
        if !options.dry_run {
            self.store
                .save_sync_run(&scope.workspace, &report, &scope.actor)?;
        }
        progress(&report);
        Ok(report)
    }

    /// One item: unchanged, updated in place, or through the gate.
    fn sync_item(
        &self,
        scope: &Scope,
        connector: &str,
        project: Option<&str>,
        item: SourceItem,
        dry_run: bool,
    ) -> Result<ItemOutcome> {
        let source = format!("connector:{connector}");
        let title = item.title.trim();
        let content = if title.is_empty() || item.content.trim_start().starts_with(title) {
            item.content.clone()
        } else {
            format!("{title}\n\n{}", item.content)
        };
        let hash = text::content_hash(&content);
        let known = self
            .store
            .synced_item(&scope.workspace, connector, &item.source_id)?;
        if known.as_ref().is_some_and(|k| k.content_hash == hash) {
            return Ok(ItemOutcome::Unchanged);
        }
        let now = self.clock.now();
        if let Some(memory_id) = known.as_ref().and_then(|k| k.memory_id)
            && self.store.get(&scope.workspace, memory_id)?.is_some()
        {
            if !dry_run {
                let (redacted, redactions) = gate::secrets::redact(content.trim());
                let embedding = self.embed_one(&redacted)?;
                let keys = text::near_duplicate_keys(&redacted);
                let kinds: Vec<&str> = redactions.iter().map(|r| r.kind.as_str()).collect();
                self.store.replace_content(
                    &scope.workspace,
                    memory_id,
                    &redacted,
                    Some(&embedding),
                    &keys,
                    EventKind::Update,
                    serde_json::json!({ "connector": connector, "redacted": kinds }),
                    now,
                    &scope.actor,
                )?;
                let record = SyncedItem {
                    content_hash: hash,
                    memory_id: Some(memory_id),
                    held_id: None,
                    verdict: ItemOutcome::Update,
                };
                self.store.record_synced_item(
                    &scope.workspace,
                    connector,
                    &item.source_id,
                    &record,
                    now,
                )?;
            }
            return Ok(ItemOutcome::Update);
        }

        let mut metadata = match item.metadata {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        metadata.insert("connector".into(), connector.into());
        metadata.insert("source_id".into(), item.source_id.clone().into());
        metadata.insert("title".into(), item.title.clone().into());
        if let Some(uri) = &item.source_uri {
            metadata.insert("source_uri".into(), uri.clone().into());
        }
        if !item.people.is_empty() {
            metadata.insert(
                "people".into(),
                serde_json::to_value(&item.people).unwrap_or_default(),
            );
        }
        let new = NewMemory {
            content,
            project: project.map(str::to_owned),
            kind: Some(
                Kind::new(&item.kind.to_lowercase())
                    .unwrap_or_else(|_| Kind::new("document").unwrap_or_default()),
            ),
            source: Some(source.clone()),
            valid_from: item.occurred_at,
            metadata: Some(serde_json::Value::Object(metadata)),
            ..NewMemory::default()
        };
        if dry_run {
            return Ok(ItemOutcome::of(&self.evaluate(scope, new)?.verdict));
        }
        let outcome = self.capture(scope, new)?;
        let mut verdict = ItemOutcome::of(&outcome.verdict);
        let mut memory_id = outcome.memory_id;
        // A run that died after storing an item but before recording it: the item now
        // duplicates its own memory. Link it instead of counting a duplicate.
        if let (Verdict::Reject { .. }, Some(nearest)) = (&outcome.verdict, outcome.nearest())
            && let Some(existing) = self.store.get(&scope.workspace, nearest.id)?
            && existing.source == source
            && existing.metadata.get("source_id").and_then(|v| v.as_str())
                == Some(item.source_id.as_str())
        {
            memory_id = Some(existing.id);
            verdict = ItemOutcome::Unchanged;
        }
        let record = SyncedItem {
            content_hash: hash,
            memory_id,
            held_id: outcome.held_id,
            verdict,
        };
        self.store.record_synced_item(
            &scope.workspace,
            connector,
            &item.source_id,
            &record,
            now,
        )?;
        Ok(verdict)
    }

    /// Recent sync runs, newest first.
    pub fn sync_runs(
        &self,
        scope: &Scope,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>> {
        Ok(self.store.sync_runs(&scope.workspace, connector, limit)?)
    }

    /// Erases a memory and every copy of its content, and reports any residue found.
    pub fn purge(&self, scope: &Scope, id: MemoryId) -> Result<PurgeReport> {
        self.store
            .purge(&scope.workspace, id, self.clock.now(), &scope.actor)?
            .ok_or(Error::NotFound(id))
    }

    /// Hybrid recall (SPEC §4): filter, gather lexical ∪ vector candidates, fuse their
    /// evidence into one relevance, rank by H-score, pack into the budget, then reinforce
    /// exactly what is returned.
    pub fn recall(&self, scope: &Scope, request: &RecallRequest) -> Result<RecallOutput> {
        let query = request.query.trim();
        if query.is_empty() {
            return Err(Error::invalid("query", "is empty"));
        }
        if request.limit == 0 || request.limit > MAX_RECALL_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("{} is outside 1..{MAX_RECALL_LIMIT}", request.limit),
            ));
        }
        if request.max_tokens == Some(0) {
            return Err(Error::invalid("max_tokens", "must be at least 1"));
        }
        if let Some(floor) = request.min_similarity
            && !(floor.is_finite() && (0.0..=1.0).contains(&floor))
        {
            return Err(Error::invalid(
                "min_similarity",
                format!("{floor} is outside 0..1"),
            ));
        }
        let now = self.clock.now();
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            project: check_label("project", request.project.clone())?,
            kind: request.kind.clone(),
            source: check_label("source", request.source.clone())?,
            created_after: request.since,
            created_before: request.until,
            valid_at: Some(request.as_of.or(request.known_at).unwrap_or(now)),
            not_retired_at: None,
            known_at: request.known_at,
            pinned: None,
        };
        let floor = request
            .min_similarity
            .unwrap_or_else(|| self.config.recall.floor(self.embedder.is_semantic()));
        let pool = self.config.recall.candidates.max(request.limit * 5);
        let mut hits = self.score_candidates(scope, &filter, query, pool, floor, now)?;
        let candidates = hits.len();
        let mut warnings = Vec::new();
        let ranked_by = match &self.scorer {
            Some(scorer) if !hits.is_empty() => {
                match apply_scorer(scorer.as_ref(), query, &mut hits, now) {
                    Ok(()) => scorer.id().to_owned(),
                    Err(why) => {
                        let warning = format!(
                            "scorer `{}` failed ({why}); ranked by the built-in H-score instead",
                            scorer.id()
                        );
                        warnings.push(warning);
                        H_SCORE.to_owned()
                    }
                }
            }
            Some(scorer) => scorer.id().to_owned(),
            None => H_SCORE.to_owned(),
        };
        hits.sort_by(|a, b| {
            let policy = match (a.policy_score, b.policy_score) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => std::cmp::Ordering::Equal,
            };
            policy
                .then(a.score.score.total_cmp(&b.score.score))
                .then(b.score.relevance.total_cmp(&a.score.relevance))
                .then(b.memory.id.cmp(&a.memory.id))
        });
        hits.truncate(request.limit);

        let (hits, tokens, omitted_by_budget) = pack(hits, request.max_tokens, request.compact);

        let reinforce = request.reinforce && request.as_of.is_none() && request.known_at.is_none();
        let mut reinforced = Vec::new();
        if reinforce && !hits.is_empty() {
            let ids: Vec<MemoryId> = hits.iter().map(|h| h.memory.id).collect();
            let config = self.config.model;
            let updated = self.store.update_states(
                &scope.workspace,
                &ids,
                EventKind::RecallReinforce,
                &scope.actor,
                now,
                &mut |m| Some(model::reinforce(&m.state, &config, now)),
            )?;
            reinforced = updated.into_iter().map(|m| m.id).collect();
        }
        Ok(RecallOutput {
            hits,
            candidates,
            reinforced,
            tokens,
            omitted_by_budget,
            ranked_by,
            warnings,
        })
    }

    /// Every candidate of a query — the lexical top `pool` ∪ the vector top `pool` whose
    /// cosine reaches `floor` — with its fused relevance and H-score, unsorted.
    fn score_candidates(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        query: &str,
        pool: usize,
        floor: f64,
        now: Timestamp,
    ) -> Result<Vec<RecallHit>> {
        let model_id = self.embedder.model_id();
        let query_vector = self.embed_one(query)?.vector;
        let lexical = self.store.lexical_candidates(filter, query, pool)?;
        let vector = self.index.nearest(filter, model_id, &query_vector, pool)?;

        let mut evidence: HashMap<MemoryId, rank::Evidence> = HashMap::new();
        for (rank, (id, cos)) in vector.into_iter().enumerate() {
            let e = evidence.entry(id).or_default();
            e.cosine = f64::from(cos);
            e.vector_rank = Some(rank + 1);
        }
        let best_bm25 = lexical.iter().map(|(_, s)| *s).fold(0.0, f64::max);
        let mut unscored = Vec::new();
        for (rank, (id, bm25)) in lexical.iter().enumerate() {
            let e = evidence.entry(*id).or_default();
            e.lexical = Some((*bm25, rank + 1));
            if e.vector_rank.is_none() {
                unscored.push(*id);
            }
        }
        for (id, vector) in self
            .store
            .embeddings(&scope.workspace, &unscored, model_id)?
        {
            if let Some(e) = evidence.get_mut(&id) {
                e.cosine = cosine(&query_vector, &vector);
            }
        }
        // A memory only the vector side found must be close enough, so that a small
        // store does not answer — and reinforce — what has nothing to do with the query.
        evidence.retain(|_, e| e.lexical.is_some() || e.cosine >= floor);
        let ids: Vec<MemoryId> = evidence.keys().copied().collect();
        let memories = self.store.get_many(&scope.workspace, &ids)?;

        let period = temporal::named_period(query);
        let semantic = self.embedder.is_semantic();
        let fusion = self.config.recall.fusion;
        let weights = self.config.ranking;
        Ok(memories
            .into_iter()
            .map(|memory| {
                let mut e = evidence.get(&memory.id).copied().unwrap_or_default();
                e.in_named_period = period
                    .as_ref()
                    .is_some_and(|p| p.contains(memory.valid_from));
                let relevance = rank::fuse(&fusion, semantic, best_bm25, &e);
                let score = rank::h_score(
                    &weights,
                    relevance.value,
                    model::retention(&memory.state, now),
                    memory.state.importance,
                    rank::frequency(memory.state.recall_count),
                );
                RecallHit {
                    lexical_match: e.lexical.is_some(),
                    memory,
                    score,
                    relevance,
                    policy_score: None,
                }
            })
            .collect())
    }

    /// One memory of the scope's workspace.
    pub fn get(&self, scope: &Scope, id: MemoryId) -> Result<Memory> {
        self.store
            .get(&scope.workspace, id)?
            .ok_or(Error::NotFound(id))
    }

    /// Memories matching the filter (its workspace is replaced by the scope's), newest first.
    pub fn list(&self, scope: &Scope, filter: MemoryFilter, page: Page) -> Result<Vec<Memory>> {
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            ..filter
        };
        Ok(self.store.list(&filter, page)?)
    }

    fn update_one(
        &self,
        scope: &Scope,
        id: MemoryId,
        event: EventKind,
        update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
    ) -> Result<Memory> {
        let now = self.clock.now();
        let mut updated =
            self.store
                .update_states(&scope.workspace, &[id], event, &scope.actor, now, update)?;
        match updated.pop() {
            Some(memory) => Ok(memory),
            // unchanged (already pinned, say) or missing: tell them apart
            None => self.get(scope, id),
        }
    }

    /// Reinforces a memory as if it had been recalled.
    pub fn reinforce(&self, scope: &Scope, id: MemoryId) -> Result<Memory> {
        let (config, now) = (self.config.model, self.clock.now());
        self.update_one(scope, id, EventKind::Reinforce, &mut |m| {
            Some(model::reinforce(&m.state, &config, now))
        })
    }

    /// Helpful feedback reinforces; unhelpful weakens without resetting the decay clock.
    pub fn feedback(&self, scope: &Scope, id: MemoryId, helpful: bool) -> Result<Memory> {
        let (config, now) = (self.config.model, self.clock.now());
        self.update_one(scope, id, EventKind::Feedback, &mut |m| {
            Some(if helpful {
                model::reinforce(&m.state, &config, now)
            } else {
                model::weaken(&m.state, &config)
            })
        })
    }

    /// Pins or unpins a memory.
    pub fn set_pinned(&self, scope: &Scope, id: MemoryId, pinned: bool) -> Result<Memory> {
        let event = if pinned {
            EventKind::Pin
        } else {
            EventKind::Unpin
        };
        self.update_one(scope, id, event, &mut |m| {
            (m.state.pinned != pinned).then_some(MemoryState { pinned, ..m.state })
        })
    }

    /// Retires a memory from every read.
    pub fn forget(&self, scope: &Scope, id: MemoryId) -> Result<()> {
        let now = self.clock.now();
        if self.store.forget(&scope.workspace, id, now, &scope.actor)? {
            Ok(())
        } else {
            Err(Error::NotFound(id))
        }
    }

    /// Predicted retention for each of the next `days` days, with no recall.
    pub fn curve(&self, scope: &Scope, id: MemoryId, days: u32) -> Result<Vec<CurvePoint>> {
        if days == 0 || days > 3650 {
            return Err(Error::invalid("days", format!("{days} is outside 1..3650")));
        }
        let memory = self.get(scope, id)?;
        Ok(
            model::forgetting_curve(&memory.state, self.clock.now(), days)
                .into_iter()
                .map(|(day, at, retention)| CurvePoint { day, at, retention })
                .collect(),
        )
    }

    /// Unpinned memories valid now whose retention is below the fading threshold,
    /// weakest first.
    pub fn fading(
        &self,
        scope: &Scope,
        project: Option<String>,
        limit: usize,
    ) -> Result<Vec<FadingMemory>> {
        let now = self.clock.now();
        let filter = MemoryFilter {
            project: check_label("project", project)?,
            valid_at: Some(now),
            pinned: Some(false),
            ..MemoryFilter::workspace(scope.workspace.clone())
        };
        let config = self.config.model;
        let mut fading: Vec<(MemoryId, f64)> = self
            .store
            .summaries(&filter)?
            .into_iter()
            .filter(|s| model::is_fading(&s.state, &config, now))
            .map(|s| (s.id, model::retention(&s.state, now)))
            .collect();
        fading.sort_by(|a, b| a.1.total_cmp(&b.1));
        fading.truncate(limit);
        let mut memories: Vec<FadingMemory> = self
            .with_scores(&scope.workspace, &fading)?
            .into_iter()
            .map(|(memory, retention)| FadingMemory { memory, retention })
            .collect();
        memories.sort_by(|a, b| a.retention.total_cmp(&b.retention));
        Ok(memories)
    }

    /// Statistics of the live memories valid now, optionally of one project.
    pub fn stats(&self, scope: &Scope, project: Option<String>) -> Result<Stats> {
        let now = self.clock.now();
        let filter = MemoryFilter {
            project: check_label("project", project)?,
            valid_at: Some(now),
            ..MemoryFilter::workspace(scope.workspace.clone())
        };
        let config = self.config.model;
        let summaries = self.store.summaries(&filter)?;
        let mut stats = Stats {
            total: summaries.len() as u64,
            pinned: 0,
            fading: 0,
            average_retention: 0.0,
            recalls: 0,
            by_project: BTreeMap::new(),
            without_project: 0,
            by_source: BTreeMap::new(),
            by_kind: BTreeMap::new(),
            embedder: self.embedder.model_id().to_owned(),
        };
        let mut retention_sum = 0.0;
        for s in &summaries {
            let retention = model::retention(&s.state, now);
            retention_sum += retention;
            stats.pinned += u64::from(s.state.pinned);
            stats.fading += u64::from(retention < config.fading_threshold);
            stats.recalls += u64::from(s.state.recall_count);
            match &s.project {
                Some(project) => *stats.by_project.entry(project.clone()).or_default() += 1,
                None => stats.without_project += 1,
            }
            *stats.by_source.entry(s.source.clone()).or_default() += 1;
            *stats.by_kind.entry(s.kind.to_string()).or_default() += 1;
        }
        if !summaries.is_empty() {
            stats.average_retention = retention_sum / summaries.len() as f64;
        }
        Ok(stats)
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

fn note(report: &mut SyncReport, line: String) {
    if report.errors.len() < MAX_ERROR_LINES {
        report.errors.push(line);
    }
}

/// Keeps hits, best first, while their estimated tokens fit the budget; a hit that does
/// not fit is skipped and smaller ones after it may still go in.
fn pack(
    hits: Vec<RecallHit>,
    max_tokens: Option<usize>,
    compact: bool,
) -> (Vec<RecallHit>, usize, usize) {
    let cost = |hit: &RecallHit| {
        if compact {
            text::estimate_tokens(&text::preview(&hit.memory.content, PREVIEW_CHARS))
        } else {
            text::estimate_tokens(&hit.memory.content)
        }
    };
    let Some(budget) = max_tokens else {
        let tokens = hits.iter().map(cost).sum();
        return (hits, tokens, 0);
    };
    let (mut kept, mut used, mut omitted) = (Vec::new(), 0, 0);
    for hit in hits {
        let tokens = cost(&hit);
        if used + tokens <= budget {
            used += tokens;
            kept.push(hit);
        } else {
            omitted += 1;
        }
    }
    (kept, used, omitted)
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

/// A memory close to another one, with how close.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelatedMemory {
    /// The memory.
    pub memory: Memory,
    /// Cosine similarity of the two stored vectors.
    pub similarity: f64,
}

/// What an in-place content update did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContentUpdate {
    /// The memory as updated.
    pub memory: Memory,
    /// Secrets replaced before the new content was stored or embedded.
    pub redactions: Vec<Redaction>,
}

// Added for the MCP surface: importance by hand, content updates through the gate's
// content-safety checks, related memories and sessions.
impl Levh {
    /// Sets a memory's importance (0..1).
    pub fn set_importance(&self, scope: &Scope, id: MemoryId, importance: f64) -> Result<Memory> {
        let importance = check_importance(importance)?;
        self.update_one(scope, id, EventKind::Importance, &mut |m| {
            (m.state.importance != importance).then_some(MemoryState {
                importance,
                ..m.state
            })
        })
    }

    /// Replaces a memory's content in place. The new content passes the gate's content
    /// checks (length limits; secrets redacted before storage and embedding); the
    /// memory keeps its id, model state and history.
    pub fn update_content(
        &self,
        scope: &Scope,
        id: MemoryId,
        content: &str,
    ) -> Result<ContentUpdate> {
        let (content, redactions) = gate::secrets::redact(content.trim());
        let length = content.chars().count();
        let gate_config = &self.config.gate;
        if length < gate_config.min_chars.max(1) {
            return Err(Error::invalid(
                "content",
                format!(
                    "too short ({length} characters; at least {} needed)",
                    gate_config.min_chars
                ),
            ));
        }
        if length > gate_config.max_chars {
            return Err(Error::invalid(
                "content",
                format!(
                    "too long ({length} characters; at most {})",
                    gate_config.max_chars
                ),
            ));
        }
        // Missing ids are refused before anything is embedded.
        self.get(scope, id)?;
        let embedding = self.embed_one(&content)?;
        let keys = text::near_duplicate_keys(&content);
        let kinds: Vec<&str> = redactions.iter().map(|r| r.kind.as_str()).collect();
        let replaced = self.store.replace_content(
            &scope.workspace,
            id,
            &content,
            Some(&embedding),
            &keys,
            EventKind::Update,
            serde_json::json!({ "redacted": kinds }),
            self.clock.now(),
            &scope.actor,
        )?;
        if !replaced {
            return Err(Error::NotFound(id));
        }
        Ok(ContentUpdate {
            memory: self.get(scope, id)?,
            redactions,
        })
    }

    /// Memories valid now whose stored vectors are closest to this memory's, closest first.
    pub fn related(&self, scope: &Scope, id: MemoryId, limit: usize) -> Result<Vec<RelatedMemory>> {
        if limit == 0 || limit > MAX_RECALL_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("{limit} is outside 1..{MAX_RECALL_LIMIT}"),
            ));
        }
        let memory = self.get(scope, id)?;
        let vector = self.vector_of(scope, &memory)?;
        let filter = MemoryFilter {
            valid_at: Some(self.clock.now()),
            ..MemoryFilter::workspace(scope.workspace.clone())
        };
        let near: Vec<(MemoryId, f32)> = self
            .index
            .nearest(&filter, self.embedder.model_id(), &vector, limit + 1)?
            .into_iter()
            .filter(|(other, _)| *other != id)
            .take(limit)
            .collect();
        let near: Vec<(MemoryId, f64)> = near
            .into_iter()
            .map(|(id, cos)| (id, f64::from(cos)))
            .collect();
        let mut related: Vec<RelatedMemory> = self
            .with_scores(&scope.workspace, &near)?
            .into_iter()
            .map(|(memory, similarity)| RelatedMemory { memory, similarity })
            .collect();
        related.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        Ok(related)
    }

    /// A memory's H-score and its four terms, now, with the relevance's parts when a query
    /// is given. With a query, relevance is what
    /// recall would fuse for this memory among the query's candidates (default filters,
    /// the embedder's floor); a memory that would not be a candidate gets its cosine
    /// alone. Without a query relevance is taken as 1, so the score shows the memory's
    /// standing on its own.
    pub fn score_breakdown(
        &self,
        scope: &Scope,
        id: MemoryId,
        query: Option<&str>,
    ) -> Result<(rank::HScore, Option<rank::Relevance>)> {
        let memory = self.get(scope, id)?;
        let now = self.clock.now();
        let relevance = match query.map(str::trim) {
            None => None,
            Some("") => return Err(Error::invalid("query", "is empty")),
            Some(query) => {
                let filter = MemoryFilter {
                    valid_at: Some(now),
                    ..MemoryFilter::workspace(scope.workspace.clone())
                };
                let floor = self.config.recall.floor(self.embedder.is_semantic());
                let pool = self.config.recall.candidates;
                let hits = self.score_candidates(scope, &filter, query, pool, floor, now)?;
                match hits.into_iter().find(|hit| hit.memory.id == id) {
                    Some(hit) => Some(hit.relevance),
                    None => {
                        let query_vector = self.embed_one(query)?.vector;
                        let vector = self.vector_of(scope, &memory)?;
                        Some(rank::Relevance::cosine_only(cosine(&query_vector, &vector)))
                    }
                }
            }
        };
        let score = rank::h_score(
            &self.config.ranking,
            relevance.map_or(1.0, |r| r.value),
            model::retention(&memory.state, now),
            memory.state.importance,
            rank::frequency(memory.state.recall_count),
        );
        Ok((score, relevance))
    }

    /// A memory's stored vector of the current model, or a fresh embedding of its content
    /// when it has none yet (stored under another model, not re-embedded).
    fn vector_of(&self, scope: &Scope, memory: &Memory) -> Result<Vec<f32>> {
        let model_id = self.embedder.model_id();
        match self
            .store
            .embeddings(&scope.workspace, &[memory.id], model_id)?
            .pop()
        {
            Some((_, vector)) => Ok(vector),
            None => Ok(self.embed_one(&memory.content)?.vector),
        }
    }

    /// The memories behind scored ids, each with its score (ids no longer found are left
    /// out; the order is the store's, callers sort).
    fn with_scores(
        &self,
        workspace: &Workspace,
        scored: &[(MemoryId, f64)],
    ) -> Result<Vec<(Memory, f64)>> {
        let score: HashMap<MemoryId, f64> = scored.iter().copied().collect();
        let ids: Vec<MemoryId> = scored.iter().map(|(id, _)| *id).collect();
        Ok(self
            .store
            .get_many(workspace, &ids)?
            .into_iter()
            .map(|memory| {
                let value = score[&memory.id];
                (memory, value)
            })
            .collect())
    }

    /// Opens a session in the scope's workspace.
    pub fn create_session(&self, scope: &Scope, project: Option<String>) -> Result<Session> {
        let project = check_label("project", project)?;
        let now = self.clock.now();
        let session = Session {
            id: crate::SessionId::new(MemoryId::new_at(now).to_string()),
            workspace: scope.workspace.clone(),
            project,
            client: scope.actor.client.clone(),
            started_at: now,
            ended_at: None,
        };
        self.store.start_session(&session)?;
        Ok(session)
    }

    /// Ends a session (ending it twice keeps the first end).
    pub fn end_session(&self, scope: &Scope, id: &crate::SessionId) -> Result<Session> {
        self.store
            .end_session(&scope.workspace, id, self.clock.now())?
            .ok_or_else(|| Error::invalid("session_id", format!("no session with id {id}")))
    }
}
