//! Requests of the assistant: ask, the daily briefing, meeting prep.

use super::*;

/// A question for `ask`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, in the user's words ("what did we decide about the release date?").
    pub question: String,
    /// Only memories of this project.
    pub project: Option<String>,
    /// Tokens of evidence at most (default 1,000): what the answer may draw on.
    pub max_tokens: Option<usize>,
    /// Memories of evidence at most (default 8, at most 50).
    pub limit: Option<usize>,
}

/// The day a briefing is for.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefingArgs {
    /// `YYYY-MM-DD` in the user's zone (`LEVH_TZ`); default today.
    pub date: Option<String>,
    /// Only memories of this project.
    pub project: Option<String>,
}

/// Which meeting to prepare.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeetingPrepArgs {
    /// The event's memory id, or its source id (a calendar UID as the connector stored
    /// it). Without it, the next event from now.
    pub event: Option<String>,
}

/// Which conflict candidates to list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConflictListArgs {
    /// List the resolved ones too.
    pub include_resolved: Option<bool>,
    /// At most this many (default 100).
    pub limit: Option<usize>,
}

/// Where to look for conflict candidates.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConflictDetectArgs {
    /// Only memories of this project.
    pub project: Option<String>,
}

/// A person's decision on a conflict candidate.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveConflictBody {
    /// `keep_both`, `not_a_conflict` or `supersede`.
    pub resolution: String,
    /// With `supersede`: the id of the memory to retire (superseded by the other).
    pub retire: Option<String>,
}

/// Which fading memories to review.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewQueueArgs {
    /// Only this project.
    pub project: Option<String>,
    /// At most this many (default 20).
    pub limit: Option<usize>,
}

/// A person's review decision on a fading memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewBody {
    /// `keep` (shown again after a growing interval), `reinforce`, `weaken`, `pin`,
    /// `snooze` (with `days`) or `forget`.
    pub decision: String,
    /// With `snooze`: for how many days (1..3650).
    pub days: Option<u32>,
}

/// [`ReviewBody`] with the memory's id, as MCP takes it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewArgs {
    /// The memory's id.
    pub id: String,
    /// `keep`, `reinforce`, `weaken`, `pin`, `snooze` (with `days`) or `forget`.
    pub decision: String,
    /// With `snooze`: for how many days (1..3650).
    pub days: Option<u32>,
}

/// What to consolidate.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsolidateArgs {
    /// Only this project (projects are never mixed in one summary).
    pub project: Option<String>,
    /// Show the clusters and their summaries without writing anything.
    pub dry_run: Option<bool>,
    /// Only memories recorded at least this many days ago (default: the setting
    /// `LEVH_CONSOLIDATE_AFTER_DAYS`, 30).
    pub older_than_days: Option<f64>,
    /// Compare at most this many memories, oldest first (default 200,000).
    pub limit: Option<usize>,
}

/// The summary a consolidation wrote, to undo it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoConsolidationArgs {
    /// The summary memory's id.
    pub id: String,
}
