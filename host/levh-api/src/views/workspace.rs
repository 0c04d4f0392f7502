//! Views of a workspace: its counts, projects, sources and sessions.

use super::*;

impl From<levh_core::Stats> for StatsView {
    fn from(s: levh_core::Stats) -> Self {
        Self {
            total: s.total,
            pinned: s.pinned,
            fading: s.fading,
            average_retention: s.average_retention,
            retention_histogram: s.retention_histogram.to_vec(),
            recalls: s.recalls,
            by_project: s.by_project,
            without_project: s.without_project,
            by_source: s.by_source,
            by_kind: s.by_kind,
            embedder: s.embedder,
        }
    }
}

/// Workspace statistics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatsView {
    /// Live memories valid now.
    pub total: u64,
    /// Pinned among them.
    pub pinned: u64,
    /// Fading among them.
    pub fading: u64,
    /// Mean retention now.
    pub average_retention: f64,
    /// Memories per tenth of retention now: `[0]` is 0–10%, `[9]` 90–100%.
    pub retention_histogram: Vec<u64>,
    /// Sum of recall counts.
    pub recalls: u64,
    /// Count per project.
    pub by_project: BTreeMap<String, u64>,
    /// Memories in no project.
    pub without_project: u64,
    /// Count per source.
    pub by_source: BTreeMap<String, u64>,
    /// Count per kind.
    pub by_kind: BTreeMap<String, u64>,
    /// The embedding model in use.
    pub embedder: String,
}

/// A name with a count (projects, sources).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NamedCount {
    /// The name.
    pub name: String,
    /// Live memories with it.
    pub memories: u64,
}

/// Projects of the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectList {
    /// Projects, by name.
    pub projects: Vec<NamedCount>,
}

/// Sources of the workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceList {
    /// Sources, by name.
    pub sources: Vec<NamedCount>,
}

/// A session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionView {
    /// Its id: pass it as `session_id` to store_memory.
    pub session_id: String,
    /// Its project.
    pub project: Option<String>,
    /// The client that opened it.
    pub client: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Its summary, when ending it summarised it (`LEVH_AUTO_SUMMARIZE=1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<SessionSummaryView>,
}

/// Sessions, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionList {
    /// The sessions, each with its live memories counted.
    pub sessions: Vec<ListedSessionView>,
}

/// A session as listed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListedSessionView {
    /// The session.
    #[serde(flatten)]
    pub session: SessionView,
    /// Live memories stored in it.
    pub memories: u64,
}

/// A session summarised into one memory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionSummaryView {
    /// The session.
    pub session_id: String,
    /// Memories of the session it read.
    pub memories: usize,
    /// The summary's text (none: the session stored nothing).
    pub text: Option<String>,
    /// What the gate did with it.
    pub stored: Option<CaptureView>,
}

impl From<&levh_core::Session> for SessionView {
    fn from(session: &levh_core::Session) -> Self {
        Self {
            session_id: session.id.to_string(),
            project: session.project.clone(),
            client: session.client.clone(),
            started_at: session.started_at.to_string(),
            ended_at: session.ended_at.map(|t| t.to_string()),
            summary: None,
        }
    }
}
