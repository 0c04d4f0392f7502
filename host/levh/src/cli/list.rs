//! `levh list`: memories newest first, with filters.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::memories;
use levh_api::requests::ListArgs;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this kind.
    #[arg(long, short)]
    kind: Option<String>,
    /// Only this source.
    #[arg(long, short)]
    source: Option<String>,
    /// Only pinned memories.
    #[arg(long)]
    pinned: bool,
    /// At most this many (1..1000, default 20).
    #[arg(long, short = 'n')]
    limit: Option<usize>,
    /// Skip this many first.
    #[arg(long)]
    offset: Option<usize>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let request = ListArgs {
        project: args.project,
        kind: args.kind,
        source: args.source,
        pinned: args.pinned.then_some(true),
        limit: args.limit,
        offset: args.offset,
    };
    let list = memories::list(&context.levh, &context.scope, request)?;
    if json {
        output::json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.memories.is_empty() {
        output::line("no memories");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["id", "created", "retention", "project", "kind", "memory"]);
    for m in &list.memories {
        table.add_row(vec![
            m.id.clone(),
            output::human_time_text(&m.created_at),
            output::retention(m),
            m.project.clone().unwrap_or_else(|| "-".into()),
            m.kind.clone(),
            output::preview(&m.content),
        ]);
    }
    output::print_table(&table);
    Ok(ExitCode::SUCCESS)
}
