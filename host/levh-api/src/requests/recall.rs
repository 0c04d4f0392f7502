//! Requests of recall and the session context.

use super::*;

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
    /// The session asking: its own working memory (stored in it, not yet promoted) is
    /// found too; other sessions' working memory never is.
    pub session_id: Option<String>,
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
            session_id: self.session_id.map(levh_core::SessionId::new),
        })
    }
}
