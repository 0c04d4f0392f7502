//! `levh move ID... --project P`: memories to another project, or out of every project.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::requests::MoveArgs;
use levh_api::{Operation, memories};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memories' ids (at most 1,000).
    #[arg(required = true, num_args = 1..=1000)]
    ids: Vec<String>,
    /// The project to move them to.
    #[arg(
        long,
        short,
        conflicts_with = "no_project",
        required_unless_present = "no_project"
    )]
    project: Option<String>,
    /// Out of every project.
    #[arg(long)]
    no_project: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::MoveMemories, |levh, scope| {
        memories::move_to_project(
            levh,
            scope,
            MoveArgs {
                ids: args.ids,
                project: args.project,
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        let place = view
            .project
            .as_deref()
            .map_or_else(|| "out of every project".to_owned(), |p| format!("to {p}"));
        output::line(format!("moved {} {place}", view.moved.len()));
        for id in &view.missing {
            output::line(format!("no live memory {id}"));
        }
    }
    // A missing id is a failure a script should see.
    Ok(if view.missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
