//! `levh consolidate [--dry-run]` and `levh consolidate undo SUMMARY`: clusters of aged,
//! related memories become one summary each (what `levh serve` also does on a schedule,
//! `LEVH_CONSOLIDATE_EVERY_HOURS`), and the way back.

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use levh_api::Operation;
use levh_api::requests::ConsolidateArgs;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Show the clusters and their summaries; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only memories recorded at least this many days ago (default: the setting
    /// LEVH_CONSOLIDATE_AFTER_DAYS, 30).
    #[arg(long, value_name = "DAYS")]
    older_than_days: Option<f64>,
    /// Compare at most this many memories, oldest first.
    #[arg(long)]
    limit: Option<usize>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Undo a consolidation: its members live again as they were, its summary forgotten.
    Undo {
        /// The summary memory's id.
        id: String,
    },
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if let Some(Command::Undo { id }) = args.command {
        let view = context.run(Operation::UndoConsolidation, |levh, scope| {
            levh_api::consolidation::undo(levh, scope, &id)
        })?;
        if json {
            output::json(&view)?;
        } else {
            output::line(format!(
                "undone: {} memories restored, summary {} forgotten",
                view.restored.len(),
                view.summary_id
            ));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let model = levh_embed::chat::ChatModel::from_env().map_err(|e| anyhow!(e))?;
    let request = ConsolidateArgs {
        project: args.project,
        dry_run: Some(args.dry_run),
        older_than_days: args.older_than_days,
        limit: args.limit,
    };
    let view = context.run(Operation::Consolidate, |levh, scope| {
        levh_api::consolidation::consolidate(
            levh,
            scope,
            request,
            model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
        )
    })?;
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    for cluster in &view.clusters {
        let head = match &cluster.summary_id {
            Some(id) => format!("summary {id} replaces {} memories", cluster.members.len()),
            None => format!("would replace {} memories", cluster.members.len()),
        };
        output::line(head);
        output::line(format!("  members: {}", cluster.members.join(" ")));
        for line in cluster.summary.lines() {
            output::line(format!("  | {line}"));
        }
    }
    output::line(format!(
        "{} of {} memories compared ({} measure, threshold {}; recorded before {}) {} {} clusters",
        if view.dry_run {
            view.clusters.iter().map(|c| c.members.len()).sum()
        } else {
            view.retired
        },
        view.considered,
        view.measure,
        view.threshold,
        view.recorded_before,
        if view.dry_run {
            "would be consolidated into"
        } else {
            "consolidated into"
        },
        view.clusters.len()
    ));
    Ok(ExitCode::SUCCESS)
}
