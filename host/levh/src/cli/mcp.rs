//! `levh mcp stdio|profiles|config`: the MCP server for agents, its tool bands, and a
//! config to paste into each client.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::{Subcommand, ValueEnum};
use levh_core::sync::{SyncOptions, SyncReport};
use levh_core::{Levh, Scope};
use levh_mcp::{LevhMcp, Profile, SyncRequest};
use levh_plugins::ConnectorSource;
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (what MCP clients spawn). Logs go to stderr.
    Stdio {
        /// The tool band clients discover: minimal, work, admin or full. A profile
        /// filters discovery; it is not a security boundary.
        #[arg(long, env = "LEVH_MCP_PROFILE", default_value = "work")]
        profile: Profile,
    },
    /// The tool profiles (cumulative bands) and their tools.
    Profiles,
    /// Print a config that makes a client spawn this levh.
    Config {
        /// The client.
        client: Client,
        /// The tool band it should see.
        #[arg(long, default_value = "work")]
        profile: Profile,
    },
}

/// Clients `levh mcp config` knows.
#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Client {
    /// Claude Desktop (claude_desktop_config.json).
    Claude,
    /// Claude Code (.mcp.json in a project, or `claude mcp add-json levh '<the levh entry>'`).
    ClaudeCode,
    /// Cursor (~/.cursor/mcp.json or .cursor/mcp.json).
    Cursor,
    /// Windsurf (~/.codeium/windsurf/mcp_config.json).
    Windsurf,
    /// VS Code (.vscode/mcp.json).
    Vscode,
    /// Cline (cline_mcp_settings.json).
    Cline,
}

/// Runs an `mcp` command. Only `stdio` opens the store.
pub fn run(
    home: Option<PathBuf>,
    workspace: &str,
    command: Command,
    json: bool,
) -> Result<ExitCode> {
    match command {
        Command::Stdio { profile } => stdio(home, workspace, profile),
        Command::Profiles => profiles(json),
        Command::Config { client, profile } => config(home, workspace, client, profile),
    }
}

