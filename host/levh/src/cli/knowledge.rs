//! `levh decisions` and `levh commitments`: what the memories say was decided and promised
//! (levh-api's operations, the same ones REST and MCP serve).

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::requests::KnowledgeArgs;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only memories from this time on (RFC 3339 or a date, world time).
    #[arg(long)]
    from: Option<String>,
    /// Only memories before this time.
    #[arg(long)]
    to: Option<String>,
    /// At most this many.
    #[arg(long, short = 'n', default_value_t = levh_api::knowledge::DEFAULT_LIMIT)]
    limit: usize,
}

impl Args {
    fn request(self) -> KnowledgeArgs {
        KnowledgeArgs {
            project: self.project,
            from: self.from,
            to: self.to,
            limit: Some(self.limit),
            include_done: None,
        }
    }
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CommitmentsArgs {
    #[command(subcommand)]
    command: Option<CommitmentsCommand>,
    #[command(flatten)]
    list: Args,
    /// List the ones marked done (by you, or by a later memory saying so) too.
    #[arg(long)]
    include_done: bool,
}

#[derive(Debug, clap::Subcommand)]
enum CommitmentsCommand {
    /// Mark a commitment kept: it leaves the open list.
    Done {
        /// The commitment's id, from `levh commitments`.
        id: String,
    },
}

/// `levh decisions`.
pub fn decisions(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let list = context.run(Operation::ListDecisions, |levh, scope| {
        levh_api::knowledge::decisions(levh, scope, args.request())
    })?;
    if json {
        output::json(&list)?;
    } else if list.decisions.is_empty() {
        output::line(
            "no decision found (sentences such as \"we decided to…\" or \"karar verdik\")",
        );
    } else {
        let zone = context.user_time_zone()?;
        let mut table = output::table(&["when", "decision", "who", "memory"]);
        for d in list.decisions {
            table.add_row(vec![
                local_time(&d.at, &zone),
                d.sentence,
                d.people.join(", "),
                d.memory_id,
            ]);
        }
        output::print_table(&table);
        output::line(format!("times in {}", zone_name(&zone)));
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh commitments [done ID]`.
pub fn commitments(context: &Context, args: CommitmentsArgs, json: bool) -> Result<ExitCode> {
    if let Some(CommitmentsCommand::Done { id }) = args.command {
        let done = context.run(Operation::CompleteCommitment, |levh, scope| {
            levh_api::knowledge::complete(levh, scope, &id)
        })?;
        if json {
            output::json(&done)?;
        } else {
            output::line(format!("done: {} ({})", done.sentence, done.id));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut request = args.list.request();
    request.include_done = Some(args.include_done);
    let list = context.run(Operation::ListCommitments, |levh, scope| {
        levh_api::knowledge::commitments(levh, scope, request)
    })?;
    if json {
        output::json(&list)?;
    } else if list.commitments.is_empty() {
        output::line(
            "no commitment found (sentences such as \"I'll send it by Friday\" or \"yarın göndereceğim\")",
        );
    } else {
        let zone = context.user_time_zone()?;
        let mut table = output::table(&["due", "commitment", "by", "written", "id"]);
        for c in list.commitments {
            let due = match (c.due, c.overdue, c.done) {
                (_, _, true) => "done".into(),
                (Some(due), true, _) => format!("{due} (overdue)"),
                (Some(due), false, _) => due,
                (None, ..) => "-".into(),
            };
            table.add_row(vec![
                due,
                c.sentence,
                c.by.unwrap_or_else(|| "you".into()),
                local_time(&c.written_at, &zone),
                c.id,
            ]);
        }
        output::print_table(&table);
        output::line(format!("due dates and times in {}", list.time_zone));
    }
    Ok(ExitCode::SUCCESS)
}

/// An instant of a view (RFC 3339) as a person reads it: a date and time in their zone.
/// `--json` keeps the instant itself.
fn local_time(at: &str, zone: &jiff::tz::TimeZone) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(at) => at
            .to_zoned(zone.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => at.to_owned(),
    }
}

fn zone_name(zone: &jiff::tz::TimeZone) -> String {
    zone.iana_name().unwrap_or("the system's zone").to_owned()
}
