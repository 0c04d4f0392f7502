//! What callers send: the request types of the operations, each with a JSON schema (the
//! MCP tools' input schemas and the OpenAPI document's bodies and queries come from
//! these), and their conversion into the engine's requests, validated once here.

use std::collections::BTreeMap;

use levh_core::{HeldId, Kind, MemoryId, NewMemory, RecallRequest, SessionId, Timestamp};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Error;

/// A memory id from the text a caller gave in `field`.
pub fn memory_id(field: &'static str, text: &str) -> Result<MemoryId, Error> {
    text.trim().parse::<MemoryId>().map_err(|_| {
        Error::invalid(format!(
            "invalid {field}: '{text}' is not a memory id (expected a UUID)"
        ))
    })
}

/// A held candidate's id from the text a caller gave in `field`.
pub fn held_id(field: &'static str, text: &str) -> Result<HeldId, Error> {
    text.trim().parse::<HeldId>().map_err(|_| {
        Error::invalid(format!(
            "invalid {field}: '{text}' is not a held candidate id (expected a UUID)"
        ))
    })
}

/// An optional RFC 3339 time from `field`. A time past the last instant levh can hold
/// (9999-12-30) means "whenever": it is clamped to that instant, not refused.
pub fn time(field: &'static str, text: Option<&str>) -> Result<Option<Timestamp>, Error> {
    text.map(|t| {
        levh_core::parse_instant(t).ok_or_else(|| {
            Error::invalid(format!(
                "invalid {field}: '{}' is not an RFC 3339 time like 2026-11-30T09:00:00Z (or a date like 2026-11-30)",
                t.trim()
            ))
        })
    })
    .transpose()
}

/// An optional memory kind.
pub fn kind(text: Option<&str>) -> Result<Option<Kind>, Error> {
    text.map(|k| Kind::new(k).map_err(|e| Error::invalid(e.to_string())))
        .transpose()
}

/// A page size in 1..=1000 (`default` when not given).
pub fn limit(value: Option<usize>, default: usize) -> Result<usize, Error> {
    let limit = value.unwrap_or(default);
    if limit == 0 || limit > 1000 {
        return Err(Error::invalid(format!(
            "invalid limit: {limit} is outside 1..1000"
        )));
    }
    Ok(limit)
}

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

/// Arguments of recall_memory and search_memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What to look for.
    pub query: String,
    /// At most this many results (1..1000, default 10).
    pub limit: Option<usize>,
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only this source.
    pub source: Option<String>,
    /// What was true at this world time (RFC 3339).
    pub as_of: Option<String>,
    /// What levh knew at this record time (RFC 3339).
    pub known_at: Option<String>,
    /// Pack results into roughly this many tokens.
    pub max_tokens: Option<usize>,
    /// The least cosine (0..1) a result found only by meaning, sharing no word with the
    /// query, needs; default: the embedder's floor. Raise it to prefer no answer to a
    /// loose one.
    pub min_similarity: Option<f64>,
    /// Only memories levh recorded at or after this time (RFC 3339).
    pub since: Option<String>,
    /// Only memories levh recorded before this time (RFC 3339).
    pub until: Option<String>,
    /// Only each result's id, preview and score: thrifty with an agent's tokens.
    pub compact: Option<bool>,
    /// Add each result's four H-score terms and the parts of its relevance.
    pub explain: Option<bool>,
}

/// A memory id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The memory's id (a UUID).
    pub id: String,
}

/// Arguments of get_context.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// The project to load essentials of (pinned rules without a project always come).
    pub project: Option<String>,
    /// Token budget (default 1500).
    pub max_tokens: Option<usize>,
}

/// An optional project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectArgs {
    /// Only this project.
    pub project: Option<String>,
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
    /// Skip this many (newest first).
    pub offset: Option<usize>,
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

/// Arguments of end_session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The id create_session returned.
    pub session_id: String,
}

/// Arguments of evaluate_admission.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateArgs {
    /// The text the gate should judge.
    pub content: String,
    /// Project it would go in.
    pub project: Option<String>,
}

/// Arguments of list_held_memories.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeldListArgs {
    /// held (default), admitted, discarded or expired.
    pub status: Option<String>,
}

/// Arguments of decide_held_memory: only the candidate. The decision comes from the
/// person, through elicitation; the agent cannot pass it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideArgs {
    /// The held candidate's id.
    pub held_id: String,
}

