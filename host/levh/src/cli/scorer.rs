//! `levh scorer list|add|use|off|remove`: ranking policies that replace the H-score.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Built-in and installed scorers; the active one is marked.
    List,
    /// Install a third-party scorer component (.wasm built for wasm32-wasip2).
    Add {
        /// The component file.
        path: PathBuf,
    },
    /// Rank recall results with this scorer.
    Use {
        /// The scorer's id.
        id: String,
    },
    /// Go back to the built-in H-score.
    Off,
    /// Uninstall a third-party scorer.
    Remove {
        /// The scorer's id.
        id: String,
    },
}

/// Ids of the scorers built into this binary.
fn builtin_ids() -> Vec<&'static str> {
    levh_builtins::SCORERS.iter().map(|(id, _)| *id).collect()
}

/// A scorer's component bytes: built-in first, then installed.
fn component_bytes(context: &Context, id: &str) -> Result<Vec<u8>> {
    context.scorer_component(id)
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    let registry = context.scorers();
    match command {
        Command::List => {
            let host = context.plugin_host()?;
            let active = registry.active();
            let mut rows = Vec::new();
            for id in builtin_ids()
                .into_iter()
                .map(str::to_owned)
                .chain(registry.installed())
            {
                let origin = if levh_builtins::scorer(&id).is_some() {
                    "built-in"
                } else {
                    "installed"
                };
                let is_active = active.as_deref() == Some(id.as_str());
                let bytes = component_bytes(context, &id)?;
                rows.push(match host.load_scorer(&id, &bytes) {
                    Ok(s) => json!({
                        "id": s.manifest.id, "version": s.manifest.version, "origin": origin,
                        "description": s.manifest.description, "active": is_active,
                    }),
                    Err(e) => json!({
                        "id": id, "origin": origin, "active": is_active, "error": e.to_string(),
                    }),
                });
            }
            if json {
                output::json(&json!({ "active": active, "scorers": rows }))?;
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = output::table(&["", "id", "version", "origin", "description"]);
            for r in &rows {
                let text = |k: &str| r[k].as_str().unwrap_or("").to_owned();
                table.add_row(vec![
                    if r["active"] == true { "*" } else { "" }.to_owned(),
                    text("id"),
                    text("version"),
                    text("origin"),
                    r["description"]
                        .as_str()
                        .or(r["error"].as_str())
                        .unwrap_or("")
                        .to_owned(),
                ]);
            }
            output::print_table(&table);
            output::line(match &active {
                Some(id) => format!(
                    "recall is ranked by `{id}`; `levh scorer off` goes back to the H-score"
                ),
                None => "recall is ranked by the built-in H-score".to_owned(),
            });
        }
        Command::Add { path } => {
            let host = context.plugin_host()?;
            let scorer = registry.install(&host, &path, &builtin_ids())?;
            let m = &scorer.manifest;
            if json {
                output::json(
                    &json!({ "installed": m.id, "version": m.version, "sha256": scorer.sha256 }),
                )?;
            } else {
                output::line(format!(
                    "installed scorer {} {} (sha256 {}); `levh scorer use {}` turns it on",
                    m.id, m.version, scorer.sha256, m.id
                ));
            }
        }
        Command::Use { id } => {
            // Load it now, so a broken scorer is refused here rather than at recall.
            let bytes = component_bytes(context, &id)?;
            let scorer = context.plugin_host()?.load_scorer(&id, &bytes)?;
            registry.set_active(Some(&scorer.manifest.id))?;
            if json {
                output::json(&json!({ "active": scorer.manifest.id }))?;
            } else {
                output::line(format!("recall is now ranked by `{}`", scorer.manifest.id));
            }
        }
        Command::Off => {
            registry.set_active(None)?;
            if json {
                output::json(&json!({ "active": null }))?;
            } else {
                output::line("recall is ranked by the built-in H-score");
            }
        }
        Command::Remove { id } => {
            if builtin_ids().contains(&id.as_str()) {
                bail!("{id} is built in and cannot be removed");
            }
            if !registry.remove(&id)? {
                bail!("no installed scorer `{id}`");
            }
            output::line(format!("removed scorer {id}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}
