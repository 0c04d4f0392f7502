//! `levh held list|show|admit|discard`: the drain of the held queue. Deciding belongs to
//! a person; these commands are how one does it at a terminal.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use levh_api::requests::{HeldListArgs, HeldStatusFilter};
use levh_api::views::{HeldStatusKind, HeldView};
use levh_api::{Operation, held, memories};
use levh_core::HeldId;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Candidates waiting for a decision (or of another status).
    List {
        /// Which: held (default), admitted, discarded, expired, or all.
        #[arg(long, default_value = "held", value_parser = status_filter())]
        status: HeldStatusFilter,
    },
    /// One candidate in full, with the memory that caused the hold.
    Show {
        /// The held candidate's id.
        id: HeldIdArg,
    },
    /// Store the candidate as a memory.
    Admit {
        /// The held candidate's id.
        id: HeldIdArg,
        /// Retire the memory that caused the hold: this one replaces it.
        #[arg(long)]
        supersede: bool,
    },
    /// Let the candidate go.
    Discard {
        /// The held candidate's id.
        id: HeldIdArg,
    },
}

/// A held id parsed by clap.
#[derive(Debug, Clone, Copy)]
pub struct HeldIdArg(HeldId);

impl std::str::FromStr for HeldIdArg {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        text.parse()
            .map(Self)
            .map_err(|_| format!("'{text}' is not a held candidate id (expected a UUID)"))
    }
}

/// `--status`: one of levh-api's names, listed in `--help` and completions.
fn status_filter() -> impl clap::builder::TypedValueParser<Value = HeldStatusFilter> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(HeldStatusFilter::NAMES)
        .try_map(|name: String| HeldStatusFilter::parse(&name).map_err(|e| e.to_string()))
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    match command {
        Command::List { status } => {
            let list = context.run(Operation::ListHeldMemories, |levh, scope| {
                held::list(
                    levh,
                    scope,
                    HeldListArgs {
                        status: Some(status),
                    },
                )
            })?;
            if json {
                output::json(&list)?;
            } else if list.held.is_empty() {
                output::line("nothing is held");
            } else {
                let mut table = output::table(&["id", "held", "status", "similar to", "candidate"]);
                for h in &list.held {
                    table.add_row(vec![
                        h.id.clone(),
                        output::human_time_text(&h.created_at),
                        h.status.name().to_owned(),
                        h.nearest
                            .as_ref()
                            .map(|n| format!("{} ({:.2})", n.id, n.similarity))
                            .unwrap_or_else(|| "-".into()),
                        output::preview(&h.content),
                    ]);
                }
                output::print_table(&table);
            }
        }
        Command::Show { id } => {
            let view = context.run(Operation::GetHeldMemory, |levh, scope| {
                held::get(levh, scope, &id.0.to_string())
            })?;
            if json {
                output::json(&view)?;
            } else {
                print_held(&view);
                let nearest = view.nearest.as_ref().and_then(|n| {
                    context
                        .run(Operation::GetMemory, |levh, scope| {
                            memories::get(levh, scope, &n.id)
                        })
                        .ok()
                });
                if let Some(memory) = nearest {
                    output::line(format!("{:>14}  {}", "nearest now", memory.content));
                }
                if view.status == HeldStatusKind::Held {
                    output::line(format!(
                        "\ndecide: levh held admit {0} [--supersede] | levh held discard {0}",
                        view.id
                    ));
                }
            }
        }
        Command::Admit { id, supersede } => {
            let admission = context.run(Operation::AdmitHeldMemory, |levh, scope| {
                held::admit(levh, scope, id.0, supersede)
            })?;
            if json {
                output::json(&admission)?;
            } else {
                if admission.updated {
                    output::line(format!(
                        "admitted {}: memory {} now holds its content",
                        admission.held_id, admission.memory_id
                    ));
                } else {
                    output::line(format!(
                        "admitted {} as memory {}",
                        admission.held_id, admission.memory_id
                    ));
                }
                if let Some(old) = &admission.superseded {
                    output::line(format!(
                        "  it supersedes {old}, which is no longer valid from now on"
                    ));
                }
            }
        }
        Command::Discard { id } => {
            let view = context.run(Operation::DiscardHeldMemory, |levh, scope| {
                held::discard(levh, scope, id.0)
            })?;
            if json {
                output::json(&view)?;
            } else {
                output::line(format!("discarded {}", view.id));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_held(held: &HeldView) {
    let mut rows: Vec<(&str, String)> = vec![
        ("id", held.id.clone()),
        ("status", held.status.name().to_owned()),
        ("candidate", held.content.clone()),
        ("why held", held.reason.clone()),
        (
            "project",
            held.project.clone().unwrap_or_else(|| "-".into()),
        ),
        ("source", held.source.clone()),
        ("held at", output::human_time_text(&held.created_at)),
    ];
    if let Some(at) = &held.expires_at {
        rows.push(("expires", output::human_time_text(at)));
    }
    if let (Some(at), Some(by)) = (&held.decided_at, &held.decided_by) {
        rows.push((
            "decided",
            format!("{} by {by}", output::human_time_text(at)),
        ));
    }
    if let Some(target) = &held.updates {
        rows.push(("updates", target.clone()));
    }
    if let Some(memory) = &held.memory_id {
        rows.push(("memory", memory.clone()));
    }
    for (key, value) in rows {
        output::line(format!("{key:>14}  {value}"));
    }
}
