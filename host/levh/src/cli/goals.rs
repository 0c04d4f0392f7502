//! `levh goals [list] [--status S]`, `levh goals add TITLE --milestone …`, `levh goals
//! update GOAL [--status S] [--reached M] [--milestone M] [--note TEXT]`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::goals::{self, GoalArgs, GoalListArgs, GoalUpdateArgs, GoalView};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// The project.
    #[arg(long, short, global = true)]
    project: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// The goals, most recently changed first.
    List {
        /// Only goals with this status.
        #[arg(long, value_parser = goals::STATUSES)]
        status: Option<String>,
    },
    /// Set a goal.
    Add {
        /// The goal, in words.
        title: String,
        /// A milestone (repeat for more, in order).
        #[arg(long = "milestone")]
        milestones: Vec<String>,
    },
    /// Change a goal.
    Update {
        /// The goal's title.
        goal: String,
        /// A new status.
        #[arg(long, value_parser = goals::STATUSES)]
        status: Option<String>,
        /// A milestone reached (repeat for more).
        #[arg(long)]
        reached: Vec<String>,
        /// A milestone to add (repeat for more).
        #[arg(long = "milestone")]
        milestones: Vec<String>,
        /// A progress note (kept as a memory, linked from the goal).
        #[arg(long)]
        note: Option<String>,
    },
}

fn show(goal: &GoalView) {
    let reached = goal.milestones.iter().filter(|m| m.reached).count();
    output::line(format!(
        "{} ({}, {reached}/{} milestones, {} notes)",
        goal.title,
        goal.status,
        goal.milestones.len(),
        goal.log.len()
    ));
    for m in &goal.milestones {
        output::line(format!(
            "  [{}] {}",
            if m.reached { "x" } else { " " },
            m.name
        ));
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let change = match args.command {
        None | Some(Command::List { .. }) => {
            let status = match args.command {
                Some(Command::List { status }) => status,
                _ => None,
            };
            let list = context.run(Operation::ListGoals, |levh, scope| {
                goals::list(
                    levh,
                    scope,
                    GoalListArgs {
                        project: args.project,
                        status,
                    },
                )
            })?;
            if json {
                output::json(&list)?;
            } else if list.goals.is_empty() {
                output::line("no goal (`levh goals add TITLE --milestone …`)");
            } else {
                list.goals.iter().for_each(show);
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Add { title, milestones }) => {
            context.run(Operation::CreateGoal, |levh, scope| {
                goals::create(
                    levh,
                    scope,
                    GoalArgs {
                        title,
                        milestones,
                        project: args.project,
                    },
                )
            })?
        }
        Some(Command::Update {
            goal,
            status,
            reached,
            milestones,
            note,
        }) => context.run(Operation::UpdateGoal, |levh, scope| {
            goals::update(
                levh,
                scope,
                GoalUpdateArgs {
                    goal,
                    project: args.project,
                    status,
                    reached,
                    add_milestones: milestones,
                    note,
                },
                "cli".to_owned(),
            )
        })?,
    };
    if json {
        output::json(&change)?;
    } else {
        show(&change.goal);
        if change.write.status != "stored" && change.write.status != "unchanged" {
            output::line(format!(
                "the goal was {}: {}",
                change.write.status,
                change.write.reason.as_deref().unwrap_or("")
            ));
        }
    }
    Ok(
        if matches!(change.write.status.as_str(), "stored" | "unchanged") {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}
