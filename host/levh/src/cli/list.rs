//! `levh list`: memories newest first, with filters.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
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
    /// At most this many (default 20; over 1,000 the list is read a page of 1,000 at a
    /// time, as a REST client would, up to 100,000).
    #[arg(long, short = 'n',
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    limit: Option<usize>,
    /// Skip this many first.
    #[arg(long)]
    offset: Option<usize>,
}

/// The API's largest page.
const PAGE: usize = 1_000;
/// The most `levh list` reads in pages.
const MAX_LISTED: usize = 100_000;

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let page = |limit: Option<usize>, offset: Option<usize>| ListArgs {
        project: args.project.clone(),
        kind: args.kind.clone(),
        source: args.source.clone(),
        pinned: args.pinned.then_some(true),
        limit,
        offset,
    };
    let list = match args.limit {
        Some(limit) if limit > PAGE && limit <= MAX_LISTED => {
            // Pages of the one operation, so the shape and every check stay the API's.
            let mut list = context.run(Operation::ListMemories, |levh, scope| {
                memories::list(levh, scope, page(Some(PAGE), args.offset))
            })?;
            let mut offset = args.offset.unwrap_or(0) + PAGE;
            while list.memories.len() < limit
                && list.memories.len() + args.offset.unwrap_or(0) == offset
            {
                let want = (limit - list.memories.len()).min(PAGE);
                let next = context.run(Operation::ListMemories, |levh, scope| {
                    memories::list(levh, scope, page(Some(want), Some(offset)))
                })?;
                if next.memories.is_empty() {
                    break;
                }
                offset += next.memories.len();
                list.memories.extend(next.memories);
            }
            list
        }
        limit => context.run(Operation::ListMemories, |levh, scope| {
            memories::list(levh, scope, page(limit, args.offset))
        })?,
    };
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
