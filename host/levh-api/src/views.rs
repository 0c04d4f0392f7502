//! What every surface returns: the response types of the operations, each with a JSON
//! schema (REST's OpenAPI document and MCP's output schemas are generated from them).
//!
//! These are deliberately separate from levh-core's types: the wire shape is a contract
//! of its own (ids and times as strings, retention computed for `now`), and levh-core
//! stays free of schema derives.

use std::collections::BTreeMap;

use levh_core::{
    CaptureOutcome, Evaluation, HeldCandidate, HeldStatus, Levh, Measure, Memory, ModelConfig,
    Nearest, Redaction, Timestamp, Verdict, model,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A memory, as every surface shows it: REST, MCP, the CLI's `--json` and the dashboard.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryView {
    /// Its id (a UUID).
    pub id: String,
    /// The workspace it belongs to.
    pub workspace: String,
    /// Its project, if any.
    pub project: Option<String>,
    /// The text (secrets already redacted).
    pub content: String,
    /// note, event, decision, ...
    pub kind: String,
    /// Who wrote it (the MCP client's name, `cli`, `connector:email`, ...).
    pub source: String,
    /// Importance 0..1.
    pub importance: f64,
    /// Pinned memories never fade.
    pub pinned: bool,
    /// Hours for retention to halve.
    pub stability_hours: f64,
    /// Retention now, 0..1 (1 for pinned).
    pub retention: f64,
    /// How often it is recalled, as the H-score weighs it (0..1).
    pub frequency: f64,
    /// Whether its retention is below the fading threshold now.
    pub fading: bool,
    /// When it will fall below the fading threshold with no recall (RFC 3339; none when
    /// pinned).
    pub fades_at: Option<String>,
    /// How often it was recalled or reinforced.
    pub recall_count: u32,
    /// When it was last recalled or reinforced.
    pub last_recalled_at: Option<String>,
    /// When levh stored it (RFC 3339).
    pub created_at: String,
    /// World time from which it holds.
    pub valid_from: String,
    /// World time at which it stopped holding, if it did.
    pub valid_to: Option<String>,
    /// The memory that replaced it.
    pub superseded_by: Option<String>,
    /// Hash of the content, for exact-duplicate checks.
    pub content_hash: String,
    /// How it was admitted.
    pub admission: AdmissionView,
    /// Free-form JSON metadata.
    pub metadata: serde_json::Value,
    /// The session it was captured in.
    pub session_id: Option<String>,
    /// The embedding model of its stored vector, if it has one.
    pub embedding_model: Option<String>,
    /// The dimension of its stored vector.
    pub embedding_dimension: Option<u32>,
}

/// How a memory was admitted.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AdmissionView {
    /// `admit`, `redact`, or (after a person's decision) `review`.
    pub verdict: VerdictKind,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// `gate` for automatic decisions, otherwise the person or surface that decided.
    pub decided_by: String,
}

impl MemoryView {
    /// The view of `memory` at `now` under the memory model `config`.
    pub fn new(memory: &Memory, config: &ModelConfig, now: Timestamp) -> Self {
        let state = &memory.state;
        Self {
            id: memory.id.to_string(),
            workspace: memory.workspace.to_string(),
            project: memory.project.clone(),
            content: memory.content.clone(),
            kind: memory.kind.to_string(),
            source: memory.source.clone(),
            importance: state.importance,
            pinned: state.pinned,
            stability_hours: state.stability_hours,
            retention: model::retention(state, now),
            frequency: levh_core::rank::frequency(state.recall_count),
            fading: model::is_fading(state, config, now),
            fades_at: model::fades_at(state, config).map(|t| t.to_string()),
            recall_count: state.recall_count,
            last_recalled_at: state.last_recalled_at.map(|t| t.to_string()),
            created_at: state.created_at.to_string(),
            valid_from: memory.valid_from.to_string(),
            valid_to: memory.valid_to.map(|t| t.to_string()),
            superseded_by: memory.superseded_by.map(|id| id.to_string()),
            content_hash: memory.content_hash.clone(),
            admission: AdmissionView {
                verdict: match memory.admission.verdict {
                    levh_core::AdmissionVerdict::Admit => VerdictKind::Admit,
                    levh_core::AdmissionVerdict::Redact => VerdictKind::Redact,
                    levh_core::AdmissionVerdict::Review => VerdictKind::Review,
                },
                reasons: memory.admission.reasons.clone(),
                decided_by: memory.admission.decided_by.clone(),
            },
            metadata: memory.metadata.clone(),
            session_id: memory.session_id.as_ref().map(ToString::to_string),
            embedding_model: memory.embedding_model.clone(),
            embedding_dimension: memory.embedding_dimension,
        }
    }

    /// The view of `memory` as `levh` sees it now.
    pub fn of(levh: &Levh, memory: &Memory) -> Self {
        Self::new(memory, &levh.config().model, levh.now())
    }
}

