//! `levh list`: memories newest first, with filters.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::memories;
use levh_api::requests::{ListArgs, ListSort};
use levh_api::views::MemoryList;

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
    /// Only memories fading now.
    #[arg(long)]
    fading: bool,
    /// Forgotten memories (kept until purged) instead of live ones.
    #[arg(long)]
    forgotten: bool,
    /// Only memories recorded at or after this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only memories recorded before this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only memories this person, organization or other entity appears in (id, name or
    /// email address).
    #[arg(long, value_name = "ENTITY")]
    about: Option<String>,
    /// The order: created (newest first), importance, recalled (most recent first) or
    /// retention (weakest first).
    #[arg(long, value_parser = ListSort::NAMES)]
    sort: Option<String>,
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

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let sort = args.sort.as_deref().map(ListSort::parse).transpose()?;
    let page = |limit: Option<usize>, offset: Option<usize>, after: Option<String>| ListArgs {
        project: args.project.clone(),
        kind: args.kind.clone(),
        source: args.source.clone(),
        pinned: args.pinned.then_some(true),
        limit,
        offset,
        after,
        sort,
        fading: args.fading.then_some(true),
        forgotten: args.forgotten.then_some(true),
        created_after: args.since.clone(),
        created_before: args.until.clone(),
        entity: args.about.clone(),
    };
    let list = match args.limit {
        Some(limit) if limit > PAGE => {
            // Pages of the one operation, so the shape and every check stay the API's;
            // a page shorter than asked is the end of the list.
            let start = args.offset.unwrap_or(0);
            let mut list = MemoryList {
                memories: Vec::new(),
                total: None,
            };
            while list.memories.len() < limit {
                let want = (limit - list.memories.len()).min(PAGE);
                // The first page by offset, the rest by keyset after the last one read.
                let after = list.memories.last().map(|m| m.id.clone());
                let offset = after.is_none().then_some(start);
                let next = context.run(Operation::ListMemories, |levh, scope| {
                    memories::list(levh, scope, page(Some(want), offset, after))
                })?;
                let short = next.memories.len() < want;
                list.total = list.total.or(next.total);
                list.memories.extend(next.memories);
                if short {
                    break;
                }
            }
            list
        }
        limit => context.run(Operation::ListMemories, |levh, scope| {
            memories::list(levh, scope, page(limit, args.offset, None))
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
    if let Some(total) = list.total.filter(|&t| t > list.memories.len() as u64) {
        output::line(format!("{} of {total} shown", list.memories.len()));
    }
    Ok(ExitCode::SUCCESS)
}
