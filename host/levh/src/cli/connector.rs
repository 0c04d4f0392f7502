//! `levh connector list|inspect|add|remove|grant|revoke|secret|new`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::Subcommand;
use levh_api::Operation;
use levh_core::sync::{CatalogEntry, Grant};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Built-in and installed connectors.
    List,
    /// A connector's manifest: settings, requested capabilities, and what it was granted.
    Inspect {
        /// The connector's id.
        id: String,
    },
    /// Install a third-party connector component (.wasm built for wasm32-wasip2).
    Add {
        /// The component file.
        path: PathBuf,
        /// Refuse it unless its sha256 is this.
        #[arg(long)]
        sha256: Option<String>,
        /// Grant it read access to this directory (repeatable).
        #[arg(long = "grant", value_name = "DIR")]
        grants: Vec<PathBuf>,
        /// Install without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Run a connector component that is not installed against a throwaway store: what
    /// it would fetch and what the gate would say, for its author. Paths named in
    /// `--config` and hosts named with `--host` are granted for this run (within what its
    /// manifest asks for); nothing is installed or kept.
    Run {
        /// The component file.
        path: PathBuf,
        /// Its settings, e.g. `--config directory=~/notes` (repeatable).
        #[arg(long = "config", short = 'c', value_name = "KEY=VALUE", value_parser = super::sync::key_value)]
        config: Vec<(String, String)>,
        /// A host it may connect to for this run, e.g. `--host api.example.com` or
        /// `--host http://127.0.0.1:8080` (repeatable; only hosts its manifest asks for).
        #[arg(long = "host", value_name = "HOST")]
        hosts: Vec<String>,
        /// Ask the gate about every item, store nothing (even in the throwaway store).
        #[arg(long)]
        dry_run: bool,
    },
    /// Uninstall a third-party connector (its memories stay).
    Remove {
        /// The connector's id.
        id: String,
    },
    /// Let a connector read a directory (and everything under it), or connect to a host.
    #[command(arg_required_else_help = true)]
    Grant {
        /// The connector's id.
        id: String,
        /// The directory.
        #[arg(required_unless_present = "host")]
        dir: Option<PathBuf>,
        /// A host it may connect to (`api.github.com`, `host:port` or a URL), if its
        /// manifest asks for it too.
        #[arg(long, conflicts_with = "dir")]
        host: Option<String>,
    },
    /// Take a grant back.
    Revoke {
        /// The connector's id.
        id: String,
        /// The directory.
        #[arg(required_unless_present = "host")]
        dir: Option<PathBuf>,
        /// The host.
        #[arg(long, conflicts_with = "dir")]
        host: Option<String>,
    },
    /// Store (or clear) the token levh attaches to a connector's requests. The connector
    /// never sees it.
    #[command(subcommand)]
    Secret(SecretCommand),
    /// Create a new connector crate, ready to build, from a template using the SDK.
    New {
        /// Its name (becomes its id).
        name: String,
        /// Where to create it (default: ./NAME).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Depend on this levh-connector-sdk crate (default: a copy of the SDK this levh
        /// ships, written into the new crate's `sdk/`).
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Read a token from the terminal (hidden) or from standard input, and store it.
    Set {
        /// The connector's id.
        id: String,
    },
    /// Forget the stored token.
    Clear {
        /// The connector's id.
        id: String,
    },
}

/// Ids of the connectors built into this binary.
fn builtin_ids() -> Vec<&'static str> {
    levh_builtins::CONNECTORS
        .iter()
        .map(|(id, _)| *id)
        .collect()
}