/// A list of memories.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryList {
    /// The memories.
    pub memories: Vec<MemoryView>,
}

/// A memory as `levh show` finds it: also a forgotten one, with when it was forgotten.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShownMemory {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// When it was forgotten (RFC 3339), if it was: retired from every read, kept for
    /// history until purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgotten_at: Option<String>,
}

/// The nearest existing memory the gate compared with.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NearestView {
    /// Its id.
    pub id: String,
    /// Similarity 0..1.
    pub similarity: f64,
    /// How the similarity was measured.
    pub measure: MeasureKind,
}

/// How the gate measured a similarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MeasureKind {
    /// Cosine of semantic embeddings.
    Cosine,
    /// Word-shingle Jaccard (no semantic model loaded).
    Lexical,
}

impl From<Measure> for MeasureKind {
    fn from(measure: Measure) -> Self {
        match measure {
            Measure::Cosine => Self::Cosine,
            Measure::Lexical => Self::Lexical,
        }
    }
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerdictKind {
    /// Stored as given.
    Admit,
    /// Stored with its secrets replaced.
    Redact,
    /// Held for a person to decide.
    Review,
    /// Not stored.
    Reject,
}

impl VerdictKind {
    /// The verdict as the wire spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Admit => "admit",
            Self::Redact => "redact",
            Self::Review => "review",
            Self::Reject => "reject",
        }
    }
}

impl From<&Verdict> for VerdictKind {
    fn from(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Admit => Self::Admit,
            Verdict::Redact => Self::Redact,
            Verdict::Review { .. } => Self::Review,
            // Reject, and any verdict a later gate adds: not stored.
            _ => Self::Reject,
        }
    }
}

/// Where a held candidate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeldStatusKind {
    /// Waiting for a person.
    Held,
    /// Stored as a memory.
    Admitted,
    /// Let go.
    Discarded,
    /// Not decided within the configured expiry.
    Expired,
}

impl HeldStatusKind {
    /// The status as the wire spells it.
    pub fn name(self) -> &'static str {
        HeldStatus::from(self).as_str()
    }
}

impl From<HeldStatus> for HeldStatusKind {
    fn from(status: HeldStatus) -> Self {
        match status {
            HeldStatus::Held => Self::Held,
            HeldStatus::Admitted => Self::Admitted,
            HeldStatus::Discarded => Self::Discarded,
            HeldStatus::Expired => Self::Expired,
        }
    }
}

impl From<HeldStatusKind> for HeldStatus {
    fn from(status: HeldStatusKind) -> Self {
        match status {
            HeldStatusKind::Held => Self::Held,
            HeldStatusKind::Admitted => Self::Admitted,
            HeldStatusKind::Discarded => Self::Discarded,
            HeldStatusKind::Expired => Self::Expired,
        }
    }
}

impl From<Nearest> for NearestView {
    fn from(nearest: Nearest) -> Self {
        Self {
            id: nearest.id.to_string(),
            similarity: nearest.similarity,
            measure: nearest.measure.into(),
        }
    }
}

fn kinds(redactions: &[Redaction]) -> Vec<String> {
    redactions.iter().map(|r| r.kind.clone()).collect()
}

/// What the gate did with a write.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CaptureView {
    /// `admit`, `redact` (stored with secrets replaced), `review` (held for a person) or
    /// `reject` (not stored).
    pub verdict: VerdictKind,
    /// The stored memory (admit, redact).
    pub memory_id: Option<String>,
    /// The held candidate (review): a person decides it, never the agent.
    pub held_id: Option<String>,
    /// Why (review, reject).
    pub reason: Option<String>,
    /// The existing memory that decided a review or a duplicate.
    pub nearest: Option<NearestView>,
    /// Kinds of secrets replaced before storing.
    pub redactions: Vec<String>,
    /// The source recorded on what was stored.
    pub source: String,
    /// Older memories this one weakened because it resembles them (a new fact
    /// interferes with the one it replaces), with their stability now.
    pub interference: Vec<InterferenceView>,
}

/// An older memory a new one weakened.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InterferenceView {
    /// The older memory.
    pub memory_id: String,
    /// How similar the new memory is to it, 0..1.
    pub similarity: f64,
    /// Its stability (hours for retention to halve) after the interference.
    pub stability_hours: f64,
}

impl CaptureView {
    /// The view of a capture made for `source`.
    pub fn new(outcome: &CaptureOutcome, source: String) -> Self {
        Self {
            verdict: VerdictKind::from(&outcome.verdict),
            memory_id: outcome.memory_id.map(|id| id.to_string()),
            held_id: outcome.held_id.map(|id| id.to_string()),
            reason: outcome.reason(),
            nearest: outcome.nearest().map(NearestView::from),
            redactions: kinds(&outcome.redactions),
            source,
            interference: outcome
                .interference
                .iter()
                .map(|hit| InterferenceView {
                    memory_id: hit.memory_id.to_string(),
                    similarity: hit.similarity,
                    stability_hours: hit.stability_hours,
                })
                .collect(),
        }
    }
}

