//! The memory record and the values that travel with it.

use serde::{Deserialize, Serialize};

use crate::{HeldId, Kind, MemoryId, Role, SessionId, Surface, Timestamp, Workspace};

/// The part of a memory that the memory model reads and writes (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryState {
    /// Importance 0..=1.
    pub importance: f64,
    /// Pinned memories never decay and are immune to interference.
    pub pinned: bool,
    /// Hours for retention to halve.
    pub stability_hours: f64,
    /// When the memory was last recalled or reinforced; `None` until the first recall.
    pub last_recalled_at: Option<Timestamp>,
    /// How often it was recalled or reinforced.
    pub recall_count: u32,
    /// Record time: when levh stored it. The decay clock starts here.
    pub created_at: Timestamp,
}

impl MemoryState {
    /// The event log's detail of a change from `before` to this state by `event`
    /// (reinforcement, feedback, pinning, …): what every store writes, so the log reads
    /// the same whichever database holds it. Feedback says whether it was helpful —
    /// helpful feedback reinforces (one more recall), unhelpful weakens — for the recall
    /// report and a memory's trust.
    pub fn change_detail(&self, event: EventKind, before: &MemoryState) -> serde_json::Value {
        let mut detail = serde_json::json!({
            "stability_hours": self.stability_hours,
            "recall_count": self.recall_count,
            "pinned": self.pinned,
        });
        if event == EventKind::Feedback {
            detail["helpful"] = serde_json::json!(self.recall_count > before.recall_count);
        }
        detail
    }

    /// When the decay clock last restarted.
    pub fn clock_start(&self) -> Timestamp {
        self.last_recalled_at.unwrap_or(self.created_at)
    }
}

/// The verdict a stored memory was let in by (a rejected candidate is never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdmissionVerdict {
    /// Stored as given.
    Admit,
    /// Stored with its secrets replaced.
    Redact,
    /// Held, then admitted by a person.
    Review,
}

impl AdmissionVerdict {
    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admit => "admit",
            Self::Redact => "redact",
            Self::Review => "review",
        }
    }

    /// The verdict `text` names, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "admit" => Some(Self::Admit),
            "redact" => Some(Self::Redact),
            "review" => Some(Self::Review),
            _ => None,
        }
    }
}

impl std::fmt::Display for AdmissionVerdict {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// How a memory got in: the gate's verdict, its reasons and who decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmissionRecord {
    /// `admit`, `redact`, or (after a person's decision) `review`.
    pub verdict: AdmissionVerdict,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// `gate` for automatic decisions, otherwise the person or surface that decided.
    pub decided_by: String,
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Its id.
    pub id: MemoryId,
    /// The workspace it belongs to.
    pub workspace: Workspace,
    /// Optional project within the workspace.
    pub project: Option<String>,
    /// The text, already redacted.
    pub content: String,
    /// What it is (note, event, decision, ...).
    pub kind: Kind,
    /// Who produced it (`cli`, `claude-code`, `connector:email`, ...).
    pub source: String,
    /// Decay and reinforcement state.
    #[serde(flatten)]
    pub state: MemoryState,
    /// World time from which the fact holds.
    pub valid_from: Timestamp,
    /// World time at which the fact stopped holding, if it did.
    pub valid_to: Option<Timestamp>,
    /// The memory that replaced this one.
    pub superseded_by: Option<MemoryId>,
    /// Hash of the content, for exact-duplicate checks.
    pub content_hash: String,
    /// How it was admitted.
    pub admission: AdmissionRecord,
    /// Free-form JSON metadata.
    pub metadata: serde_json::Value,
    /// The session it was captured in.
    pub session_id: Option<SessionId>,
    /// The embedding model of its stored vector, if it has one.
    pub embedding_model: Option<String>,
    /// The dimension of its stored vector.
    pub embedding_dimension: Option<u32>,
}

/// What a caller asks to store.
#[derive(Debug, Clone, Default)]
pub struct NewMemory {
    /// The text.
    pub content: String,
    /// Optional project.
    pub project: Option<String>,
    /// Kind; `note` when not given.
    pub kind: Option<Kind>,
    /// Source; the caller's surface name when not given.
    pub source: Option<String>,
    /// Importance 0..=1; 0.5 when not given.
    pub importance: Option<f64>,
    /// Pin it at once.
    pub pinned: bool,
    /// World time from which it holds; now when not given.
    pub valid_from: Option<Timestamp>,
    /// World time at which it stops holding, when known ("on leave until Friday").
    pub valid_to: Option<Timestamp>,
    /// Free-form metadata (a JSON object).
    pub metadata: Option<serde_json::Value>,
    /// The session it belongs to.
    pub session_id: Option<SessionId>,
    /// What the memory was before it moved here (levh's own export, imported): kept as it
    /// was instead of starting afresh.
    pub prior: Option<PriorMemory>,
}

