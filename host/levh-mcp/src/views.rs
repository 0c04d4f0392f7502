//! What agents read: the structured outputs of the tools, each with a JSON schema.
//!
//! These are deliberately separate from levh-core's types: the agent-facing shape is a
//! contract of its own (ids and times as strings, retention computed for `now`), and
//! levh-core stays free of schema derives.

use levh_core::{
    CaptureOutcome, Evaluation, HeldCandidate, Memory, Nearest, Redaction, Timestamp, model,
};
use schemars::JsonSchema;
use serde::Serialize;

/// A memory as an agent sees it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryView {
    /// Its id (a UUID).
    pub id: String,
    /// The text (secrets already redacted).
    pub content: String,
    /// Its project, if any.
    pub project: Option<String>,
    /// note, event, decision, ...
    pub kind: String,
    /// Who wrote it (the MCP client's name, `cli`, `connector:email`, ...).
    pub source: String,
    /// Importance 0..1.
    pub importance: f64,
    /// Pinned memories never fade.
    pub pinned: bool,
    /// Retention now, 0..1 (1 for pinned).
    pub retention: f64,
    /// How often it was recalled or reinforced.
    pub recall_count: u32,
    /// When levh stored it (RFC 3339).
    pub created_at: String,
    /// World time from which it holds.
    pub valid_from: String,
    /// World time at which it stopped holding, if it did.
    pub valid_to: Option<String>,
}

impl MemoryView {
    /// The view of `memory` at `now`.
    pub fn new(memory: &Memory, now: Timestamp) -> Self {
        Self {
            id: memory.id.to_string(),
            content: memory.content.clone(),
            project: memory.project.clone(),
            kind: memory.kind.to_string(),
            source: memory.source.clone(),
            importance: memory.state.importance,
            pinned: memory.state.pinned,
            retention: model::retention(&memory.state, now),
            recall_count: memory.state.recall_count,
            created_at: memory.state.created_at.to_string(),
            valid_from: memory.valid_from.to_string(),
            valid_to: memory.valid_to.map(|t| t.to_string()),
        }
    }
}

/// A list of memories.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryList {
    /// The memories.
    pub memories: Vec<MemoryView>,
}

/// The nearest existing memory the gate compared with.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NearestView {
    /// Its id.
    pub id: String,
    /// Similarity 0..1.
    pub similarity: f64,
    /// `cosine` or `lexical`.
    pub measure: String,
}

impl From<Nearest> for NearestView {
    fn from(nearest: Nearest) -> Self {
        Self {
            id: nearest.id.to_string(),
            similarity: nearest.similarity,
            measure: nearest.measure.as_str().to_owned(),
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
    pub verdict: String,
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
}

impl CaptureView {
    /// The view of a capture made for `source`.
    pub fn new(outcome: &CaptureOutcome, source: String) -> Self {
        Self {
            verdict: outcome.verdict.name().to_owned(),
            memory_id: outcome.memory_id.map(|id| id.to_string()),
            held_id: outcome.held_id.map(|id| id.to_string()),
            reason: outcome.reason(),
            nearest: outcome.nearest().map(NearestView::from),
            redactions: kinds(&outcome.redactions),
            source,
        }
    }
}

/// What the gate would do, without storing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EvaluationView {
    /// What the gate would decide.
    pub verdict: String,
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
            verdict: evaluation.verdict.name().to_owned(),
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
    pub status: String,
    /// When it was held.
    pub created_at: String,
    /// The memory it became, once admitted.
    pub memory_id: Option<String>,
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
            status: held.status.as_str().to_owned(),
            created_at: held.created_at.to_string(),
            memory_id: held.memory_id.map(|id| id.to_string()),
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

/// One recall result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HitView {
    /// The memory, as it was scored.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// H-score, lower is better.
    pub score: f64,
    /// Relevance to the query, 0..1: lexical (BM25) and semantic (cosine) evidence fused.
    pub relevance: f64,
    /// Cosine similarity to the query, 0..1 (the semantic part of the relevance).
    pub similarity: f64,
    /// BM25, normalised by the query's best, 0..1 (the lexical part; 0 when no word
    /// matched).
    pub lexical: f64,
}

impl From<levh_core::Stats> for StatsView {
    fn from(s: levh_core::Stats) -> Self {
        Self {
            total: s.total,
            pinned: s.pinned,
            fading: s.fading,
            average_retention: s.average_retention,
            recalls: s.recalls,
            by_project: s.by_project,
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
    pub results: Vec<HitView>,
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
    /// The view of a recall's output, retention computed at `now`.
    pub fn new(output: &levh_core::RecallOutput, now: Timestamp) -> Self {
        Self {
            results: output
                .hits
                .iter()
                .map(|hit| HitView {
                    memory: MemoryView::new(&hit.memory, now),
                    score: hit.score.score,
                    relevance: hit.relevance.value,
                    similarity: hit.relevance.semantic,
                    lexical: hit.relevance.lexical,
                })
                .collect(),
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
    /// Sum of recall counts.
    pub recalls: u64,
    /// Count per project (`(none)` for none).
    pub by_project: std::collections::BTreeMap<String, u64>,
    /// Count per source.
    pub by_source: std::collections::BTreeMap<String, u64>,
    /// Count per kind.
    pub by_kind: std::collections::BTreeMap<String, u64>,
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
}

/// Secrets found (or redacted).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SecretsView {
    /// One entry per memory.
    pub findings: Vec<SecretFindingView>,
    /// Whether the secrets were stripped (redact_secrets) or only found (audit_secrets).
    pub redacted: bool,
}

/// A decision on a held candidate.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DecisionView {
    /// The candidate.
    pub held_id: String,
    /// `admitted`, `admitted_as_replacement`, `discarded`, `declined` (the person chose
    /// not to decide now) or `cancelled`.
    pub outcome: String,
    /// The memory it became.
    pub memory_id: Option<String>,
    /// The memory it replaced.
    pub superseded: Option<String>,
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
    pub status: String,
}

/// A content update.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UpdateView {
    /// The memory as updated.
    pub memory: MemoryView,
    /// Kinds of secrets replaced in the new content.
    pub redactions: Vec<String>,
}

impl UpdateView {
    /// The view of an update at `now`.
    pub fn new(update: &levh_core::ContentUpdate, now: Timestamp) -> Self {
        Self {
            memory: MemoryView::new(&update.memory, now),
            redactions: kinds(&update.redactions),
        }
    }
}

/// Connector tool outputs are plain JSON from the connector runtime.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConnectorOutput {
    /// The result.
    pub result: serde_json::Value,
}
