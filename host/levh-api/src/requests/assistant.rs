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