/// A memory's own record from levh's export: its id, model state, source and the memory
/// that superseded it. An import keeps them, so moving a store (export → import) loses
/// neither decay state nor supersede chains. The gate still judges the content.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorMemory {
    /// Its id (kept unless another memory of this store has it).
    pub id: MemoryId,
    /// Who wrote it.
    pub source: Option<String>,
    /// Its stability, in hours.
    pub stability_hours: f64,
    /// How often it was recalled.
    pub recall_count: u32,
    /// When it was last recalled.
    pub last_recalled_at: Option<Timestamp>,
    /// When levh first stored it.
    pub created_at: Timestamp,
    /// The memory that replaced it (kept when that one is stored first, as an export's
    /// newest-first order has it).
    pub superseded_by: Option<MemoryId>,
    /// When it was forgotten, for a forgotten memory of an export: stored forgotten.
    pub forgotten_at: Option<Timestamp>,
}

/// A vector with the model that made it. Recall only compares vectors of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Model id, e.g. `hash-v1-256` or `all-MiniLM-L6-v2`.
    pub model: String,
    /// The L2-normalised vector.
    pub vector: Vec<f32>,
}

/// A fully-formed memory ready to insert: everything decided, nothing left to compute.
#[derive(Debug, Clone)]
pub struct NewMemoryRecord {
    /// The memory as it will be stored.
    pub memory: Memory,
    /// Its embedding.
    pub embedding: Option<Embedding>,
    /// Its near-duplicate lookup keys ([`crate::text::near_duplicate_keys`]).
    pub near_duplicate_keys: Vec<i64>,
    /// Working memory of its session (SPEC §3, the short-term layer): left out of default
    /// recall outside that session until something promotes it.
    pub working: bool,
    /// Stored already forgotten at this time (a forgotten memory coming back from an
    /// export, kept for history as it was).
    pub forgotten_at: Option<Timestamp>,
}

/// A file attached to a memory: its derived text is the memory `memory_id` (kind
/// `attachment`), the file itself is kept by its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// The memory holding the file's derived text.
    pub memory_id: MemoryId,
    /// The memory it is attached to.
    pub attached_to: MemoryId,
    /// SHA-256 of the file, hex: its name in the attachment store.
    pub sha256: String,
    /// The file's name as given (secrets redacted).
    pub name: String,
    /// `application/pdf`, `text/html`, `text/markdown` or `text/plain`.
    pub media_type: String,
    /// Its size.
    pub bytes: u64,
}

/// Where a held candidate stands. Expiry is a status, never a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeldStatus {
    /// Waiting for a person.
    Held,
    /// Stored as a memory.
    Admitted,
    /// Let go.
    Discarded,
    /// Not decided within the configured expiry.
    Expired,
}

impl HeldStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Admitted => "admitted",
            Self::Discarded => "discarded",
            Self::Expired => "expired",
        }
    }

    /// Parses a stored or typed name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "held" => Self::Held,
            "admitted" => Self::Admitted,
            "discarded" => Self::Discarded,
            "expired" => Self::Expired,
            _ => return None,
        })
    }
}

/// A decision on a held candidate: who, when, through which surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldDecision {
    /// When.
    pub at: Timestamp,
    /// Who (principal and surface).
    pub by: String,
    /// Through which surface.
    pub surface: String,
}

/// Content the gate declined to judge, waiting for a person. Not a memory: no embedding,
/// no decay, never in recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldCandidate {
    /// Its id.
    pub id: HeldId,
    /// Its workspace.
    pub workspace: Workspace,
    /// Its project.
    pub project: Option<String>,
    /// The text, already redacted.
    pub content: String,
    /// Kind it will have when admitted.
    pub kind: Kind,
    /// Who produced it.
    pub source: String,
    /// Importance it will have.
    pub importance: f64,
    /// Whether it will be pinned.
    pub pinned: bool,
    /// World time from which it holds.
    pub valid_from: Timestamp,
    /// World time at which it stops holding.
    pub valid_to: Option<Timestamp>,
    /// Metadata it will carry.
    pub metadata: serde_json::Value,
    /// Its session.
    pub session_id: Option<SessionId>,
    /// Hash of its content.
    pub content_hash: String,
    /// Secrets replaced before it was held.
    pub redactions: Vec<crate::gate::Redaction>,
    /// Why it was held.
    pub reason: String,
    /// The existing memory that caused the hold.
    pub nearest: Option<crate::gate::Nearest>,
    /// Where it stands.
    pub status: HeldStatus,
    /// When it was held.
    pub created_at: Timestamp,
    /// When it expires, if an expiry is configured.
    pub expires_at: Option<Timestamp>,
    /// The decision, once taken.
    pub decision: Option<HeldDecision>,
    /// The memory it became, once admitted.
    pub memory_id: Option<MemoryId>,
    /// The memory whose content it would replace, when it is an update rather than a
    /// new memory. Admitting it changes that memory in place.
    pub updates: Option<MemoryId>,
}

