//! `levh setup`: the first run. Configures an MCP client to start this levh — the entry
//! `levh mcp config CLIENT` prints, merged into the file the client reads (every other
//! server and setting kept; the file replaced whole only once the new one is written),
//! shown before it is written. By flags (`--client cursor --yes`), or asked in a terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};
use levh_api::settings::{Launch, McpClient};
use levh_mcp::Profile;
use serde_json::{Value, json};

use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The client: claude (Claude Desktop), claude_code, cursor, windsurf, vscode or cline
    /// (asked in a terminal when not given).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(McpClient::ALL.map(McpClient::name)))]
    client: Option<String>,
    /// The tool band it should see: minimal, work, admin or full.
    #[arg(long, default_value = "work")]
    profile: Profile,
    /// The embedder the client's levh uses (LEVH_EMBEDDER): local, ollama, openai or hash.
    #[arg(long, value_parser = ["local", "ollama", "openai", "hash"])]
    embedder: Option<String>,
    /// The user's configuration instead of the project's (Claude Code, Cursor).
    #[arg(long)]
    user: bool,
    /// Start levh through `uvx levh-rs` (installed from PyPI; uv keeps it) instead of this
    /// binary's absolute path (a checkout or the release archive; no network at start).
    #[arg(long)]
    uvx: bool,
    /// Write this file instead of the client's usual one.
    #[arg(long, value_name = "FILE")]
    path: Option<PathBuf>,
    /// Write without asking (for scripts).
    #[arg(long, short)]
    yes: bool,
    /// Show what would be written; change nothing.
    #[arg(long, conflicts_with = "yes")]
    dry_run: bool,
}

/// Where `client` reads its configuration (the project's in the current directory, or the
/// user's).
fn usual_file(client: McpClient, user: bool) -> Result<PathBuf> {
    let home = || -> Result<PathBuf> {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("HOME is not set: name the file with --path"))
    };
    let here = std::env::current_dir()?;
    Ok(match (client, user) {
        (McpClient::Claude, _) if cfg!(target_os = "macos") => {
            home()?.join("Library/Application Support/Claude/claude_desktop_config.json")
        }
        (McpClient::Claude, _) => home()?.join(".config/Claude/claude_desktop_config.json"),
        (McpClient::ClaudeCode, false) => here.join(".mcp.json"),
        (McpClient::ClaudeCode, true) => home()?.join(".claude.json"),
        (McpClient::Cursor, false) => here.join(".cursor/mcp.json"),
        (McpClient::Cursor, true) => home()?.join(".cursor/mcp.json"),
        (McpClient::Windsurf, _) => home()?.join(".codeium/windsurf/mcp_config.json"),
        (McpClient::Vscode, false) => here.join(".vscode/mcp.json"),
        (McpClient::Vscode, true) | (McpClient::Cline, _) => bail!(
            "{}'s configuration lives in the editor's own settings folder: name the file with --path",
            client.name()
        ),
    })
}

/// `file`'s JSON with levh's entry (`entry`: `{"mcpServers": {"levh": …}}` or `{"servers":
/// …}`) in place of any earlier one, everything else as it was.
fn merged(file: Value, entry: &Value) -> Result<Value> {
    let mut file = file;
    let Value::Object(top) = &mut file else {
        bail!("the file is not a JSON object; nothing was changed");
    };
    let Some((key, servers)) = entry.as_object().and_then(|e| e.iter().next()) else {
        bail!("no server entry to write");
    };
    let list = top.entry(key.clone()).or_insert_with(|| json!({}));
    let Value::Object(list) = list else {
        bail!("`{key}` in the file is not a JSON object; nothing was changed");
    };
    for (name, server) in servers.as_object().into_iter().flatten() {
        list.insert(name.clone(), server.clone());
    }
    Ok(file)
}

fn ask(question: &str) -> Result<String> {
    eprint!("{question} ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim().to_owned())
}

pub fn run(home: Option<PathBuf>, workspace: &str, args: Args, json: bool) -> Result<ExitCode> {
    if let Some(warning) = crate::context::database_only_in_environment(home.as_deref()) {
        tracing::warn!("{warning}");
    }
    let interactive = std::io::stdin().is_terminal() && !args.yes && !args.dry_run;
    let client = match (&args.client, interactive) {
        (Some(name), _) => name.clone(),
        (None, true) => {
            let names: Vec<&str> = McpClient::ALL.map(McpClient::name).to_vec();
            ask(&format!(
                "Which MCP client should start levh? ({})",
                names.join(", ")
            ))?
        }
        (None, false) => bail!(
            "name the client with --client ({})",
            McpClient::ALL.map(McpClient::name).join(", ")
        ),
    };
    let client =
        McpClient::named(&client).ok_or_else(|| anyhow!("unknown MCP client {client:?}"))?;
    let path = match args.path {
        Some(path) => path,
        None => usual_file(client, args.user)?,
    };
    let home = match home {
        Some(home) => Some(home.canonicalize().unwrap_or(home)),
        None => Some(crate::context::resolve_home(None)?),
    };
    let binary = super::mcp::this_binary()?;
    let launch = if args.uvx {
        Launch::Runner
    } else {
        Launch::Binary(&binary)
    };
    let mut entry = client.config(
        launch,
        home.as_deref(),
        workspace,
        args.profile.as_str(),
        &levh_api::settings::embedder_env(|name| std::env::var(name).ok()),
    );
    if let Some(embedder) = &args.embedder
        && let Some(server) = entry
            .as_object_mut()
            .and_then(|e| e.values_mut().next())
            .and_then(|s| s.get_mut("levh"))
    {
        server["env"]["LEVH_EMBEDDER"] = embedder.clone().into();
    }
    let before: Value = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!("{} is not valid JSON; nothing was changed", path.display())
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(error) => return Err(error).context(format!("reading {}", path.display())),
    };
    let after = merged(before, &entry)?;
    eprintln!(
        "levh's entry for {} in {}:\n{}",
        client.name(),
        path.display(),
        serde_json::to_string_pretty(&entry)?
    );
    let write = if args.dry_run {
        false
    } else if args.yes {
        true
    } else if interactive {
        matches!(ask("Write it? [y/N]")?.to_lowercase().as_str(), "y" | "yes")
    } else {
        bail!("nothing was written: add --yes to write it, or --dry-run to only show it");
    };
    if write {
        write_whole(&path, &(serde_json::to_string_pretty(&after)? + "\n"))?;
    }
    if json {
        output::json(&json!({
            "client": client.name(),
            "file": path.display().to_string(),
            "written": write,
            "entry": entry,
        }))?;
    } else if write {
        output::line(format!(
            "wrote {}: restart {} and it starts levh (`levh doctor` checks the store)",
            path.display(),
            client.name()
        ));
    } else {
        output::line("nothing was written");
    }
    Ok(ExitCode::SUCCESS)
}

/// `text` as the whole of `path`: written beside it, then moved over it.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = path.with_extension("levh-tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path).with_context(|| format!("writing {}", path.display()))
}
