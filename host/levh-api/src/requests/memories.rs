//! Requests about memories: store, list, change, and what the memory model says of one.

use super::*;

/// Arguments of store_memory and admit_memory. There is deliberately no `force`: the
/// gate decides, and a review verdict becomes a held candidate for a person.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreArgs {
    /// The text to remember (3..32000 characters). Secrets are redacted before storing.
    pub content: String,
    /// Project within the workspace.
    pub project: Option<String>,
    /// note (default), event, decision, ...
    pub kind: Option<String>,
    /// Importance 0..1 (default 0.5): important memories grow durable faster.
    pub importance: Option<f64>,
    /// Pin it at once: it never fades.
    pub pin: Option<bool>,
    /// World time from which it holds (RFC 3339).
    pub valid_from: Option<String>,
    /// World time at which it stops holding (RFC 3339).
    pub valid_to: Option<String>,
    /// A session id from create_session.
    pub session_id: Option<String>,
    /// Free-form JSON object.
    pub metadata: Option<serde_json::Value>,
    /// An imported memory's own record (levh's export, read by `levh import`); never
    /// taken from a request.
    #[serde(skip)]
    pub prior: Option<levh_core::PriorMemory>,
}

/// Arguments of store_memories: many memories through the gate in one call and one
/// transaction. There is no `force` here either.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreBatchArgs {
    /// The memories (1..1000), each as store_memory takes it. Each gets its own verdict,
    /// judged as if it had been sent alone right after the ones before it: a copy of an
    /// earlier item is rejected as its duplicate, a near-copy is held for a person.
    pub memories: Vec<StoreArgs>,
}

/// A memory id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The memory's id (a UUID).
    pub id: String,
}

/// Arguments of list_memories.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only this source.
    pub source: Option<String>,
    /// Only pinned (true) or unpinned (false).
    pub pinned: Option<bool>,
    /// At most this many (1..1000, default 20).
    pub limit: Option<usize>,
    /// Skip this many (newest first). Each skipped memory is read again: to page through
    /// a large store, use `after`.
    pub offset: Option<usize>,
    /// The page after this memory (the last id of the page before): every page as cheap
    /// as the first at any size. Not with `offset`.
    pub after: Option<String>,
    /// The order: `created` (newest first, the default), `importance` (highest first),
    /// `recalled` (most recently recalled first, never recalled last) or `retention`
    /// (weakest first, now).
    pub sort: Option<ListSort>,
    /// Only memories fading now (retention below the fading threshold; never pinned ones).
    pub fading: Option<bool>,
    /// Forgotten memories (kept for history until purged) instead of live ones.
    pub forgotten: Option<bool>,
    /// Only memories recorded at or after this time (RFC 3339, or a date).
    pub created_after: Option<String>,
    /// Only memories recorded before this time (RFC 3339, or a date).
    pub created_before: Option<String>,
    /// Only memories this person, organization or other entity appears in (its id, name
    /// or email address).
    pub entity: Option<String>,
}

/// The orders a memory list can be read in.
// Read from its name through `ListSort::parse`, so every surface refuses an unknown one
// in the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListSort {
    /// Newest recorded first.
    #[default]
    Created,
    /// Most important first.
    Importance,
    /// Most recently recalled first; never recalled last.
    Recalled,
    /// Weakest first (retention now).
    Retention,
}

impl ListSort {
    /// The names a caller may give.
    pub const NAMES: [&'static str; 4] = ["created", "importance", "recalled", "retention"];

    /// The order named `text`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        Ok(match text.trim() {
            "created" => Self::Created,
            "importance" => Self::Importance,
            "recalled" => Self::Recalled,
            "retention" => Self::Retention,
            other => {
                return Err(Error::invalid(format!(
                    "invalid sort: '{other}' is not created, importance, recalled or retention"
                )));
            }
        })
    }
}

impl<'de> Deserialize<'de> for ListSort {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// Arguments of upsert_memory: a fact under a key, rewritten in place.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpsertArgs {
    /// The key ("build command", "owner of billing"): 1-200 printable characters, one
    /// current memory per key and project.
    pub key: String,
    /// The text, as a person reads it (3..32000 characters; secrets are redacted).
    pub content: String,
    /// The project (default: none).
    pub project: Option<String>,
    /// A JSON value beside the text, for programs; read back by `pointer` (at most 16 KiB).
    pub value: Option<serde_json::Value>,
    /// Importance 0..1 (default 0.5).
    pub importance: Option<f64>,
}