/// An older memory weakened by a new one (SPEC §3 interference).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interference {
    /// The older memory.
    pub memory_id: MemoryId,
    /// How similar the new memory is to it.
    pub similarity: f64,
    /// Its stability after interference (filled in by the store, which applies it).
    pub stability_hours: f64,
}

/// Who did something, for the event log. Never carries content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The surface the call came through.
    pub surface: Surface,
    /// The client behind the surface, when known (`claude-code`, a connector id).
    pub client: Option<String>,
    /// The caller's role.
    pub role: Role,
    /// The person or token behind the call, when known (the OS user at a terminal).
    pub principal: Option<String>,
}

impl Actor {
    /// The local person at a terminal.
    pub fn cli() -> Self {
        Self {
            surface: Surface::Cli,
            client: None,
            role: Role::Admin,
            principal: None,
        }
    }

    /// Who decided, for records: the principal and surface, or the surface alone.
    pub fn decider(&self) -> String {
        match &self.principal {
            Some(principal) => format!("{principal} via {}", self.surface),
            None => self.surface.to_string(),
        }
    }
}

/// The kinds of mutation the append-only event log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum EventKind {
    /// A memory was stored.
    Store,
    /// A memory was returned by a recall and reinforced.
    RecallReinforce,
    /// A memory was reinforced explicitly.
    Reinforce,
    /// Helpful or unhelpful feedback.
    Feedback,
    /// Pinned.
    Pin,
    /// Unpinned.
    Unpin,
    /// Retired from every read.
    Forget,
    /// Weakened by a newer similar memory.
    Interfere,
    /// The gate held a candidate for review.
    Hold,
    /// A person admitted a held candidate.
    Admit,
    /// A person discarded a held candidate.
    Discard,
    /// A held candidate expired undecided.
    Expire,
    /// Secrets were stripped from a stored memory.
    Redact,
    /// A memory was erased without residue.
    Purge,
    /// A memory was retired in favour of a newer one.
    Supersede,
    /// A memory's content was updated in place (a changed connector item).
    Update,
    /// A connector sync run finished.
    SyncRun,
    /// A memory's importance was set by hand.
    Importance,
    /// Two entities were merged by hand.
    EntityMerge,
    /// A commitment was marked done.
    CommitmentDone,
    /// Two memories may disagree: a conflict candidate for a person.
    Conflict,
    /// A person resolved a conflict candidate.
    ConflictResolved,
    /// A person reviewed a fading memory (keep, reinforce, weaken, pin, snooze, forget).
    Review,
    /// A retired memory was brought back (a consolidation undone).
    Restore,
    /// Working memory of a session became long-term memory.
    Promote,
    /// A person moved a memory to another project (or out of every project).
    Move,
    /// A recall or search answered: what it returned (ids, tokens, bytes), its query only
    /// when the operator opted in (`LEVH_LOG_QUERIES`).
    Recall,
    /// An MCP client connected (its name, transport and process).
    SessionStart,
    /// An MCP client's session ended.
    SessionEnd,
}

impl EventKind {
    /// The name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Store => "store",
            Self::RecallReinforce => "recall-reinforce",
            Self::Reinforce => "reinforce",
            Self::Feedback => "feedback",
            Self::Pin => "pin",
            Self::Unpin => "unpin",
            Self::Forget => "forget",
            Self::Interfere => "interfere",
            Self::Hold => "hold",
            Self::Admit => "admit",
            Self::Discard => "discard",
            Self::Expire => "expire",
            Self::Redact => "redact",
            Self::Purge => "purge",
            Self::Supersede => "supersede",
            Self::Update => "update",
            Self::SyncRun => "sync-run",
            Self::Importance => "importance",
            Self::EntityMerge => "entity-merge",
            Self::CommitmentDone => "commitment-done",
            Self::Conflict => "conflict",
            Self::ConflictResolved => "conflict-resolved",
            Self::Review => "review",
            Self::Restore => "restore",
            Self::Promote => "promote",
            Self::Move => "move",
            Self::Recall => "recall",
            Self::SessionStart => "session-start",
            Self::SessionEnd => "session-end",
        }
    }
}