/// What a batch of memories came to, item by item in the order sent.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BatchView {
    /// One entry per item sent, in order.
    pub results: Vec<BatchItemView>,
    /// How many were stored as given.
    pub admitted: usize,
    /// How many were stored with secrets replaced.
    pub redacted: usize,
    /// How many wait for a person in the held queue.
    pub held: usize,
    /// How many the gate refused (duplicates, too short).
    pub rejected: usize,
    /// How many were invalid (each says why); nothing of them was stored.
    pub failed: usize,
}

/// One item of a batch: the gate's verdict, or why the item was refused before the gate.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BatchItemView {
    /// Its position in the request (from 0).
    pub index: usize,
    /// What the gate decided, when the item was valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CaptureView>,
    /// What was wrong with the item, naming the field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl BatchView {
    /// The view of a batch's items, in order.
    pub fn new(results: Vec<BatchItemView>) -> Self {
        let count = |kind: VerdictKind| {
            results
                .iter()
                .filter(|r| r.outcome.as_ref().is_some_and(|o| o.verdict == kind))
                .count()
        };
        Self {
            admitted: count(VerdictKind::Admit),
            redacted: count(VerdictKind::Redact),
            held: count(VerdictKind::Review),
            rejected: count(VerdictKind::Reject),
            failed: results.iter().filter(|r| r.error.is_some()).count(),
            results,
        }
    }
}

/// What the gate would do, without storing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EvaluationView {
    /// What the gate would decide.
    pub verdict: VerdictKind,
    /// Why (review, reject).
    pub reason: Option<String>,
    /// The content as it would be stored.
    pub content: String,
    /// Kinds of secrets that would be replaced.
    pub redactions: Vec<String>,
    /// The nearest existing memory, whatever the verdict.
    pub nearest: Option<NearestView>,
}

impl From<&Evaluation> for EvaluationView {
    fn from(evaluation: &Evaluation) -> Self {
        let reason = match &evaluation.verdict {
            levh_core::Verdict::Review { nearest } => Some(levh_core::gate::review_reason(nearest)),
            levh_core::Verdict::Reject { reason, .. } => Some(reason.clone()),
            _ => None,
        };
        Self {
            verdict: VerdictKind::from(&evaluation.verdict),
            reason,
            content: evaluation.content.clone(),
            redactions: kinds(&evaluation.redactions),
            nearest: evaluation.nearest.map(NearestView::from),
        }
    }
}

/// A held candidate (content the gate declined to judge).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HeldView {
    /// Its id.
    pub id: String,
    /// The text (already redacted).
    pub content: String,
    /// Its project.
    pub project: Option<String>,
    /// Who wrote it.
    pub source: String,
    /// Why it was held.
    pub reason: String,
    /// The memory that caused the hold.
    pub nearest: Option<NearestView>,
    /// held, admitted, discarded, expired.
    pub status: HeldStatusKind,
    /// When it was held.
    pub created_at: String,
    /// The memory it became, once admitted.
    pub memory_id: Option<String>,
    /// The memory whose content it would replace, when it is a held update.
    pub updates: Option<String>,
    /// When it expires undecided, if it does.
    pub expires_at: Option<String>,
    /// When a person decided it.
    pub decided_at: Option<String>,
    /// Who decided it (surface and principal).
    pub decided_by: Option<String>,
}

impl From<&HeldCandidate> for HeldView {
    fn from(held: &HeldCandidate) -> Self {
        Self {
            id: held.id.to_string(),
            content: held.content.clone(),
            project: held.project.clone(),
            source: held.source.clone(),
            reason: held.reason.clone(),
            nearest: held.nearest.map(NearestView::from),
            status: held.status.into(),
            created_at: held.created_at.to_string(),
            memory_id: held.memory_id.map(|id| id.to_string()),
            updates: held.updates.map(|id| id.to_string()),
            expires_at: held.expires_at.map(|at| at.to_string()),
            decided_at: held.decision.as_ref().map(|d| d.at.to_string()),
            decided_by: held.decision.as_ref().map(|d| d.by.to_string()),
        }
    }
}

/// The held queue.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HeldList {
    /// Candidates, oldest first.
    pub held: Vec<HeldView>,
    /// How a person decides them (agents cannot).
    pub how_to_decide: String,
}

/// One recall result: the memory as it was scored, or (compact) only what names it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HitEntry {
    /// The memory and its scores.
    Full(Box<HitView>),
    /// Only id, preview and score (`compact`).
    Compact(CompactHitView),
}

