//! Views of the admission gate and the held queue: verdicts, batches, held candidates, secrets.

use super::*;

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
    /// Conflict candidates found with memories it may contradict (`levh conflicts`).
    pub conflicts: Vec<String>,
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
            conflicts: Vec::new(),
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
    /// Conflict candidates the admitted text forms with other memories (`levh conflicts`).
    pub conflicts: Vec<String>,
}
