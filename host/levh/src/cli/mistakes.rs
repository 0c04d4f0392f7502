//! `levh mistakes add TEXT [--why …] [--avoid …]`, `levh mistakes [list]` and `levh
//! check-action ACTION`: a ledger of mistakes an agent checks before it acts.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::mistakes::{self, CheckArgs, MistakeArgs};
use levh_api::requests::ListArgs;
use levh_api::{Operation, memories};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand (or `list`): only this project's.
    #[arg(long, short, global = true)]
    project: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Record a mistake: what happened.
    Add {
        /// What happened.
        what: String,
        /// Why it happened.
        #[arg(long)]
        why: Option<String>,
        /// How to avoid it.
        #[arg(long)]
        avoid: Option<String>,
        /// A tag (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
    },
    /// The recorded mistakes, newest first.
    List,
}

#[derive(Debug, clap::Args)]
pub struct CheckCommand {
    /// What you are about to do.
    action: String,
    /// Only this project's mistakes (pinned rules of every project apply).
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many of each (1..20).
    #[arg(long, short = 'n')]
    limit: Option<usize>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    match args.command {
        Some(Command::Add {
            what,
            why,
            avoid,
            tags,
        }) => {
            let view = context.run(Operation::RecordMistake, |levh, scope| {
                mistakes::record(
                    levh,
                    scope,
                    MistakeArgs {
                        what,
                        why,
                        avoid,
                        project: args.project,
                        tags,
                    },
                    "cli".to_owned(),
                )
            })?;
            crate::cli::capture::report(&view, json)
        }
        Some(Command::List) | None => {
            let list = context.run(Operation::ListMemories, |levh, scope| {
                memories::list(
                    levh,
                    scope,
                    ListArgs {
                        project: args.project,
                        kind: Some(mistakes::MISTAKE_KIND.to_owned()),
                        limit: Some(100),
                        ..ListArgs::default()
                    },
                )
            })?;
            if json {
                output::json(&list)?;
            } else if list.memories.is_empty() {
                output::line("no mistake recorded (`levh mistakes add WHAT --why … --avoid …`)");
            } else {
                let mut table = output::table(&["id", "recorded", "project", "mistake"]);
                for m in &list.memories {
                    table.add_row(vec![
                        m.id.clone(),
                        output::human_time_text(&m.created_at),
                        m.project.clone().unwrap_or_else(|| "-".into()),
                        output::preview(&m.content),
                    ]);
                }
                output::print_table(&table);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn check(context: &Context, args: CheckCommand, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::CheckAction, |levh, scope| {
        mistakes::check(
            levh,
            scope,
            CheckArgs {
                action: args.action,
                project: args.project,
                limit: args.limit,
            },
        )
    })?;
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(&view.summary);
    for (title, items) in [("mistake", &view.mistakes), ("rule", &view.rules)] {
        for item in items {
            output::line(format!(
                "- {title} {}: {}",
                item.id,
                output::preview(&item.content)
            ));
            if let Some(avoid) = &item.avoid {
                output::line(format!("  avoid: {avoid}"));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
