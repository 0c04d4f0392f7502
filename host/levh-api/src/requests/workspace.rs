//! Requests about a workspace: projects, sessions, tokens.

use super::*;

/// An optional project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectArgs {
    /// Only this project.
    pub project: Option<String>,
}

/// Arguments of end_session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The id create_session returned.
    pub session_id: String,
}

/// Arguments of list_sessions.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionListArgs {
    /// At most this many (1..500, default 50).
    pub limit: Option<usize>,
    /// Only sessions started before this instant (RFC 3339): the next page, from the last
    /// session's `started_at`.
    pub before: Option<String>,
}

/// Session body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// The session's project.
    pub project: Option<String>,
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
