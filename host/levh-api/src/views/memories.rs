//! Views of memories: one memory, lists, what a change did, its curve, score and history.

use super::*;

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
    /// How many memories match the filters in all, on the first page of a list (without
    /// `after`); later pages leave it out rather than count again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// What an upsert did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UpsertView {
    /// `stored` (the key's new current memory), `unchanged` (it already said this),
    /// `held` (for a person: it reads like another memory) or `rejected` (by the gate).
    pub status: String,
    /// The key.
    pub key: String,
    /// The key's current memory after the call (none when held or rejected).
    pub memory: Option<MemoryView>,
    /// The memory it replaced, now retired as superseded (kept for `as_of`).
    pub replaced: Option<String>,
    /// The held candidate, when held.
    pub held_id: Option<String>,
    /// Why it was held or rejected.
    pub reason: Option<String>,
    /// The memory that decided a rejection.
    pub nearest: Option<String>,
    /// Kinds of secrets replaced in it.
    pub redactions: Vec<String>,
}

/// A memory read by id or key, with what a JSON pointer found in its value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GotMemory {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// With a key: the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The memory's JSON value (with `pointer`, what it points to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

/// What a move did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MovedView {
    /// The project they are in now (none: out of every project).
    pub project: Option<String>,
    /// The memories now in it (those already there included).
    pub moved: Vec<String>,
    /// Ids given that name no live memory of the workspace.
    pub missing: Vec<String>,
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
    /// The session whose working memory it still is (SPEC §3): found by that session's
    /// recall only, until used, marked important, pinned or reinforced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_session: Option<String>,
    /// For a consolidation's summary: the memories it replaced, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub consolidated_from: Vec<MemoryView>,
    /// Files attached to it, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentView>,
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
    /// Conflict candidates the new content forms with other memories (`levh conflicts`).
    pub conflicts: Vec<String>,
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

/// A file attached to a memory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AttachmentView {
    /// The memory holding the file's text (kind `attachment`): what recall finds.
    pub memory_id: String,
    /// The memory it is attached to.
    pub attached_to: String,
    /// The file's name.
    pub name: String,
    /// What kind of file it is.
    pub media_type: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file, hex: its name in `$LEVH_HOME/attachments`.
    pub sha256: String,
}

impl AttachmentView {
    /// The view of a stored attachment.
    pub fn of(a: &levh_core::Attachment) -> Self {
        Self {
            memory_id: a.memory_id.to_string(),
            attached_to: a.attached_to.to_string(),
            name: a.name.clone(),
            media_type: a.media_type.clone(),
            bytes: a.bytes,
            sha256: a.sha256.clone(),
        }
    }
}

/// What attaching a file did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AttachedView {
    /// The gate's verdict on the file's text (a duplicate of a file attached before is
    /// rejected, naming it).
    pub capture: CaptureView,
    /// The attachment, when it was kept.
    pub attachment: Option<AttachmentView>,
    /// Characters of text derived from the file.
    pub text_chars: usize,
}

/// A memory's attachments.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AttachmentList {
    /// Oldest first.
    pub attachments: Vec<AttachmentView>,
}