/// Arguments of get_connector_help.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorArgs {
    /// The connector's id (list_connectors shows them).
    pub id: String,
}

/// Arguments of sync_connector.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    /// The connector's id.
    pub id: String,
    /// Its settings (get_connector_help lists them). Paths must already be granted by
    /// a person (`levh connector grant`); naming one here grants nothing.
    pub config: Option<BTreeMap<String, String>>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    pub dry_run: Option<bool>,
}

/// Arguments of connector_sync_status.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncStatusArgs {
    /// Only this connector.
    pub id: Option<String>,
    /// How many runs (default 10).
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

/// Admit body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmitBody {
    /// Mark the new memory as replacing the neighbour that caused the hold.
    #[serde(default)]
    pub supersede: bool,
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

/// Session body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// The session's project.
    pub project: Option<String>,
}

/// Sync body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBody {
    /// The connector's settings. Paths and hosts must already be granted by a person.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    #[serde(default)]
    pub dry_run: bool,
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

impl RecallArgs {
    /// The engine's request; `reinforce` is false for a search.
    pub fn into_request(self, reinforce: bool) -> Result<RecallRequest, Error> {
        Ok(RecallRequest {
            query: self.query,
            limit: self.limit.unwrap_or(10),
            project: self.project,
            kind: kind(self.kind.as_deref())?,
            source: self.source,
            since: time("since", self.since.as_deref())?,
            until: time("until", self.until.as_deref())?,
            as_of: time("as_of", self.as_of.as_deref())?,
            known_at: time("known_at", self.known_at.as_deref())?,
            max_tokens: self.max_tokens,
            compact: self.compact.unwrap_or(false),
            reinforce,
            min_similarity: self.min_similarity,
        })
    }
}

impl HeldListArgs {
    /// The status asked for (held when none; `None` for all).
    pub fn status(&self) -> Result<Option<levh_core::HeldStatus>, Error> {
        match self.status.as_deref().map(str::trim) {
            None => Ok(Some(levh_core::HeldStatus::Held)),
            Some("all") => Ok(None),
            Some(text) => levh_core::HeldStatus::parse(text).map(Some).ok_or_else(|| {
                Error::invalid(format!(
                    "invalid status: '{text}' is not held, admitted, discarded, expired or all"
                ))
            }),
        }
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

/// A token to issue in the caller's workspace.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBody {
    /// `viewer` (reads), `editor` (reads and writes) or `admin` (also purges and decides
    /// held candidates).
    pub role: String,
    /// What the token is for (who or which client holds it).
    pub label: Option<String>,
}

/// A grant to give a connector, or take back: one directory or one host.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantBody {
    /// An absolute path of a directory on the server's machine: the connector may read it
    /// and everything under it.
    pub directory: Option<String>,
    /// A host it may connect to (`api.github.com`, `host:port` or a URL), if its manifest
    /// asks for one too.
    pub host: Option<String>,
    /// The workspace whose syncs may use it (default: the caller's): a grant belongs to
    /// one workspace.
    pub workspace: Option<String>,
}

impl GrantBody {
    /// The grant, checked: exactly one of the two; a directory absolute, and (when
    /// granting) one that exists.
    pub fn into_grant(self, granting: bool) -> Result<levh_core::sync::Grant, Error> {
        match (self.directory, self.host) {
            (Some(directory), None) => {
                let path = std::path::PathBuf::from(directory.trim());
                if !path.is_absolute() {
                    return Err(Error::invalid(format!(
                        "invalid directory: '{}' is not an absolute path",
                        path.display()
                    )));
                }
                if granting && !path.is_dir() {
                    return Err(Error::invalid(format!(
                        "invalid directory: {} is not a directory on this machine",
                        path.display()
                    )));
                }
                Ok(levh_core::sync::Grant::Directory(path))
            }
            (None, Some(host)) if !host.trim().is_empty() => {
                Ok(levh_core::sync::Grant::Host(host.trim().to_owned()))
            }
            (None, Some(_)) => Err(Error::invalid("invalid host: it is empty")),
            _ => Err(Error::invalid("give exactly one of directory and host")),
        }
    }
}

/// Which memories to read decisions or commitments from.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeArgs {
    /// Only this project.
    pub project: Option<String>,
    /// Only memories whose world time is at or after this (RFC 3339 or a date).
    pub from: Option<String>,
    /// Only memories whose world time is before this.
    pub to: Option<String>,
    /// At most this many (1..1000, default 50).
    pub limit: Option<usize>,
    /// Commitments only: list those marked done too (default: only open ones).
    #[serde(default)]
    pub include_done: Option<bool>,
}

