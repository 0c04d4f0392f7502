//! Views of the server itself: health, roles, tokens, settings, connector output.

use super::*;

/// A connector tool's answer on MCP, whose structured content must be an object: the
/// document REST sends as its body, under `result`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConnectorOutput<T> {
    /// The connector catalog, one connector's help, a sync report or recent runs.
    pub result: T,
}

/// Liveness of the server and its store.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HealthView {
    /// `ok`.
    pub status: String,
    /// levh's version.
    pub version: String,
    /// The database the store is on: `sqlite` (the home's file) or `postgres` (a team
    /// server's database).
    pub backend: BackendView,
    /// Schema version of the store.
    pub schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// The embedder's model id.
    pub embedder: String,
    /// The caller's workspace.
    pub workspace: String,
    /// The caller's role.
    pub role: RoleView,
}

/// The database a store is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackendView {
    /// One SQLite file in the home.
    Sqlite,
    /// A PostgreSQL database with pgvector.
    Postgres,
}

impl From<levh_core::Backend> for BackendView {
    fn from(backend: levh_core::Backend) -> Self {
        match backend {
            levh_core::Backend::Sqlite => Self::Sqlite,
            levh_core::Backend::Postgres => Self::Postgres,
        }
    }
}

/// A caller's role, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleView {
    /// Reads only.
    Viewer,
    /// Reads and writes.
    Editor,
    /// Everything in its workspace.
    Admin,
}

impl RoleView {
    /// The role as the wire spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }
}

impl From<levh_core::Role> for RoleView {
    fn from(role: levh_core::Role) -> Self {
        match role {
            levh_core::Role::Viewer => Self::Viewer,
            levh_core::Role::Editor => Self::Editor,
            levh_core::Role::Admin => Self::Admin,
        }
    }
}

/// A token of the workspace, never its secret.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TokenView {
    /// Its public id (`tok_…`).
    pub id: String,
    /// The workspace it is bound to.
    pub workspace: String,
    /// What it may do there.
    pub role: RoleView,
    /// What it is for.
    pub label: Option<String>,
    /// When it was issued.
    pub created_at: String,
    /// When it was revoked (a revoked token authenticates nothing).
    pub revoked_at: Option<String>,
}

impl From<&levh_core::TokenInfo> for TokenView {
    fn from(token: &levh_core::TokenInfo) -> Self {
        Self {
            id: token.id.clone(),
            workspace: token.workspace.to_string(),
            role: token.role.into(),
            label: token.label.clone(),
            created_at: token.created_at.to_string(),
            revoked_at: token.revoked_at.map(|t| t.to_string()),
        }
    }
}

/// The workspace's tokens, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TokenList {
    /// Revoked ones too.
    pub tokens: Vec<TokenView>,
}

/// A token just issued: the one answer that carries its secret.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IssuedTokenView {
    /// The stored part.
    #[serde(flatten)]
    pub token: TokenView,
    /// The secret (`levh_…`): shown once, stored nowhere but its hash.
    pub secret: String,
}

/// The server's settings as the dashboard's Settings page shows them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SettingsView {
    /// levh's version.
    pub version: String,
    /// The store: where it is and whether it is well (what `levh doctor` checks).
    pub store: StoreSettingsView,
    /// The embedder in use.
    pub embedder: EmbedderView,
    /// The ranking policy in use.
    pub scorer: ScorerView,
    /// How MCP clients reach this levh.
    pub mcp: McpSettingsView,
    /// The caller's workspace.
    pub workspace: String,
    /// The caller's role.
    pub role: RoleView,
}

/// The store's checks.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StoreSettingsView {
    /// The database file.
    pub path: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// The newest schema version this levh writes.
    pub latest_schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// Whether full-text search is available and holds exactly the stored memories.
    pub full_text_in_step: bool,
}

/// The embedder and its model.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EmbedderView {
    /// `local`, `ollama`, `openai` or `hash`.
    pub mode: String,
    /// Whether the mode was chosen by default (no `LEVH_EMBEDDER`).
    pub automatic: bool,
    /// The model id recorded with every vector.
    pub model: String,
    /// Vector dimension (0 until the first embed for a remote model).
    pub dimension: usize,
    /// Whether similarity means similarity of meaning (false for the hash fallback).
    pub semantic: bool,
    /// Why a better embedder is not in use, and how to get one.
    pub warning: Option<String>,
}

/// The scorer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScorerView {
    /// The installed scorer component ranking recall, or none (the built-in H-score).
    pub active: Option<String>,
    /// Why the chosen scorer is not in use, when it could not be loaded.
    pub warning: Option<String>,
}

/// MCP: the endpoint on this server and the configuration for each client.
#[derive(Debug, Serialize, JsonSchema)]
pub struct McpSettingsView {
    /// The tool band `/mcp` serves.
    pub profile: String,
    /// Path of MCP over streamable HTTP on this server.
    pub http_path: String,
    /// The configurations per client that start levh over stdio.
    pub clients: Vec<McpClientConfigView>,
}

/// One client's configuration.
#[derive(Debug, Serialize, JsonSchema)]
pub struct McpClientConfigView {
    /// `claude`, `claude_code`, `cursor`, `windsurf`, `vscode`, `cline`.
    pub client: String,
    /// Where the configuration goes.
    pub file: String,
    /// The JSON to paste there that starts this levh by its absolute path: for levh built
    /// from a checkout or unpacked from the release archive; no network at start.
    pub config: serde_json::Value,
    /// The same through the package runner (`uvx levh-rs mcp stdio …`): for levh installed
    /// from PyPI; uv fetches the wheel on the first start, nothing else to keep.
    pub runner_config: serde_json::Value,
}