/// One recall result in full.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HitView {
    /// The memory, as it was scored.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// What ranked it, lower is better: the H-score, or the active scorer's score.
    pub score: f64,
    /// `h-score`, or the id of the scorer plugin that ranked the results.
    pub ranked_by: String,
    /// Its H-score (the same as `score` unless a scorer ranked the results).
    pub h_score: f64,
    /// Relevance to the query, 0..1: lexical (BM25) and semantic (cosine) evidence fused.
    pub relevance: f64,
    /// Cosine similarity to the query, 0..1 (the semantic part of the relevance).
    pub similarity: f64,
    /// BM25, normalised by the query's best, 0..1 (the lexical part; 0 when no word
    /// matched).
    pub lexical: f64,
    /// Whether the full-text index found it (a word of the query matched).
    pub lexical_match: bool,
    /// The H-score's terms and the relevance's parts (with `explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<ExplainView>,
}

/// One recall result, compact.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompactHitView {
    /// The memory's id.
    pub id: String,
    /// The start of its content.
    pub preview: String,
    /// What ranked it, lower is better.
    pub score: f64,
}

/// Why a result ranked where it did: the four weighted H-score terms (lower is better;
/// their sum is the H-score) and the evidence its relevance was fused from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExplainView {
    /// α·(1−relevance).
    pub relevance_term: f64,
    /// β·(1−retention).
    pub retention_term: f64,
    /// γ·(1−importance).
    pub importance_term: f64,
    /// δ·(1−frequency).
    pub frequency_term: f64,
    /// The raw BM25 score, when a word of the query matched.
    pub bm25: Option<f64>,
    /// Rank among the full-text candidates.
    pub lexical_rank: Option<usize>,
    /// Rank among the vector candidates.
    pub vector_rank: Option<usize>,
}

/// How recall results are shaped.
#[derive(Debug, Clone, Copy, Default)]
pub struct HitShape {
    /// Only id, preview and score.
    pub compact: bool,
    /// With the score's terms.
    pub explain: bool,
}

impl HitView {
    /// The view of one hit of a recall ranked by `ranked_by`.
    pub fn new(hit: &levh_core::RecallHit, ranked_by: &str, levh: &Levh) -> Self {
        Self {
            memory: MemoryView::of(levh, &hit.memory),
            score: hit.policy_score.unwrap_or(hit.score.score),
            ranked_by: ranked_by.to_owned(),
            h_score: hit.score.score,
            relevance: hit.relevance.value,
            similarity: hit.relevance.semantic,
            lexical: hit.relevance.lexical,
            lexical_match: hit.lexical_match,
            explain: None,
        }
    }
}

impl HitEntry {
    /// One hit shaped as asked.
    pub fn new(hit: &levh_core::RecallHit, ranked_by: &str, levh: &Levh, shape: HitShape) -> Self {
        if shape.compact {
            return Self::Compact(CompactHitView {
                id: hit.memory.id.to_string(),
                preview: levh_core::text::preview(&hit.memory.content, levh_core::PREVIEW_CHARS),
                score: hit.policy_score.unwrap_or(hit.score.score),
            });
        }
        let mut view = HitView::new(hit, ranked_by, levh);
        if shape.explain {
            let terms = hit.score.terms;
            view.explain = Some(ExplainView {
                relevance_term: terms.relevance,
                retention_term: terms.retention,
                importance_term: terms.importance,
                frequency_term: terms.frequency,
                bm25: hit.relevance.bm25,
                lexical_rank: hit.relevance.lexical_rank,
                vector_rank: hit.relevance.vector_rank,
            });
        }
        Self::Full(Box::new(view))
    }
}

impl From<levh_core::Stats> for StatsView {
    fn from(s: levh_core::Stats) -> Self {
        Self {
            total: s.total,
            pinned: s.pinned,
            fading: s.fading,
            average_retention: s.average_retention,
            retention_histogram: s.retention_histogram.to_vec(),
            recalls: s.recalls,
            by_project: s.by_project,
            without_project: s.without_project,
            by_source: s.by_source,
            by_kind: s.by_kind,
            embedder: s.embedder,
        }
    }
}

/// The result of a recall or a search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecallView {
    /// Best first.
    pub results: Vec<HitEntry>,
    /// How many memories were considered before ranking.
    pub candidates: usize,
    /// `h-score`, or the id of the scorer plugin that ranked the results.
    pub ranked_by: String,
    /// Ids of the memories this call reinforced (empty for a search).
    pub reinforced: Vec<String>,
    /// Estimated tokens of the returned content.
    pub tokens: usize,
    /// Results left out by the token budget.
    pub omitted_by_budget: usize,
    /// Anything that went wrong on the way.
    pub warnings: Vec<String>,
}

impl RecallView {
    /// The view of a recall's output, retention computed at `now`, hits shaped as asked.
    pub fn new(output: &levh_core::RecallOutput, levh: &Levh, shape: HitShape) -> Self {
        Self {
            results: output
                .hits
                .iter()
                .map(|hit| HitEntry::new(hit, &output.ranked_by, levh, shape))
                .collect(),
            candidates: output.candidates,
            ranked_by: output.ranked_by.clone(),
            reinforced: output.reinforced.iter().map(|id| id.to_string()).collect(),
            tokens: output.tokens,
            omitted_by_budget: output.omitted_by_budget,
            warnings: output.warnings.clone(),
        }
    }
}

