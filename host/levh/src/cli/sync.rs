//! `levh sync ID --config key=value ...` and `levh sync status [ID]`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use levh_api::Operation;
use levh_api::requests::SyncStatusArgs;
use levh_core::sync::{SyncOptions, SyncReport};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// The connector to run (`levh connector list` shows them).
    id: Option<String>,
    /// Connector settings, e.g. `--config directory=~/notes` (repeatable). Paths named here
    /// are granted to the connector for this run.
    #[arg(long = "config", short = 'c', value_name = "KEY=VALUE", value_parser = key_value)]
    config: Vec<(String, String)>,
    /// Put the memories in this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Ask the gate about every item, store nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Recent sync runs and their tallies.
    Status {
        /// A connector (its recent runs) or a run id (that run, with every item not stored).
        id: Option<String>,
        /// How many runs.
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: usize,
    },
}

pub(crate) fn key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not KEY=VALUE"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("'{text}' has no key before '='"));
    }
    Ok((key.to_owned(), expand_home(value.trim())))
}

/// `~/x` → `$HOME/x`, as a shell would have done had the value not followed `=`.
fn expand_home(value: &str) -> String {
    match (value.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => value.to_owned(),
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if let Some(Command::Status { id, limit }) = args.command {
        return status(context, id.as_deref(), limit, json);
    }
    let Some(id) = args.id else {
        bail!("name a connector to sync (`levh connector list` shows them), or `levh sync status`")
    };
    let connectors = context.connectors()?;
    let connector = connectors.load(&id)?;
    levh_plugins::check_config(&connector.manifest, &args.config)?;
    // A path the person typed on this command line is theirs to give: it is granted for
    // this run. Syncs started by agents get only the stored grants.
    let grants = connectors.grants(&connector, &context.scope.workspace, &args.config, true)?;

    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    let mut source = connectors.source(&connector, args.config.clone(), grants);
    let options = SyncOptions {
        dry_run: args.dry_run,
    };
    let report = context.run(Operation::SyncConnector, |levh, scope| {
        levh_api::connectors::sync_source(
            levh,
            scope,
            &mut source,
            options,
            args.project,
            &mut |r: &SyncReport| {
                bar.set_message(format!(
                    "{}: {} fetched, {} stored, {} held, {} failed",
                    r.connector,
                    r.fetched,
                    r.admitted + r.redacted + r.updated,
                    r.held,
                    r.failed
                ));
                bar.tick();
            },
        )
    })?;
    bar.finish_and_clear();
    show_run(&report, json, true)
}

/// A run's report, as a table for people or the document for `--json`; a failed run
/// exits 1. `kept`: the run's store outlives it (not `levh connector run`'s throwaway
/// one), so the lines pointing at held items and at the run are true.
pub(crate) fn show_run(report: &SyncReport, json: bool, kept: bool) -> Result<ExitCode> {
    if json {
        output::json(report)?;
    } else if kept {
        print_report(report);
    } else {
        print_counts(report);
    }
    Ok(if report.status == levh_core::sync::SyncStatus::Failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(r: &SyncReport) {
    print_counts(r);
    print_tail(r);
}

/// The run's tallies and every item it did not store.
fn print_counts(r: &SyncReport) {
    output::line(format!(
        "{} {}: fetched {}, admitted {}, redacted {}, held {}, rejected {}, updated {}, unchanged {}, failed {}",
        r.connector,
        r.status,
        r.fetched,
        r.admitted,
        r.redacted,
        r.held,
        r.rejected,
        r.updated,
        r.unchanged,
        r.failed
    ));
    // Only connectors of plugin API 0.1.1 report skips; the line stays as it was otherwise.
    if r.skipped > 0 {
        output::line(format!(
            "  skipped {} on purpose by the connector (listed below)",
            r.skipped
        ));
    }
    print_not_stored(r);
    print_retired(r);
}

/// Every item the run found gone from its source, and what became of its memory.
fn print_retired(r: &SyncReport) {
    if r.retired == 0 {
        return;
    }
    output::line(format!(
        "  retired {} gone from the source (forgotten, kept for `--known-at`):",
        r.retired
    ));
    let mut table = output::table(&["item", "reason", "memory"]);
    for item in &r.retirements {
        let memory = match (item.memory_id, item.kept_pinned, item.held_id) {
            (Some(id), _, _) => format!("retired {id}"),
            (None, Some(id), _) => format!("kept {id} (pinned)"),
            (None, None, Some(id)) => format!("held {id} discarded"),
            (None, None, None) => "-".into(),
        };
        table.add_row(vec![item.source_id.clone(), item.reason.clone(), memory]);
    }
    output::print_table(&table);
    let named = r.retirements.len() as u64;
    if r.retired > named {
        output::line(format!("  … and {} more not named here", r.retired - named));
    }
}

/// Where the run's results wait: held items and the run itself, kept in the store.
fn print_tail(r: &SyncReport) {
    if r.held > 0 {
        output::line("  held items wait for you: `levh held list`");
    }
    output::line(format!(
        "  run {} (`levh sync status {0}` shows it again)",
        r.run_id
    ));
}

/// Every item the run did not store, with why; failures the report could not tie to an
/// item (a page that failed) as their own lines.
fn print_not_stored(r: &SyncReport) {
    if !r.not_stored.is_empty() {
        let mut table = output::table(&["item", "fate", "reason", "collided with"]);
        for item in &r.not_stored {
            table.add_row(vec![
                item.source_id.clone(),
                item.fate.as_str().to_owned(),
                item.reason.clone(),
                item.nearest
                    .map(|id| id.to_string())
                    .or_else(|| item.held_id.map(|id| format!("held {id}")))
                    .unwrap_or_else(|| "-".into()),
            ]);
        }
        output::print_table(&table);
        let named = r.not_stored.len() as u64;
        let total = r.held + r.rejected + r.failed + r.skipped;
        if total > named {
            output::line(format!("  … and {} more not named here", total - named));
        }
    }
    let named: Vec<&str> = r
        .not_stored
        .iter()
        .filter(|i| i.fate == levh_core::sync::ItemFate::Failed)
        .map(|i| i.source_id.as_str())
        .collect();
    for line in &r.errors {
        if !named.iter().any(|id| line.starts_with(&format!("{id}: "))) {
            output::line(format!("  ✗ {line}"));
        }
    }
}

fn status(context: &Context, id: Option<&str>, limit: usize, json: bool) -> Result<ExitCode> {
    // A run id shows that run in full, every item it did not store included.
    if let Some(run) = id
        .map(|id| {
            context.run(Operation::ConnectorSyncStatus, |levh, scope| {
                levh_api::connectors::sync_run(levh, scope, id)
            })
        })
        .transpose()?
        .flatten()
    {
        if json {
            output::json(&run)?;
        } else {
            print_report(&run);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let runs = context.run(Operation::ConnectorSyncStatus, |levh, scope| {
        levh_api::connectors::status(
            levh,
            scope,
            SyncStatusArgs {
                id: id.map(str::to_owned),
                limit: Some(limit),
            },
        )
    })?;
    if json {
        output::json(&runs)?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        output::line("no sync has run yet");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&[
        "run",
        "started",
        "connector",
        "status",
        "fetched",
        "stored",
        "updated",
        "held",
        "rejected",
        "unchanged",
        "failed",
    ]);
    for r in &runs {
        table.add_row(vec![
            r.run_id.clone(),
            r.started_at.map(output::human_time).unwrap_or_default(),
            r.connector.clone(),
            r.status.to_string(),
            r.fetched.to_string(),
            (r.admitted + r.redacted).to_string(),
            r.updated.to_string(),
            r.held.to_string(),
            r.rejected.to_string(),
            r.unchanged.to_string(),
            r.failed.to_string(),
        ]);
    }
    output::print_table(&table);
    output::line("`levh sync status RUN` shows a run with every item it did not store");
    Ok(ExitCode::SUCCESS)
}
