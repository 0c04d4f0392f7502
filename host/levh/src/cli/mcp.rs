//! `levh mcp stdio|profiles|config`: the MCP server for agents, its tool bands, and a
//! config to paste into each client.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow};
use clap::Subcommand;
use levh_api::settings::{Launch, McpClient};
use levh_mcp::{LevhMcp, Profile};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (what MCP clients spawn). Logs go to stderr.
    Stdio {
        /// The tool band clients discover: minimal, work, admin or full. A profile
        /// filters discovery; it is not a security boundary.
        /// Default: `mcp_profile` in config.toml, else work.
        #[arg(long, env = "LEVH_MCP_PROFILE")]
        profile: Option<Profile>,
    },
    /// The tool profiles (cumulative bands) and their tools.
    Profiles,
    /// Print the configurations that make a client start levh: this binary by its
    /// absolute path, and the package runner `uvx levh-rs` (`--json`: both in one document).
    Config {
        /// The client: claude, claude_code, cursor, windsurf, vscode or cline (the
        /// dashboard's Settings page shows where each one's configuration goes).
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(McpClient::ALL.map(McpClient::name)))]
        client: String,
        /// The tool band it should see.
        #[arg(long, default_value = "work")]
        profile: Profile,
    },
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
        Command::Config { client, profile } => {
            let client = McpClient::named(&client)
                .ok_or_else(|| anyhow!("unknown MCP client {client:?}"))?;
            config(home, workspace, client, profile, json)
        }
    }
}

fn stdio(home: Option<PathBuf>, workspace: &str, profile: Option<Profile>) -> Result<ExitCode> {
    let context = Arc::new(Context::open(home, workspace)?);
    let profile = context
        .setting_or(profile, "LEVH_MCP_PROFILE")?
        .unwrap_or(Profile::Work);
    let (levh, warning) = context.engine_for_server();
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    let mut server = LevhMcp::new(levh, context.scope.workspace.clone(), profile)
        .with_event_log(context.shared_server_store());
    if profile >= Profile::Full {
        server = server.with_connectors(Arc::new(context.connectors()?));
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

/// The running `levh` binary, as clients should spawn it.
pub fn this_binary() -> Result<PathBuf> {
    let binary = std::env::current_exe().context("finding the levh binary")?;
    Ok(binary.canonicalize().unwrap_or(binary))
}

fn config(
    home: Option<PathBuf>,
    workspace: &str,
    client: McpClient,
    profile: Profile,
    json: bool,
) -> Result<ExitCode> {
    if let Some(warning) = crate::context::database_only_in_environment(home.as_deref()) {
        tracing::warn!("{warning}");
    }
    let home = home.map(|home| home.canonicalize().unwrap_or(home));
    let view = client.view(
        &this_binary()?,
        home.as_deref(),
        workspace,
        profile.as_str(),
        &levh_api::settings::embedder_env(|name| std::env::var(name).ok()),
    );
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    // Each form is whole JSON to paste; the line above it says when it fits.
    output::line(format!("{}: {}", view.client, view.file));
    output::line("");
    output::line(
        "This levh by its absolute path — built from a checkout or unpacked from the release \
         archive; starts with no network:",
    );
    output::json(&view.config)?;
    output::line("");
    output::line(format!(
        "Through the package runner — levh installed from PyPI ({}); uv fetches it on the \
         first start, nothing else to keep (`levh setup --uvx` writes this one):",
        Launch::PACKAGE
    ));
    output::json(&view.runner_config)?;
    Ok(ExitCode::SUCCESS)
}
