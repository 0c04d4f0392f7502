//! `levh checkpoint --goal G [--done …] [--next …] [--question …]` and `levh continue
//! [TASK]`: where a task stands, and everything needed to resume it.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::checkpoints::{self, CheckpointArgs, ContinueArgs};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct CheckpointCommand {
    /// The task (default "current task").
    #[arg(long, short)]
    task: Option<String>,
    /// What the task is for.
    #[arg(long)]
    goal: String,
    /// Something done (repeat for more).
    #[arg(long)]
    done: Vec<String>,
    /// Something next (repeat for more).
    #[arg(long)]
    next: Vec<String>,
    /// An open question (repeat for more).
    #[arg(long = "question")]
    questions: Vec<String>,
    /// A memory the task rests on (repeat for more).
    #[arg(long = "memory")]
    memories: Vec<String>,
    /// The project.
    #[arg(long, short)]
    project: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ContinueCommand {
    /// The task (default: the project's latest checkpoint).
    task: Option<String>,
    /// The project.
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many tokens of context (200..20000, default 2000).
    #[arg(long)]
    max_tokens: Option<usize>,
}

pub fn checkpoint(context: &Context, args: CheckpointCommand, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::Checkpoint, |levh, scope| {
        checkpoints::checkpoint(
            levh,
            scope,
            CheckpointArgs {
                task: args.task,
                goal: args.goal,
                done: args.done,
                next: args.next,
                questions: args.questions,
                memories: args.memories,
                project: args.project,
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        let id = view.memory.as_ref().map(|m| m.id.as_str()).unwrap_or("-");
        output::line(match view.status.as_str() {
            "stored" => format!("checkpoint {id} written"),
            "unchanged" => format!("unchanged: checkpoint {id} already says this"),
            other => format!("{other}: {}", view.reason.as_deref().unwrap_or("")),
        });
    }
    Ok(if matches!(view.status.as_str(), "stored" | "unchanged") {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn resume(context: &Context, args: ContinueCommand, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::ContinueTask, |levh, scope| {
        checkpoints::resume(
            levh,
            scope,
            ContinueArgs {
                task: args.task,
                project: args.project,
                max_tokens: args.max_tokens,
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        output::line(view.text.trim_end());
        if view.omitted > 0 {
            output::line(format!(
                "({} more left out to stay within {} tokens)",
                view.omitted, view.max_tokens
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
