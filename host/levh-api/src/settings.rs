//! The server's settings, as the dashboard's Settings page and `levh mcp config` show them:
//! the store's checks, the embedder, the scorer, and a configuration per MCP client.

use std::path::{Path, PathBuf};

use levh_core::{Levh, Principal};
use serde_json::json;

use crate::Result;
use crate::views::{
    EmbedderView, McpClientConfigView, McpSettingsView, ScorerView, SettingsView, StoreSettingsView,
};

/// What the host knows about how it was started, which the engine does not: handed to the
/// server once by `levh serve`.
#[derive(Debug, Clone)]
pub struct ServerFacts {
    /// `LEVH_HOME`, when one was given (clients are configured with it).
    pub home: Option<PathBuf>,
    /// The `levh` binary clients should spawn by its path (the other form is the
    /// package runner, [`Launch::Runner`]).
    pub binary: PathBuf,
    /// The embedder's mode name (`local`, `ollama`, `openai`, `hash`).
    pub embedder_mode: String,
    /// Whether the mode was chosen by default.
    pub embedder_automatic: bool,
    /// Why a better embedder is not in use.
    pub embedder_warning: Option<String>,
    /// The active scorer component, if one is chosen.
    pub scorer: Option<String>,
    /// Why the chosen scorer is not in use.
    pub scorer_warning: Option<String>,
    /// The tool band `/mcp` serves.
    pub mcp_profile: String,
    /// The embedder's settings the server runs with ([`embedder_env`]): a client that
    /// spawns levh gets them too, or its captures would embed with another model.
    pub embedder_env: Vec<(String, String)>,
}

/// The environment variables that choose and find the embedder, as `lookup` sees them —
/// what a client spawning levh needs to embed as this process does. API keys are left
/// out on purpose: a client configuration is a file people paste and share.
pub fn embedder_env(lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    const NAMES: [&str; 10] = [
        "LEVH_EMBEDDER",
        "LEVH_EMBED_DIMENSION",
        "LEVH_MODEL_DIR",
        "LEVH_MODEL_ID",
        "ORT_DYLIB_PATH",
        "LEVH_OLLAMA_URL",
        "LEVH_OLLAMA_MODEL",
        "LEVH_OPENAI_URL",
        "LEVH_OPENAI_MODEL",
        "LEVH_LLM_URL",
    ];
    NAMES
        .iter()
        .filter_map(|name| {
            let value = lookup(name)?;
            (!value.trim().is_empty()).then(|| ((*name).to_owned(), value))
        })
        .collect()
}

impl Default for ServerFacts {
    /// A server whose host said nothing: clients spawn `levh` from their PATH and see the
    /// `work` tools.
    fn default() -> Self {
        Self {
            home: None,
            binary: PathBuf::from("levh"),
            embedder_mode: "unknown".into(),
            embedder_automatic: false,
            embedder_warning: None,
            scorer: None,
            scorer_warning: None,
            mcp_profile: "work".into(),
            embedder_env: Vec::new(),
        }
    }
}

/// How a client starts levh over stdio: two forms, each fitting another install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch<'a> {
    /// This binary by its absolute path: levh built from a checkout or unpacked from the
    /// release archive. Starts with no network; the binary stays where it is.
    Binary(&'a Path),
    /// The package runner: `uvx levh-rs …`, the wheel from PyPI, which uv fetches on the
    /// first start and keeps in its cache. Nothing else to install or keep — how clients
    /// start most MCP servers.
    Runner,
}

impl Launch<'_> {
    /// The runner's command: uv's `uvx`.
    pub const RUNNER: &'static str = "uvx";
    /// The package `uvx` runs (the wheel's name; `levh` on PyPI is the Python levh). It
    /// carries an executable of the same name, which is what `uvx` starts.
    pub const PACKAGE: &'static str = "levh-rs";

    /// The command and the arguments before levh's own.
    fn command(self) -> (String, Vec<&'static str>) {
        match self {
            Self::Binary(binary) => (binary.display().to_string(), Vec::new()),
            Self::Runner => (Self::RUNNER.to_owned(), vec![Self::PACKAGE]),
        }
    }
}

/// An MCP client levh writes a configuration for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClient {
    /// Claude Desktop.
    Claude,
    /// Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// Windsurf.
    Windsurf,
    /// VS Code.
    Vscode,
    /// Cline.
    Cline,
}

impl McpClient {
    /// Every client, in the order the Settings page lists them.
    pub const ALL: [McpClient; 6] = [
        Self::Claude,
        Self::ClaudeCode,
        Self::Cursor,
        Self::Windsurf,
        Self::Vscode,
        Self::Cline,
    ];

