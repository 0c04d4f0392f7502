//! `levh report recalls|usage|sessions`: what agents asked and did with the answers, what
//! each token and client stored and recalled per day, which MCP sessions are connected —
//! from the event log (see `levh_api::reports`).

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::reports::{self, ReportArgs};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Each recall, search and ask: what it returned, what was then used or marked
    /// unhelpful, and the recalls that found nothing (query text only with
    /// LEVH_LOG_QUERIES=1).
    Recalls {
        #[command(flatten)]
        filter: Filter,
        /// At most this many recalls listed (1..1000; the totals count all).
        #[arg(long, short = 'n')]
        limit: Option<usize>,
    },
    /// Per day, token and client: memories and bytes stored, recalls, and the memories,
    /// tokens and bytes they returned.
    Usage {
        #[command(flatten)]
        filter: Filter,
    },
    /// The MCP sessions connected now (and those ended in the last day).
    Sessions,
}

#[derive(Debug, clap::Args)]
struct Filter {
    /// From this time (RFC 3339 or a date; default 7 days ago).
    #[arg(long)]
    since: Option<String>,
    /// Only what this token did (its id, as `levh token list` shows).
    #[arg(long)]
    token: Option<String>,
    /// Only what this client did (an MCP client's name, ...).
    #[arg(long)]
    client: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let store = context.server_store();
    match args.command {
        Command::Recalls { filter, limit } => {
            let view = context.run(Operation::ReportRecalls, |levh, scope| {
                reports::recalls(levh, store, scope, args_of(filter, limit))
            })?;
            if json {
                output::json(&view)?;
                return Ok(ExitCode::SUCCESS);
            }
            let t = &view.totals;
            output::line(format!(
                "since {}: {} recalls, {} found nothing; {} memories returned ({} tokens), {} then used, {} marked unhelpful",
                output::human_time_text(&view.since),
                t.recalls,
                t.found_nothing,
                t.returned,
                t.tokens,
                t.used,
                t.unhelpful
            ));
            if !view.queries_logged {
                output::line(
                    "queries are not logged (the log stays content-free); set LEVH_LOG_QUERIES=1 to record them",
                );
            }
            if view.cut_short {
                output::warn(
                    "older events of that time were left unread (the report reads the newest 200,000)",
                );
            }
            if !view.recalls.is_empty() {
                let mut table = output::table(&[
                    "when",
                    "how",
                    "client",
                    "project",
                    "query",
                    "returned",
                    "used",
                    "unhelpful",
                ]);
                for r in &view.recalls {
                    table.add_row(vec![
                        output::human_time_text(&r.at),
                        format!("{} {}", r.surface, r.operation),
                        r.client.clone().unwrap_or_else(|| "-".into()),
                        r.project.clone().unwrap_or_else(|| "-".into()),
                        r.query
                            .as_deref()
                            .map_or_else(|| format!("({} words)", r.words), output::preview),
                        r.returned.len().to_string(),
                        r.used.len().to_string(),
                        r.unhelpful.len().to_string(),
                    ]);
                }
                output::print_table(&table);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Usage { filter } => {
            let view = context.run(Operation::ReportUsage, |levh, scope| {
                reports::usage(levh, store, scope, args_of(filter, None))
            })?;
            if json {
                output::json(&view)?;
                return Ok(ExitCode::SUCCESS);
            }
            if view.days.is_empty() {
                output::line(format!(
                    "nothing stored or recalled since {}",
                    output::human_time_text(&view.since)
                ));
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = output::table(&[
                "day", "token", "surface", "client", "stored", "bytes", "updated", "recalls",
                "returned", "tokens", "bytes",
            ]);
            let row =
                |day: &str, token: &str, surface: &str, client: &str, c: &reports::UsageCounts| {
                    vec![
                        day.to_owned(),
                        token.to_owned(),
                        surface.to_owned(),
                        client.to_owned(),
                        c.stored.to_string(),
                        c.stored_bytes.to_string(),
                        c.updated.to_string(),
                        c.recalls.to_string(),
                        c.returned.to_string(),
                        c.returned_tokens.to_string(),
                        c.returned_bytes.to_string(),
                    ]
                };
            for d in &view.days {
                table.add_row(row(
                    &d.day,
                    d.token.as_deref().unwrap_or("-"),
                    &d.surface,
                    d.client.as_deref().unwrap_or("-"),
                    &d.counts,
                ));
            }
            table.add_row(row("total", "", "", "", &view.totals));
            output::print_table(&table);
            if view.cut_short {
                output::warn(
                    "older events of that time were left unread (the report reads the newest 200,000)",
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Sessions => {
            let view = context.run(Operation::ListPresence, |levh, scope| {
                reports::presence(levh, store, scope)
            })?;
            if json {
                output::json(&view)?;
                return Ok(ExitCode::SUCCESS);
            }
            if view.sessions.is_empty() {
                output::line("no MCP session in the last day");
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = output::table(&[
                "client",
                "transport",
                "project",
                "state",
                "started",
                "last active",
                "calls",
            ]);
            for s in &view.sessions {
                table.add_row(vec![
                    s.client.clone().unwrap_or_else(|| "-".into()),
                    s.transport.clone(),
                    s.project.clone().unwrap_or_else(|| "-".into()),
                    match &s.ended_at {
                        None => "connected".to_owned(),
                        Some(at) => format!("ended {}", output::human_time_text(at)),
                    },
                    output::human_time_text(&s.started_at),
                    output::human_time_text(&s.last_seen_at),
                    s.calls.to_string(),
                ]);
            }
            output::print_table(&table);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn args_of(filter: Filter, limit: Option<usize>) -> ReportArgs {
    ReportArgs {
        since: filter.since,
        token: filter.token,
        client: filter.client,
        limit,
    }
}