/// Generated context for a session: pinned rules first, then the project's essentials.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextView {
    /// The project it was generated for.
    pub project: Option<String>,
    /// Pinned memories (rules that never fade).
    pub pinned: Vec<MemoryView>,
    /// The most important, best-retained memories besides.
    pub essentials: Vec<MemoryView>,
    /// Estimated tokens used.
    pub tokens: usize,
    /// Memories left out by the token budget.
    pub omitted: usize,
    /// The same as Markdown, ready to read.
    pub text: String,
}

/// Workspace statistics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatsView {
    /// Live memories valid now.
    pub total: u64,
    /// Pinned among them.
    pub pinned: u64,
    /// Fading among them.
    pub fading: u64,
    /// Mean retention now.
    pub average_retention: f64,
    /// Memories per tenth of retention now: `[0]` is 0–10%, `[9]` 90–100%.
    pub retention_histogram: Vec<u64>,
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

/// A name with a count (projects, sources).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NamedCount {
    /// The name.
    pub name: String,
    /// Live memories with it.
    pub memories: u64,
}

/// Projects of the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectList {
    /// Projects, by name.
    pub projects: Vec<NamedCount>,
}

/// Sources of the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceList {
    /// Sources, by name.
    pub sources: Vec<NamedCount>,
}

/// A memory with its similarity to another.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedView {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// Similarity of the stored vectors.
    pub similarity: f64,
}

/// Memories related to one.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedList {
    /// The memory asked about.
    pub memory_id: String,
    /// Closest first.
    pub related: Vec<RelatedView>,
}

/// A memory that is fading.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FadingList {
    /// Weakest first.
    pub memories: Vec<MemoryView>,
}

/// A session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionView {
    /// Its id: pass it as `session_id` to store_memory.
    pub session_id: String,
    /// Its project.
    pub project: Option<String>,
    /// The client that opened it.
    pub client: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
}

impl From<&levh_core::Session> for SessionView {
    fn from(session: &levh_core::Session) -> Self {
        Self {
            session_id: session.id.to_string(),
            project: session.project.clone(),
            client: session.client.clone(),
            started_at: session.started_at.to_string(),
            ended_at: session.ended_at.map(|t| t.to_string()),
        }
    }
}

/// A memory holding secrets.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SecretFindingView {
    /// The memory.
    pub memory_id: String,
    /// Kinds of secrets (never the secrets).
    pub kinds: Vec<String>,
    /// The fields they were in: `content`, `project`, `source`, `metadata`.
    pub fields: Vec<String>,
}

/// A secret kept outside memories' content and labels.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SecretPlaceView {
    /// Where: a memory's kind, a held candidate's field, a synced item's id, a token's
    /// label (named without the text).
    pub place: String,
    /// Kinds of secrets (never the secrets).
    pub kinds: Vec<String>,
}

/// Secrets found (or redacted).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SecretsView {
    /// One entry per memory.
    pub findings: Vec<SecretFindingView>,
    /// Secrets elsewhere: memories' kinds, held candidates, synced items' ids, tokens'
    /// labels.
    pub elsewhere: Vec<SecretPlaceView>,
    /// Whether the secrets were stripped (redact_secrets) or only found (audit_secrets).
    pub redacted: bool,
}

/// A decision on a held candidate.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DecisionView {
    /// The candidate.
    pub held_id: String,
    /// What the person decided.
    pub outcome: DecisionOutcome,
    /// The memory it became.
    pub memory_id: Option<String>,
    /// The memory it replaced.
    pub superseded: Option<String>,
}

/// A person's answer to "decide this held candidate".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionOutcome {
    /// Admitted as a new memory.
    Admitted,
    /// Admitted, replacing its nearest memory.
    AdmittedAsReplacement,
    /// Let go.
    Discarded,
    /// The person chose not to decide now.
    Declined,
    /// The person closed the question.
    Cancelled,
}

/// What a purge removed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PurgeView {
    /// The erased memory.
    pub memory_id: String,
    /// Held candidates with the same content erased too.
    pub held_removed: u64,
    /// Places where the content can still be found (empty when clean).
    pub residue: Vec<String>,
}

/// A plain acknowledgement.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Done {
    /// The memory acted on.
    pub memory_id: String,
    /// What happened.
    pub status: DoneStatus,
}

/// What a plain acknowledgement says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DoneStatus {
    /// Retired from every read, kept for history until purged.
    Forgotten,
}