    /// Its name in `levh mcp config NAME`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::ClaudeCode => "claude_code",
            Self::Cursor => "cursor",
            Self::Windsurf => "windsurf",
            Self::Vscode => "vscode",
            Self::Cline => "cline",
        }
    }

    /// The client of this name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|client| client.name() == name)
    }

    /// Where its configuration goes.
    pub fn file(self) -> &'static str {
        match self {
            Self::Claude => "claude_desktop_config.json",
            Self::ClaudeCode => {
                ".mcp.json in a project (or `claude mcp add-json levh '<the levh entry>'`)"
            }
            Self::Cursor => "~/.cursor/mcp.json or .cursor/mcp.json",
            Self::Windsurf => "~/.codeium/windsurf/mcp_config.json",
            Self::Vscode => ".vscode/mcp.json",
            Self::Cline => "cline_mcp_settings.json",
        }
    }

    /// The configuration that makes this client start levh over stdio as `launch` says,
    /// with the store at `home` (default when `None`), in `workspace`, showing the
    /// `profile` tool band, with the embedder settings `embedder` (from [`embedder_env`]).
    pub fn config(
        self,
        launch: Launch<'_>,
        home: Option<&Path>,
        workspace: &str,
        profile: &str,
        embedder: &[(String, String)],
    ) -> serde_json::Value {
        let mut env = serde_json::Map::new();
        for (name, value) in embedder {
            env.insert(name.clone(), value.clone().into());
        }
        if let Some(home) = home {
            env.insert("LEVH_HOME".into(), home.display().to_string().into());
        }
        if workspace != "default" {
            env.insert("LEVH_WORKSPACE".into(), workspace.into());
        }
        let (command, mut args) = launch.command();
        args.extend(["mcp", "stdio", "--profile", profile]);
        let args = json!(args);
        match self {
            Self::Vscode => json!({
                "servers": { "levh": { "type": "stdio", "command": command, "args": args, "env": env } }
            }),
            Self::Cline => json!({
                "mcpServers": { "levh": {
                    "command": command, "args": args, "env": env, "disabled": false, "autoApprove": []
                } }
            }),
            Self::ClaudeCode => json!({
                "mcpServers": { "levh": { "type": "stdio", "command": command, "args": args, "env": env } }
            }),
            Self::Claude | Self::Cursor | Self::Windsurf => json!({
                "mcpServers": { "levh": { "command": command, "args": args, "env": env } }
            }),
        }
    }

    /// Both configurations for this client — this `binary` by its path, and the package
    /// runner — and where they go: what `levh mcp config` prints and the Settings page
    /// shows.
    pub fn view(
        self,
        binary: &Path,
        home: Option<&Path>,
        workspace: &str,
        profile: &str,
        embedder: &[(String, String)],
    ) -> McpClientConfigView {
        McpClientConfigView {
            client: self.name().into(),
            file: self.file().into(),
            config: self.config(Launch::Binary(binary), home, workspace, profile, embedder),
            runner_config: self.config(Launch::Runner, home, workspace, profile, embedder),
        }
    }
}

/// [`Operation::GetSettings`](crate::Operation::GetSettings): the store's checks are
/// whole-file facts (no counts: those would span every workspace); the MCP configurations
/// put the caller in its own workspace.
pub fn settings(levh: &Levh, facts: &ServerFacts, principal: &Principal) -> Result<SettingsView> {
    let health = levh.health()?;
    let embedder = levh.embedder();
    let workspace = principal.workspace.as_str();
    Ok(SettingsView {
        version: env!("CARGO_PKG_VERSION").into(),
        store: StoreSettingsView {
            path: health.path,
            schema_version: health.schema_version,
            latest_schema_version: health.latest_schema_version,
            journal_mode: health.journal_mode,
            full_text_in_step: health.fts5 && health.fts_in_step,
        },
        embedder: EmbedderView {
            mode: facts.embedder_mode.clone(),
            automatic: facts.embedder_automatic,
            model: embedder.model_id().to_owned(),
            dimension: embedder.dimension(),
            semantic: embedder.is_semantic(),
            warning: facts.embedder_warning.clone(),
        },
        scorer: ScorerView {
            active: facts.scorer.clone(),
            warning: facts.scorer_warning.clone(),
        },
        mcp: McpSettingsView {
            profile: facts.mcp_profile.clone(),
            http_path: "/mcp".into(),
            clients: McpClient::ALL
                .iter()
                .map(|client| {
                    client.view(
                        &facts.binary,
                        facts.home.as_deref(),
                        workspace,
                        &facts.mcp_profile,
                        &facts.embedder_env,
                    )
                })
                .collect(),
        },
        workspace: workspace.into(),
        role: principal.role.into(),
    })
}
