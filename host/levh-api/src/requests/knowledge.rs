//! Requests about what the memories say: decisions, commitments, the timeline.

use super::*;

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