/// `levh connector run FILE.wasm`: the component checked as `add` checks it, then one
/// sync into a store made for this run and removed after it, with the report a real
/// sync prints. The person's compile cache is used; their store and grants are not
/// touched.
fn run_uninstalled(
    context: &Context,
    path: &std::path::Path,
    config: Vec<(String, String)>,
    hosts: &[String],
    dry_run: bool,
    json: bool,
) -> Result<ExitCode> {
    let bytes = std::fs::read(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let host = context.plugin_host()?;
    let connector = host.load_connector(&path.display().to_string(), &bytes)?;
    levh_plugins::check_config(&connector.manifest, &config)?;
    let mut origins = Vec::new();
    for typed in hosts {
        levh_plugins::check_grant(&connector.manifest, &Grant::Host(typed.clone()))
            .map_err(|reason| anyhow!("--host {typed}: {reason}"))?;
        origins
            .push(levh_plugins::Origin::parse(typed).map_err(|e| anyhow!("--host {typed}: {e}"))?);
    }
    let throwaway = tempfile::tempdir()?;
    // Always SQLite in the temporary home: a trial never writes into a team database.
    let store = Context::open_throwaway(throwaway.path().join("home"))?;
    // An empty registry of its own: the run borrows no stored grant, only the paths
    // typed here.
    let connectors = levh_plugins::ConnectorRuntime::new(
        host,
        levh_plugins::Registry::new(throwaway.path().join("plugins")),
        levh_builtins::CONNECTORS,
    );
    let mut grants = connectors.grants(&connector, &store.scope.workspace, &config, true)?;
    grants.http_hosts.extend(origins);
    let mut source = connectors.source(&connector, config, grants);
    let report = store.run(Operation::SyncConnector, |levh, scope| {
        levh_api::connectors::sync_source(
            levh,
            scope,
            &mut source,
            levh_core::sync::SyncOptions { dry_run },
            None,
            &mut |_| {},
        )
    })?;
    let code = super::sync::show_run(&report, json, false)?;
    if !json {
        output::line("  (a throwaway store: nothing was kept; `levh connector add` installs it)");
    }
    Ok(code)
}

/// What replacing `old` with `new` changes, one line each: version, content, and every
/// capability asked for or no longer asked for.
fn replacement(old: &levh_plugins::Connector, new: &levh_plugins::Connector) -> Vec<String> {
    let id = &new.manifest.id;
    let mut lines = vec![format!(
        "replacing {id} {} (sha256 {}) with {} (sha256 {})",
        old.manifest.version, old.sha256, new.manifest.version, new.sha256
    )];
    for capability in &new.manifest.capabilities {
        if !old.manifest.capabilities.contains(capability) {
            lines.push(format!("  now also asks to {capability}"));
        }
    }
    for capability in &old.manifest.capabilities {
        if !new.manifest.capabilities.contains(capability) {
            lines.push(format!("  no longer asks to {capability}"));
        }
    }
    if old.sha256 == new.sha256 {
        lines.push("  (the same component: nothing changes)".into());
    }
    lines
}

/// Fails unless a built-in or installed connector has this id (naming the ones there
/// are), without starting the plugin engine.
fn known(context: &Context, id: &str) -> Result<()> {
    levh_plugins::runtime::component(&context.registry(), levh_builtins::CONNECTORS, id)?;
    Ok(())
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    let registry = context.registry();
    match command {
        Command::List => {
            // The same catalog MCP and REST give, one entry per connector (a connector that
            // cannot load is that entry's error, not the catalog's).
            let runtime = context.connectors()?;
            let catalog = context.run(Operation::ListConnectors, |_, scope| {
                levh_api::connectors::list(&runtime, scope)
            })?;
            if json {
                output::json(&catalog)?;
            } else {
                let mut table = output::table(&["id", "version", "origin", "description"]);
                for entry in &catalog.connectors {
                    table.add_row(match entry {
                        CatalogEntry::Ready(c) => vec![
                            c.id.clone(),
                            c.version.clone(),
                            c.origin.as_str().to_owned(),
                            c.description.clone(),
                        ],
                        CatalogEntry::Broken(c) => vec![
                            c.id.clone(),
                            String::new(),
                            c.origin.as_str().to_owned(),
                            c.error.clone(),
                        ],
                    });
                }
                output::print_table(&table);
            }
        }
        Command::Inspect { id } => {
            let connector = context.connectors()?.load(&id)?;
            let grants = registry.grants(&id, &context.scope.workspace)?;
            if json {
                output::json(&json!({
                    "manifest": connector.manifest, "sha256": connector.sha256, "grants": grants,
                    "token_stored": grants.credential.is_some(),
                }))?;
            } else {
                let m = &connector.manifest;
                output::line(format!("{} {} — {}", m.id, m.version, m.description));
                output::line(format!(
                    "plugin API {}, sha256 {}",
                    m.api_version, connector.sha256
                ));
                output::line("settings:");
                for k in &m.config {
                    let default = k
                        .default_value
                        .as_deref()
                        .map(|d| format!(" (default {d:?})"))
                        .unwrap_or_default();
                    let required = if k.required { " required" } else { "" };
                    output::line(format!(
                        "  {} [{}{required}]{default}: {}",
                        k.name, k.value_type, k.help
                    ));
                }
                output::line("asks for:");
                for c in &m.capabilities {
                    output::line(format!("  {c}"));
                }
                output::line("granted:");
                if grants.read_paths.is_empty() && grants.http_hosts.is_empty() {
                    output::line(
                        "  nothing stored (paths typed on `levh sync` are granted for that run)",
                    );
                }
                for p in &grants.read_paths {
                    output::line(format!("  read {}", p.display()));
                }
                for h in &grants.http_hosts {
                    output::line(format!("  connect to {h}"));
                }
                if grants.credential.is_some() {
                    output::line("  a token is stored (`levh connector secret clear` forgets it)");
                }
            }
        }
        Command::Add {
            path,
            sha256,
            grants,
            yes,
        } => {
            let host = context.plugin_host()?;
            let bytes = std::fs::read(&path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let preview = host.load_connector(&path.display().to_string(), &bytes)?;
            // A reinstall says what changes before it replaces, --yes or not.
            // (One that no longer loads is replaced without a comparison: fixing it is
            // the point.)
            let previous = if registry.installed().contains(&preview.manifest.id) {
                context.connectors()?.load(&preview.manifest.id).ok()
            } else {
                None
            };
            let changes = previous
                .as_ref()
                .map(|old| replacement(old, &preview))
                .unwrap_or_default();
            for line in &changes {
                eprintln!("{line}");
            }
            if !yes {
                let m = &preview.manifest;
                eprintln!("{} {} — {}", m.id, m.version, m.description);
                eprintln!("it asks for:");
                for c in &m.capabilities {
                    eprintln!("  {c}");
                }
                if !std::io::stdin().is_terminal() {
                    bail!("not installed: confirm with --yes when not at a terminal");
                }
                eprint!("install it? [y/N] ");
                std::io::stderr().flush()?;
                let mut answer = String::new();
                std::io::stdin().lock().read_line(&mut answer)?;
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    bail!("not installed");
                }
            }
            for dir in &grants {
                levh_plugins::check_grant(&preview.manifest, &Grant::Directory(dir.clone()))
                    .map_err(|reason| anyhow!("{reason}; {} was not installed", path.display()))?;
            }
            let connector = registry.install(&host, &path, sha256.as_deref(), &builtin_ids())?;
            let id = connector.manifest.id.clone();
            let granted: Vec<PathBuf> = grants
                .iter()
                .map(|dir| registry.grant(&id, &context.scope.workspace, dir))
                .collect::<Result<_, _>>()?;
            if json {
                output::json(&json!({
                    "installed": id, "version": connector.manifest.version,
                    "sha256": connector.sha256, "grants": granted,
                    "replaced": previous.as_ref().map(|old| json!({
                        "version": old.manifest.version, "sha256": old.sha256,
                        "capabilities": old.manifest.capabilities,
                    })),
                    "changes": changes,
                }))?;
            } else {
                output::line(format!(
                    "installed {id} {} (sha256 {})",
                    connector.manifest.version, connector.sha256
                ));
                for dir in &granted {
                    output::line(format!("  granted read {}", dir.display()));
                }
            }
        }
        Command::Run {
            path,
            config,
            hosts,
            dry_run,
        } => return run_uninstalled(context, &path, config, &hosts, dry_run, json),
        Command::Remove { id } => {
            if builtin_ids().contains(&id.as_str()) {
                bail!("{id} is built in and cannot be removed");
            }
            if !registry.remove(&id)? {
                bail!("no installed connector `{id}`");
            }
            output::line(format!("removed {id}"));
        }
        // A grant belongs to one workspace (`--workspace`, default `default`): the line says
        // what was granted to whom.
        Command::Grant { id, dir, host } => {
            // Only what the manifest asks for can be granted.
            let manifest = context.connectors()?.load(&id)?.manifest;
            let grant = match (&host, &dir) {
                (Some(host), _) => Grant::Host(host.clone()),
                (None, Some(dir)) => Grant::Directory(dir.clone()),
                (None, None) => bail!("name a directory or --host HOST to grant"),
            };
            levh_plugins::check_grant(&manifest, &grant).map_err(|reason| anyhow!(reason))?;
            let workspace = &context.scope.workspace;
            if let Some(host) = host {
                let origin = registry.grant_host(&id, workspace, &host)?;
                output::line(format!(
                    "{id} may connect to {origin} when workspace {workspace} syncs"
                ));
            } else if let Some(dir) = dir {
                if !dir.is_dir() {
                    bail!("{} is not a directory", dir.display());
                }
                let granted = registry.grant(&id, workspace, &dir)?;
                output::line(format!(
                    "{id} may read {} when workspace {workspace} syncs",
                    granted.display()
                ));
            }
        }
        Command::Revoke { id, dir, host } => {
            let workspace = &context.scope.workspace;
            if let Some(host) = host {
                if !registry.revoke_host(&id, workspace, &host)? {
                    bail!("{id} had no grant for host {host} in workspace {workspace}");
                }
                output::line(format!(
                    "{id} may no longer connect to {host} for workspace {workspace}"
                ));
            } else if let Some(dir) = dir {
                if !registry.revoke(&id, workspace, &dir)? {
                    bail!(
                        "{id} had no grant for {} in workspace {workspace}",
                        dir.display()
                    );
                }
                output::line(format!(
                    "{id} may no longer read {} for workspace {workspace}",
                    dir.display()
                ));
            }
        }
        Command::Secret(SecretCommand::Set { id }) => {
            known(context, &id)?;
            let token = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("token for {id} (hidden): "))?
            } else {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                line
            };
            registry.set_credential(&id, &token)?;
            output::line(format!(
                "stored the token for {id}; levh attaches it to {id}'s requests to its granted hosts"
            ));
        }
        Command::Secret(SecretCommand::Clear { id }) => {
            if !registry.clear_credential(&id)? {
                bail!("no token stored for {id}");
            }
            output::line(format!("forgot the token for {id}"));
        }
        Command::New { name, dir, sdk } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from(&name));
            let sdk = sdk
                .map(|sdk| {
                    sdk.canonicalize()
                        .map_err(|e| anyhow!("the connector SDK at {}: {e}", sdk.display()))
                })
                .transpose()?;
            super::template::create(&dir, &name, sdk.as_deref())?;
            let dir = dir.canonicalize().unwrap_or(dir);
            // Where cargo will put the component once built from the crate's folder: its
            // own target/, or CARGO_TARGET_DIR (relative to that folder when relative).
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .map_or_else(|| dir.join("target"), |t| dir.join(t));
            let wasm = target
                .join("wasm32-wasip2/release")
                .join(format!("{}.wasm", name.replace('-', "_")));
            output::line(format!(
                "created {} (its README.md has the steps)",
                dir.display()
            ));
            output::line(format!(
                "build it:  cd {} && cargo build --target wasm32-wasip2 --release",
                dir.display()
            ));
            output::line(format!(
                "try it:    levh connector run {} --config directory=DIR",
                wasm.display()
            ));
            output::line(format!("add it:    levh connector add {}", wasm.display()));
        }
    }
    Ok(ExitCode::SUCCESS)
}