/// What the gate did with an update. New content is judged like a capture against every
/// other memory: `admit`/`redact` (applied), `review` (held for a person: `held_id`
/// names the candidate, which names the memory it would change) or `reject` (nothing
/// changed: `reason` says why).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UpdateView {
    /// What the gate decided about the new content (`admit` when only importance changed).
    pub verdict: VerdictKind,
    /// The memory as it stands after the call (unchanged unless the update was applied).
    pub memory: MemoryView,
    /// Whether the update took effect (false when it was held or rejected).
    pub applied: bool,
    /// The held candidate (review): a person decides it, never the agent.
    pub held_id: Option<String>,
    /// Why (review, reject).
    pub reason: Option<String>,
    /// The other memory that decided a review or a duplicate.
    pub nearest: Option<NearestView>,
    /// Kinds of secrets replaced in the new content.
    pub redactions: Vec<String>,
}

/// Connector tool outputs are plain JSON from the connector runtime.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConnectorOutput {
    /// The result.
    pub result: serde_json::Value,
}

/// What an admission did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AdmitView {
    /// The candidate.
    pub held_id: String,
    /// The memory it became (or, for a held update, the memory it changed).
    pub memory_id: String,
    /// The memory it replaced.
    pub superseded: Option<String>,
    /// Whether it was a held update: `memory_id` kept its id and took the new content.
    pub updated: bool,
}

/// A forgetting curve.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CurveView {
    /// The memory.
    pub memory_id: String,
    /// One point per day.
    pub points: Vec<CurvePointView>,
}

/// One day of a forgetting curve.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CurvePointView {
    /// Days from now.
    pub day: u32,
    /// The instant (RFC 3339).
    pub at: String,
    /// Predicted retention with no recall in between.
    pub retention: f64,
}

/// An H-score and its terms (lower ranks first).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScoreView {
    /// The memory.
    pub memory_id: String,
    /// α·(1−relevance) + β·(1−retention) + γ·(1−importance) + δ·(1−frequency).
    pub score: f64,
    /// Relevance to the query, 0..1: BM25 and cosine fused as recall fuses them (1 without
    /// a query).
    pub relevance: f64,
    /// The semantic part: cosine to the query, 0..1 (1 without a query).
    pub similarity: f64,
    /// The lexical part: BM25 normalised by the query's best match, 0..1.
    pub lexical: f64,
    /// The raw BM25 score, when the query's words matched.
    pub bm25: Option<f64>,
    /// What a period named by the query ("in March") added.
    pub temporal: f64,
    /// Retention now.
    pub retention: f64,
    /// Importance.
    pub importance: f64,
    /// Frequency of recall.
    pub frequency: f64,
    /// The four weighted terms.
    pub terms: BTreeMap<String, f64>,
}

/// Liveness of the server and its store.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HealthView {
    /// `ok`.
    pub status: String,
    /// levh's version.
    pub version: String,
    /// Schema version of the store.
    pub schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// The embedder's model id.
    pub embedder: String,
    /// The caller's workspace.
    pub workspace: String,
    /// The caller's role.
    pub role: RoleView,
}

/// A caller's role, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleView {
    /// Reads only.
    Viewer,
    /// Reads and writes.
    Editor,
    /// Everything in its workspace.
    Admin,
}

impl RoleView {
    /// The role as the wire spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }
}

impl From<levh_core::Role> for RoleView {
    fn from(role: levh_core::Role) -> Self {
        match role {
            levh_core::Role::Viewer => Self::Viewer,
            levh_core::Role::Editor => Self::Editor,
            levh_core::Role::Admin => Self::Admin,
        }
    }
}

/// One event of the log, as a memory's history shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EventView {
    /// Position in the log.
    pub seq: i64,
    /// When it happened (RFC 3339).
    pub at: String,
    /// `store`, `reinforce`, `interfere`, `pin`, `update`, `forget`, `admit`, ...
    pub kind: String,
    /// The surface it came through: `cli`, `mcp`, `http`, `dashboard`, `sync`, ...
    pub surface: String,
    /// The client behind the surface, when known.
    pub client: Option<String>,
    /// The actor's role.
    pub role: String,
    /// What changed, never content: ids, similarities, stability, kinds of secret.
    pub detail: serde_json::Value,
}

impl From<&levh_core::LoggedEvent> for EventView {
    fn from(event: &levh_core::LoggedEvent) -> Self {
        Self {
            seq: event.seq,
            at: event.at.to_string(),
            kind: event.kind.clone(),
            surface: event.surface.clone(),
            client: event.client.clone(),
            role: event.role.clone(),
            detail: event.detail.clone(),
        }
    }
}

/// A memory's history from the event log, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HistoryView {
    /// The memory.
    pub memory_id: String,
    /// Its events, newest first.
    pub events: Vec<EventView>,
}

/// A token of the workspace, never its secret.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TokenView {
    /// Its public id (`tok_…`).
    pub id: String,
    /// The workspace it is bound to.
    pub workspace: String,
    /// What it may do there.
    pub role: RoleView,
    /// What it is for.
    pub label: Option<String>,
    /// When it was issued.
    pub created_at: String,
    /// When it was revoked (a revoked token authenticates nothing).
    pub revoked_at: Option<String>,
}

