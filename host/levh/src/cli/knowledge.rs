//! `levh decisions` and `levh commitments`: what the memories say was decided and promised
//! (levh-api's operations, the same ones REST and MCP serve).

use std::process::ExitCode;

use anyhow::Result;
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
        }
    }
}

/// `levh decisions`.
pub fn decisions(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let list = levh_api::knowledge::decisions(&context.levh, &context.scope, args.request())?;
    if json {
        output::json(&list)?;
    } else if list.decisions.is_empty() {
        output::line(
            "no decision found (sentences such as \"we decided to…\" or \"karar verdik\")",
        );
    } else {
        let mut table = output::table(&["when", "decision", "who", "memory"]);
        for d in list.decisions {
            table.add_row(vec![d.at, d.sentence, d.people.join(", "), d.memory_id]);
        }
        output::print_table(&table);
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh commitments`.
pub fn commitments(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let list = levh_api::knowledge::commitments(&context.levh, &context.scope, args.request())?;
    if json {
        output::json(&list)?;
    } else if list.commitments.is_empty() {
        output::line(
            "no commitment found (sentences such as \"I'll send it by Friday\" or \"yarın göndereceğim\")",
        );
    } else {
        let mut table = output::table(&["due", "commitment", "written", "memory"]);
        for c in list.commitments {
            let due = match (c.due, c.overdue) {
                (Some(due), true) => format!("{due} (overdue)"),
                (Some(due), false) => due,
                (None, _) => "-".into(),
            };
            table.add_row(vec![due, c.sentence, c.written_at, c.memory_id]);
        }
        output::print_table(&table);
        output::line(format!("due dates in {}", list.time_zone));
    }
    Ok(ExitCode::SUCCESS)
}