/// Arguments of get_memory: a memory by its id, or the memory under a key.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// The memory's id (a UUID). Either this or `key`.
    pub id: Option<String>,
    /// The key a memory was upserted under. Either this or `id`.
    pub key: Option<String>,
    /// With `key`: the project (default: none).
    pub project: Option<String>,
    /// A JSON pointer into the memory's value (`/deploy/region`): the answer's `value` is
    /// what it points to.
    pub pointer: Option<String>,
    /// With `key`: the memory that held then (RFC 3339, or a date), not the current one.
    pub as_of: Option<String>,
}

/// Arguments of move_memories.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// The memories' ids (1..1000).
    pub ids: Vec<String>,
    /// The project to move them to; absent or null: out of every project.
    pub project: Option<String>,
}

/// Arguments of set_importance.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportanceArgs {
    /// The memory's id.
    pub id: String,
    /// Importance 0..1.
    pub importance: f64,
}

/// Arguments of update_memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The memory's id.
    pub id: String,
    /// The new content (3..32000 characters; secrets are redacted).
    pub content: String,
}

/// Arguments of memory_feedback.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    /// The memory's id.
    pub id: String,
    /// true: it helped (reinforces). false: it was wrong (weakens; the clock is not reset).
    pub helpful: bool,
}

/// Arguments of related_memories.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelatedArgs {
    /// The memory's id.
    pub id: String,
    /// At most this many (default 5).
    pub limit: Option<usize>,
}

/// Arguments of list_fading_memories.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FadingArgs {
    /// Only this project.
    pub project: Option<String>,
    /// At most this many (default 20).
    pub limit: Option<usize>,
}

/// PATCH body: at least one field.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    /// New content (3..32000 characters; secrets are redacted).
    pub content: Option<String>,
    /// New importance 0..1.
    pub importance: Option<f64>,
}

/// Feedback body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackBody {
    /// true: it helped (reinforces). false: it was wrong (weakens).
    pub helpful: bool,
}

/// Forgetting-curve query.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CurveQuery {
    /// Days ahead (1..3650, default 30).
    pub days: Option<u32>,
}

/// Score-breakdown query.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoreQuery {
    /// Score against this query (similarity 1 without one).
    pub query: Option<String>,
}

impl StoreArgs {
    /// The engine's input, `source` recorded as who wrote it.
    pub fn into_new_memory(self, source: String) -> Result<NewMemory, Error> {
        Ok(NewMemory {
            content: self.content,
            project: self.project,
            kind: kind(self.kind.as_deref())?,
            source: Some(source),
            importance: self.importance,
            pinned: self.pin.unwrap_or(false),
            valid_from: time("valid_from", self.valid_from.as_deref())?,
            valid_to: time("valid_to", self.valid_to.as_deref())?,
            metadata: self.metadata,
            session_id: self.session_id.map(SessionId::new),
            prior: self.prior,
        })
    }
}

/// Related-memories query (REST; MCP names the memory in [`RelatedArgs`]).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelatedQuery {
    /// At most this many (default 5).
    pub limit: Option<usize>,
}

/// Memory-history query.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    /// At most this many events, newest first (1..1000, default 100).
    pub limit: Option<usize>,
}

/// A file to attach to a memory, as MCP and REST carry it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachArgs {
    /// The file's name (its extension says HTML or Markdown; a PDF is known by its bytes).
    pub name: String,
    /// The file, base64 (standard alphabet); at most 10 MiB decoded. PDF, HTML, Markdown or
    /// UTF-8 text.
    pub content_base64: String,
}

/// [`AttachArgs`] with the memory's id, as MCP takes it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachFileArgs {
    /// The memory to attach the file to.
    pub id: String,
    /// The file's name.
    pub name: String,
    /// The file, base64; at most 10 MiB decoded.
    pub content_base64: String,
}

/// A memory whose attachments to list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachmentsArgs {
    /// The memory.
    pub id: String,
}