fn stdio(home: Option<PathBuf>, workspace: &str, profile: Profile) -> Result<ExitCode> {
    let context = Arc::new(Context::open(home, workspace)?);
    let (levh, warning) = context.levh_for_recall();
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    let mut server = LevhMcp::new(levh, context.scope.workspace.clone(), profile);
    if profile >= Profile::Full {
        server = server.with_connectors(Arc::new(ConnectorRuntime { context }));
    }
    tracing::info!(%profile, "serving MCP over stdio");
    levh_mcp::serve_stdio(server).map_err(|e| anyhow!("MCP over stdio: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

fn profiles(json: bool) -> Result<ExitCode> {
    if json {
        let bands: Vec<_> = Profile::ALL
            .iter()
            .map(|p| json!({ "profile": p.as_str(), "adds": p.description(), "tools": p.tools() }))
            .collect();
        output::json(&bands)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["profile", "tools", "adds", "new tools"]);
    let mut previous: Vec<&str> = Vec::new();
    for profile in Profile::ALL {
        let tools = profile.tools();
        let added: Vec<&str> = tools
            .iter()
            .filter(|t| !previous.contains(t))
            .copied()
            .collect();
        table.add_row(vec![
            profile.as_str().to_owned(),
            tools.len().to_string(),
            profile.description().to_owned(),
            added.join(", "),
        ]);
        previous = tools;
    }
    output::print_table(&table);
    output::line("Profiles filter what clients discover; they are not a security boundary.");
    Ok(ExitCode::SUCCESS)
}

fn config(
    home: Option<PathBuf>,
    workspace: &str,
    client: Client,
    profile: Profile,
) -> Result<ExitCode> {
    let binary = std::env::current_exe().context("finding the levh binary")?;
    let binary = binary.canonicalize().unwrap_or(binary);
    let mut env = serde_json::Map::new();
    if let Some(home) = home {
        let home = home.canonicalize().unwrap_or(home);
        env.insert("LEVH_HOME".into(), home.display().to_string().into());
    }
    if workspace != "default" {
        env.insert("LEVH_WORKSPACE".into(), workspace.into());
    }
    let args = json!(["mcp", "stdio", "--profile", profile.as_str()]);
    let command = binary.display().to_string();
    let value = match client {
        Client::Vscode => json!({
            "servers": { "levh": { "type": "stdio", "command": command, "args": args, "env": env } }
        }),
        Client::Cline => json!({
            "mcpServers": { "levh": {
                "command": command, "args": args, "env": env, "disabled": false, "autoApprove": []
            } }
        }),
        Client::ClaudeCode => json!({
            "mcpServers": { "levh": { "type": "stdio", "command": command, "args": args, "env": env } }
        }),
        Client::Claude | Client::Cursor | Client::Windsurf => json!({
            "mcpServers": { "levh": { "command": command, "args": args, "env": env } }
        }),
    };
    output::json(&value)?;
    Ok(ExitCode::SUCCESS)
}

/// Connectors for the `full` profile, the way `levh sync` runs them but with the stored
/// grants only: an agent cannot grant a connector anything.
pub(crate) struct ConnectorRuntime {
    pub(crate) context: Arc<Context>,
}

impl ConnectorRuntime {
    fn list(&self) -> Result<serde_json::Value> {
        let context = &self.context;
        let registry = context.registry();
        let host = context.plugin_host()?;
        let ids = levh_builtins::CONNECTORS
            .iter()
            .map(|(id, _)| (*id).to_owned())
            .chain(registry.installed());
        let mut rows = Vec::new();
        for id in ids {
            let bytes = super::connector::component_bytes(context, &id)?;
            let origin = if levh_builtins::connector(&id).is_some() {
                "built-in"
            } else {
                "installed"
            };
            rows.push(
                match host
                    .load_connector(&id, &bytes)
                    .and_then(|c| Ok((c, registry.grants(&id)?)))
                {
                    Ok((c, grants)) => json!({
                        "id": c.manifest.id, "version": c.manifest.version, "origin": origin,
                        "description": c.manifest.description,
                        "capabilities": c.manifest.capabilities,
                        "granted_paths": grants.read_paths, "granted_hosts": grants.http_hosts,
                    }),
                    Err(e) => json!({ "id": id, "origin": origin, "error": e.to_string() }),
                },
            );
        }
        Ok(json!({ "connectors": rows }))
    }

    fn help(&self, id: &str) -> Result<serde_json::Value> {
        let bytes = super::connector::component_bytes(&self.context, id)?;
        let connector = self.context.plugin_host()?.load_connector(id, &bytes)?;
        let grants = self.context.registry().grants(id)?;
        Ok(json!({
            "manifest": connector.manifest,
            "granted_paths": grants.read_paths, "granted_hosts": grants.http_hosts,
            "token_stored": grants.credential.is_some(),
            "how_to_grant": format!("a person runs `levh connector grant {id} DIR` (or --host HOST); agents cannot grant"),
        }))
    }

    fn sync(&self, levh: &Levh, scope: &Scope, request: SyncRequest) -> Result<SyncReport> {
        let id = &request.id;
        let bytes = super::connector::component_bytes(&self.context, id)?;
        let host = self.context.plugin_host()?;
        let connector = host.load_connector(id, &bytes)?;
        let manifest = &connector.manifest;
        for key in manifest.config.iter().filter(|k| k.required) {
            if !request.config.iter().any(|(k, _)| k == &key.name) {
                bail!(
                    "invalid config: connector {id} needs {}=… ({})",
                    key.name,
                    key.help
                );
            }
        }
        for (key, _) in &request.config {
            if !manifest.config.iter().any(|k| &k.name == key) {
                let known: Vec<&str> = manifest.config.iter().map(|k| k.name.as_str()).collect();
                bail!(
                    "invalid config: connector {id} has no setting `{key}` (it knows: {})",
                    known.join(", ")
                );
            }
        }
        // Stored grants only. A path named in `config` is NOT granted (unlike `levh sync`
        // typed by a person): the connector's read is refused unless a person granted it.
        let grants = self.context.registry().grants(id)?;
        let mut source = ConnectorSource::new(&host, &connector, request.config.clone(), grants);
        Ok(levh.sync(
            scope,
            &mut source,
            SyncOptions {
                dry_run: request.dry_run,
            },
            request.project,
            &mut |_| {},
        )?)
    }
}

impl levh_mcp::Connectors for ConnectorRuntime {
    fn list(&self) -> Result<serde_json::Value, String> {
        ConnectorRuntime::list(self).map_err(|e| format!("{e:#}"))
    }

    fn help(&self, id: &str) -> Result<serde_json::Value, String> {
        ConnectorRuntime::help(self, id).map_err(|e| format!("{e:#}"))
    }

    fn sync(&self, levh: &Levh, scope: &Scope, request: SyncRequest) -> Result<SyncReport, String> {
        ConnectorRuntime::sync(self, levh, scope, request).map_err(|e| format!("{e:#}"))
    }
}