impl From<&levh_core::TokenInfo> for TokenView {
    fn from(token: &levh_core::TokenInfo) -> Self {
        Self {
            id: token.id.clone(),
            workspace: token.workspace.to_string(),
            role: token.role.into(),
            label: token.label.clone(),
            created_at: token.created_at.to_string(),
            revoked_at: token.revoked_at.map(|t| t.to_string()),
        }
    }
}

/// The workspace's tokens, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TokenList {
    /// Revoked ones too.
    pub tokens: Vec<TokenView>,
}

/// A token just issued: the one answer that carries its secret.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IssuedTokenView {
    /// The stored part.
    #[serde(flatten)]
    pub token: TokenView,
    /// The secret (`levh_…`): shown once, stored nowhere but its hash.
    pub secret: String,
}

/// The server's settings as the dashboard's Settings page shows them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SettingsView {
    /// levh's version.
    pub version: String,
    /// The store: where it is and whether it is well (what `levh doctor` checks).
    pub store: StoreSettingsView,
    /// The embedder in use.
    pub embedder: EmbedderView,
    /// The ranking policy in use.
    pub scorer: ScorerView,
    /// How MCP clients reach this levh.
    pub mcp: McpSettingsView,
    /// The caller's workspace.
    pub workspace: String,
    /// The caller's role.
    pub role: RoleView,
}

/// The store's checks.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StoreSettingsView {
    /// The database file.
    pub path: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// The newest schema version this levh writes.
    pub latest_schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// Whether full-text search is available and holds exactly the stored memories.
    pub full_text_in_step: bool,
}

/// The embedder and its model.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EmbedderView {
    /// `local`, `ollama`, `openai` or `hash`.
    pub mode: String,
    /// Whether the mode was chosen by default (no `LEVH_EMBEDDER`).
    pub automatic: bool,
    /// The model id recorded with every vector.
    pub model: String,
    /// Vector dimension (0 until the first embed for a remote model).
    pub dimension: usize,
    /// Whether similarity means similarity of meaning (false for the hash fallback).
    pub semantic: bool,
    /// Why a better embedder is not in use, and how to get one.
    pub warning: Option<String>,
}

/// The scorer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScorerView {
    /// The installed scorer component ranking recall, or none (the built-in H-score).
    pub active: Option<String>,
    /// Why the chosen scorer is not in use, when it could not be loaded.
    pub warning: Option<String>,
}

/// MCP: the endpoint on this server and the configuration for each client.
#[derive(Debug, Serialize, JsonSchema)]
pub struct McpSettingsView {
    /// The tool band `/mcp` serves.
    pub profile: String,
    /// Path of MCP over streamable HTTP on this server.
    pub http_path: String,
    /// A configuration per client that spawns this levh over stdio.
    pub clients: Vec<McpClientConfigView>,
}

/// One client's configuration.
#[derive(Debug, Serialize, JsonSchema)]
pub struct McpClientConfigView {
    /// `claude`, `claude_code`, `cursor`, `windsurf`, `vscode`, `cline`.
    pub client: String,
    /// Where the configuration goes.
    pub file: String,
    /// The JSON to paste there.
    pub config: serde_json::Value,
}

/// A decision a memory states.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundDecisionView {
    /// The memory that states it.
    pub memory_id: String,
    /// The sentence.
    pub sentence: String,
    /// When it was said (the memory's world time).
    pub at: String,
    /// Where it came from.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// Who was there (the people the connector recorded: attendees, senders, speakers).
    pub people: Vec<String>,
    /// Who said it, when the memory names a speaker or sender.
    pub by: Option<String>,
}

/// Decisions, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DecisionList {
    /// The decisions.
    pub decisions: Vec<FoundDecisionView>,
}

/// A promise a memory makes in its writer's words.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommitmentView {
    /// Its id, for marking it done (`levh commitments done ID`).
    pub id: String,
    /// The memory that makes it.
    pub memory_id: String,
    /// The sentence.
    pub sentence: String,
    /// When it was written (the memory's world time).
    pub written_at: String,
    /// The day it is due, when it names one, in the user's calendar (YYYY-MM-DD).
    pub due: Option<String>,
    /// Whether that day has passed.
    pub overdue: bool,
    /// Where it came from.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// Who else was there.
    pub people: Vec<String>,
    /// Who said it, when the memory names a speaker or sender (a transcript's speaker, a
    /// mail's sender); none when the user (or their agent) wrote it.
    pub by: Option<String>,
    /// Whether it was marked done, by a person or by a later memory saying so.
    pub done: bool,
    /// When it was marked done.
    pub done_at: Option<String>,
    /// The later memory that said it was done.
    pub done_by_memory: Option<String>,
}

/// Commitments, soonest due first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommitmentList {
    /// The zone due dates are in (`LEVH_TZ` or the system's).
    pub time_zone: String,
    /// The commitments.
    pub commitments: Vec<CommitmentView>,
}

