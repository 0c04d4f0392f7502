//! `levh ask`, `levh briefing` and `levh meeting-prep`: the assistant's operations of
//! levh-api (the same ones REST and MCP serve), printed for a person.

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use levh_api::Operation;
use levh_api::requests::{AskArgs, BriefingArgs, MeetingPrepArgs};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct AskCli {
    /// The question, e.g. "what did we decide about the release date?".
    question: String,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Tokens of evidence at most.
    #[arg(long, default_value_t = levh_api::ask::DEFAULT_MAX_TOKENS)]
    max_tokens: usize,
    /// Memories of evidence at most.
    #[arg(long, short = 'n', default_value_t = levh_api::ask::DEFAULT_LIMIT)]
    limit: usize,
}

#[derive(Debug, clap::Args)]
pub struct BriefingCli {
    /// The day, `YYYY-MM-DD` in your zone (LEVH_TZ); default today.
    #[arg(long)]
    date: Option<String>,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct MeetingPrepCli {
    /// The event: its memory id or source id (as `levh timeline --json` shows it).
    event: Option<String>,
    /// The next event from now (the default without EVENT).
    #[arg(long, conflicts_with = "event")]
    next: bool,
}

/// `levh ask`.
pub fn ask(context: &Context, args: AskCli, json: bool) -> Result<ExitCode> {
    let model = levh_embed::chat::ChatModel::from_env().map_err(|e| anyhow!(e))?;
    let answer = context.run(Operation::Ask, |levh, scope| {
        levh_api::ask::ask(
            levh,
            scope,
            AskArgs {
                question: args.question,
                project: args.project,
                max_tokens: Some(args.max_tokens),
                limit: Some(args.limit),
            },
            model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
        )
    })?;
    if json {
        output::json(&answer)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(&answer.answer);
    if answer.mode == "model" {
        output::line("");
        for c in &answer.citations {
            output::line(format!(
                "[{}] {} {} · {}",
                c.memory_id, c.day, c.kind, c.source
            ));
        }
        if !answer.dropped_citations.is_empty() {
            output::line(format!(
                "(removed citations of memories not in the evidence: {})",
                answer.dropped_citations.join(", ")
            ));
        }
    }
    for warning in &answer.warnings {
        output::line(format!("warning: {warning}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh briefing`.
pub fn briefing(context: &Context, args: BriefingCli, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::Briefing, |levh, scope| {
        levh_api::briefing::briefing(
            levh,
            scope,
            BriefingArgs {
                date: args.date,
                project: args.project,
            },
        )
    })?;
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(format!("Briefing for {} ({})", view.date, view.time_zone));
    section(
        "Events",
        view.events.iter().map(|e| {
            let place = e
                .location
                .as_deref()
                .map(|l| format!(" — {l}"))
                .unwrap_or_default();
            format!(
                "{} {}{place} ({})",
                e.local_time,
                e.title,
                e.attendees.join(", ")
            )
        }),
    );
    section(
        "Due (yours)",
        view.due.iter().map(|c| {
            format!(
                "{} {}{}",
                c.due.as_deref().unwrap_or(""),
                c.sentence,
                if c.overdue { " (overdue)" } else { "" }
            )
        }),
    );
    section(
        "Owed to you",
        view.owed_to_me.iter().map(|c| {
            format!(
                "{} {}: {}",
                c.due.as_deref().unwrap_or(""),
                c.by.as_deref().unwrap_or("someone"),
                c.sentence
            )
        }),
    );
    section(
        "Decisions (last 7 days)",
        view.decisions
            .iter()
            .map(|d| format!("{} {}", d.at.get(..10).unwrap_or(&d.at), d.sentence)),
    );
    section(
        "People today",
        view.people.iter().map(|p| match &p.last_discussed {
            Some(last) => format!(
                "{} — last: {} ({})",
                p.name,
                last.line,
                last.at.get(..10).unwrap_or(&last.at)
            ),
            None => p.name.clone(),
        }),
    );
    section(
        "Important and fading",
        view.fading
            .iter()
            .map(|m| format!("{} [{}]", m.line, m.memory_id)),
    );
    Ok(ExitCode::SUCCESS)
}

/// `levh meeting-prep`.
pub fn meeting_prep(context: &Context, args: MeetingPrepCli, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::MeetingPrep, |levh, scope| {
        levh_api::briefing::meeting_prep(
            levh,
            scope,
            MeetingPrepArgs {
                event: args.event.filter(|_| !args.next),
            },
        )
    })?;
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    let e = &view.event;
    output::line(format!(
        "{} — {} {}",
        e.title,
        e.start,
        e.location.as_deref().unwrap_or("")
    ));
    for a in &view.attendees {
        section(
            &a.name,
            a.last_discussed
                .iter()
                .map(|m| format!("{} {}", m.at.get(..10).unwrap_or(&m.at), m.line))
                .chain(
                    a.commitments
                        .iter()
                        .map(|c| format!("open: {}", c.sentence)),
                ),
        );
    }
    section(
        "Decisions",
        view.decisions
            .iter()
            .map(|d| format!("{} {}", d.at.get(..10).unwrap_or(&d.at), d.sentence)),
    );
    section("Documents", view.documents.iter().map(|m| m.line.clone()));
    section(
        "Earlier meetings",
        view.previous
            .iter()
            .map(|m| m.at.get(..10).unwrap_or(&m.at).to_owned()),
    );
    Ok(ExitCode::SUCCESS)
}

fn section(title: &str, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    output::line(format!("\n{title}"));
    if lines.is_empty() {
        output::line("  (none)");
    }
    for line in lines {
        output::line(format!("  - {line}"));
    }
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConflictsCli {
    #[command(subcommand)]
    command: Option<ConflictsCommand>,
    /// List the resolved ones too.
    #[arg(long)]
    all: bool,
}

#[derive(Debug, clap::Subcommand)]
enum ConflictsCommand {
    /// Look for pairs that may disagree among the newest 5,000 memories.
    Detect {
        /// Only this project.
        #[arg(long, short)]
        project: Option<String>,
    },
    /// Resolve one: keep both, not a conflict, or supersede one (retired, kept for
    /// `--as-of`).
    #[command(group(clap::ArgGroup::new("how").required(true).args(["keep_both", "not_a_conflict", "supersede"])))]
    Resolve {
        /// The conflict's id, from `levh conflicts`.
        id: String,
        /// Both stay valid.
        #[arg(long)]
        keep_both: bool,
        /// A false alarm: never listed again.
        #[arg(long)]
        not_a_conflict: bool,
        /// Retire this memory of the pair (the other supersedes it).
        #[arg(long, value_name = "MEMORY_ID")]
        supersede: Option<String>,
    },
}

/// `levh conflicts`.
pub fn conflicts(context: &Context, args: ConflictsCli, json: bool) -> Result<ExitCode> {
    match args.command {
        None => {
            let list = context.run(Operation::ListConflicts, |levh, scope| {
                levh_api::conflicts::list(
                    levh,
                    scope,
                    levh_api::requests::ConflictListArgs {
                        include_resolved: Some(args.all),
                        limit: None,
                    },
                )
            })?;
            if json {
                output::json(&list)?;
            } else if list.conflicts.is_empty() {
                output::line("no open conflict (`levh conflicts detect` looks for them)");
            } else {
                for c in &list.conflicts {
                    output::line(format!(
                        "{} ({}{})\n  older {}: {}\n  newer {}: {}",
                        c.id,
                        c.kind,
                        c.resolution
                            .as_deref()
                            .map(|r| format!(", {r}"))
                            .unwrap_or_default(),
                        c.older,
                        c.older_content,
                        c.newer,
                        c.newer_content
                    ));
                }
            }
        }
        Some(ConflictsCommand::Detect { project }) => {
            let view = context.run(Operation::DetectConflicts, |levh, scope| {
                levh_api::conflicts::detect(
                    levh,
                    scope,
                    levh_api::requests::ConflictDetectArgs { project },
                )
            })?;
            if json {
                output::json(&view)?;
            } else {
                output::line(format!(
                    "read {} memories, compared {} pairs: {} new conflict candidates, {} open",
                    view.memories, view.compared, view.found, view.open
                ));
            }
        }
        Some(ConflictsCommand::Resolve {
            id,
            keep_both,
            not_a_conflict: _,
            supersede,
        }) => {
            let resolution = if keep_both {
                "keep_both"
            } else if supersede.is_some() {
                "supersede"
            } else {
                "not_a_conflict"
            };
            let view = context.run(Operation::ResolveConflict, |levh, scope| {
                levh_api::conflicts::resolve(
                    levh,
                    scope,
                    &id,
                    levh_api::requests::ResolveConflictBody {
                        resolution: resolution.into(),
                        retire: supersede,
                    },
                )
            })?;
            if json {
                output::json(&view)?;
            } else {
                output::line(format!(
                    "conflict {} resolved: {}{}",
                    view.id,
                    resolution,
                    view.superseded
                        .as_deref()
                        .map(|m| format!(" ({m} retired)"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