/// Which entities to list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityListArgs {
    /// Only this kind: person, organization, project, event, document or task.
    pub kind: Option<String>,
    /// Only names, addresses or handles containing this (case and accents ignored).
    pub name: Option<String>,
    /// Only those of memories in this project.
    pub project: Option<String>,
    /// At most this many, most memories first (1..1000, default 50).
    pub limit: Option<usize>,
}

/// Which entity to read about.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AboutArgs {
    /// The entity: its id, an e-mail address, an `@handle`, a name, a domain or a project.
    pub entity: String,
    /// Only an entity of this kind (when a name fits several).
    pub kind: Option<String>,
    /// At most this many of its memories (1..1000, default 20).
    pub limit: Option<usize>,
}

/// Which days the timeline shows, and what of them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// today, yesterday, tomorrow, this/last/next week, this/last/next month, last N days
    /// or next N days
    /// (weeks start on Monday, in `LEVH_TZ` or the system's zone). Default: this week.
    pub range: Option<String>,
    /// First day (YYYY-MM-DD in the user's zone, or an RFC 3339 time); instead of `range`.
    pub from: Option<String>,
    /// Last day, included (YYYY-MM-DD, or an RFC 3339 time, excluded).
    pub to: Option<String>,
    /// Only memories with this person (or any entity: id, address, name, domain).
    pub person: Option<String>,
    /// Only this project.
    pub project: Option<String>,
    /// Only this memory kind (email, event, transcript, note, ...).
    pub kind: Option<String>,
    /// At most this many memories in all (1..1000, default 200).
    pub limit: Option<usize>,
}

/// Which part of the entity graph to draw.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphArgs {
    /// Only entities of this kind.
    pub kind: Option<String>,
    /// At most this many entities, most memories first (1..500, default 60).
    pub limit: Option<usize>,
    /// Only edges of at least this many shared memories (default 1).
    pub min_weight: Option<u64>,
}

/// Two entities that are one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// The entity that stays (id, address, name, ...).
    pub into: String,
    /// The entity merged into it and removed.
    pub from: String,
}

/// What an entity reindex does.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReindexArgs {
    /// Every memory again, not only those not indexed under today's rules.
    #[serde(default)]
    pub all: bool,
    /// Stop after this many memories (the next run goes on from there).
    pub max: Option<u64>,
}

/// How much of one entity's page to read (REST's `/api/entities/{entity}`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityPageArgs {
    /// Only an entity of this kind (when a name fits several).
    pub kind: Option<String>,
    /// At most this many of its memories (1..1000, default 20).
    pub limit: Option<usize>,
}

/// serde's refusal of an unknown argument ("unknown field `asof`, expected one of
/// `query`, …, `as_of`") with the closest valid name added ("… did you mean `as_of`?"),
/// for every surface that reads arguments (MCP tools, REST bodies and query strings).
/// Other messages are returned as they are.
pub fn suggest_known_field(message: &str) -> String {
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_owned();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let closest = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|name| (strsim::normalized_damerau_levenshtein(unknown, name), name))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((similarity, name)) if similarity >= 0.5 => {
            format!("{message}; did you mean `{name}`?")
        }
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    #[test]
    fn an_unknown_argument_is_named_with_the_closest_valid_one() {
        let refused = serde_json::from_value::<RecallArgs>(
            serde_json::json!({ "query": "deploys", "asof": "2026-01-01" }),
        )
        .unwrap_err()
        .to_string();
        let told = suggest_known_field(&refused);
        assert!(told.contains("unknown field `asof`"), "{told}");
        assert!(told.ends_with("did you mean `as_of`?"), "{told}");
        let refused = serde_json::from_value::<ListArgs>(serde_json::json!({ "projet": "api" }))
            .unwrap_err()
            .to_string();
        assert!(
            suggest_known_field(&refused).ends_with("did you mean `project`?"),
            "{refused}"
        );
        // Nothing close: no guess.
        let refused = serde_json::from_value::<ContextArgs>(serde_json::json!({ "zzzzzz": 1 }))
            .unwrap_err()
            .to_string();
        assert_eq!(suggest_known_field(&refused), refused);
        assert_eq!(suggest_known_field("invalid type"), "invalid type");
    }
}