/// An entity of the index: a person, organization, project, event, document or task.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntityView {
    /// Its id (a UUID).
    pub id: String,
    /// person, organization, project, event, document or task.
    pub kind: String,
    /// How it is shown: a person's name (else their address), a domain, a title.
    pub name: String,
    /// Memories it appears in (forgotten ones not counted).
    pub memories: u64,
    /// The latest world time of those memories.
    pub last_seen: Option<String>,
    /// The sources of those memories (`connector:email`, `cli`, ...).
    pub channels: Vec<String>,
    /// A person's e-mail addresses.
    pub emails: Vec<String>,
    /// A person's `@handles`.
    pub handles: Vec<String>,
}

impl EntityView {
    /// The view of an entity summary.
    pub fn of(entity: &levh_core::entities::EntitySummary) -> Self {
        Self {
            id: entity.id.to_string(),
            kind: entity.kind.to_string(),
            name: entity.name.clone(),
            memories: entity.memories,
            last_seen: entity.last_seen.map(|t| t.to_string()),
            channels: entity.channels.clone(),
            emails: entity
                .keys
                .iter()
                .filter_map(|k| k.as_email().map(str::to_owned))
                .collect(),
            handles: entity
                .keys
                .iter()
                .filter_map(|k| k.as_handle().map(|h| format!("@{h}")))
                .collect(),
        }
    }
}

/// Entities, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityList {
    /// The entities.
    pub entities: Vec<EntityView>,
}

/// A person with their organizations.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PersonView {
    /// The person.
    #[serde(flatten)]
    pub person: EntityView,
    /// The organizations of their work addresses (domains).
    pub organizations: Vec<String>,
}

/// People, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PeopleList {
    /// The people.
    pub people: Vec<PersonView>,
}

/// An organization: the people graph rolled up by e-mail domain.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrganizationView {
    /// The organization (its name is its domain).
    #[serde(flatten)]
    pub organization: EntityView,
    /// Who from it appears in the memories, most memories first.
    pub people: Vec<EntityView>,
}

/// Organizations, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrganizationList {
    /// The organizations.
    pub organizations: Vec<OrganizationView>,
}

/// One memory of an entity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityMemoryView {
    /// The memory.
    pub memory_id: String,
    /// When it happened (world time).
    pub at: String,
    /// The entity's parts in it (sender, attendee, speaker, mentioned, ...).
    pub roles: Vec<String>,
    /// The memory's kind.
    pub kind: String,
    /// Its source.
    pub source: String,
    /// The start of its text.
    pub preview: String,
}

/// An entity sharing memories with another.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RelatedEntityView {
    /// The entity.
    pub entity: EntityView,
    /// How many memories both appear in.
    pub shared: u64,
}

/// Everything the index knows about one entity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AboutView {
    /// The entity.
    pub entity: EntityView,
    /// Its memories, newest first.
    pub memories: Vec<EntityMemoryView>,
    /// A person's organizations, or an organization's people.
    pub memberships: Vec<EntityView>,
    /// Entities it shares memories with, most shared first (people first among equals).
    pub related: Vec<RelatedEntityView>,
    /// Open commitments made in its memories, soonest due first.
    pub open_commitments: Vec<CommitmentView>,
}

/// A memory on the timeline.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineItem {
    /// The memory.
    pub memory_id: String,
    /// When it happened, in the user's zone (RFC 3339 with the offset of that day).
    pub at: String,
    /// The local time of day (HH:MM).
    pub time: String,
    /// The memory's kind.
    pub kind: String,
    /// Its source.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// The start of its text (a connector item's title when it has one).
    pub preview: String,
    /// The people it names (names, else addresses).
    pub people: Vec<String>,
}

/// One day of the timeline.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineDay {
    /// The day (YYYY-MM-DD) in the user's zone.
    pub day: String,
    /// Its weekday (Monday, ...).
    pub weekday: String,
    /// Its memories, earliest first.
    pub memories: Vec<TimelineItem>,
}

/// Memories grouped by the day they happened.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineView {
    /// The zone the days are in (`LEVH_TZ` or the system's).
    pub time_zone: String,
    /// The first day shown.
    pub from: String,
    /// The last day shown.
    pub to: String,
    /// Days with memories, earliest first.
    pub days: Vec<TimelineDay>,
    /// Whether more memories fell in the range than the limit let through.
    pub truncated: bool,
}

/// Two entities that share memories.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EdgeView {
    /// One entity's id.
    pub from: String,
    /// The other's.
    pub to: String,
    /// How many memories both appear in.
    pub weight: u64,
}

/// The entity graph: entities and their co-occurrence edges.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GraphView {
    /// The entities, most memories first.
    pub nodes: Vec<EntityView>,
    /// Edges among them, heaviest first.
    pub edges: Vec<EdgeView>,
}

/// What a reindex did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReindexView {
    /// Memories indexed in this run.
    pub indexed: u64,
    /// Memories still waiting (a run stopped early: run it again).
    pub remaining: u64,
    /// Entities the workspace has now.
    pub entities: u64,
}
