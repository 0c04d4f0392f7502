//! `levh list`: memories newest first, with filters.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::{Kind, MemoryFilter, Page, model};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this kind.
    #[arg(long, short, value_parser = |s: &str| Kind::new(s).map_err(|e| e.to_string()))]
    kind: Option<Kind>,
    /// Only this source.
    #[arg(long, short)]
    source: Option<String>,
    /// Only pinned memories.
    #[arg(long)]
    pinned: bool,
    /// At most this many (1..=10000).
    #[arg(long, short = 'n', default_value_t = 50,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    limit: usize,
    /// Skip this many first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let filter = MemoryFilter {
        project: args.project,
        kind: args.kind,
        source: args.source,
        pinned: args.pinned.then_some(true),
        ..MemoryFilter::default()
    }
    .read_at(None, context.levh.now());
    let memories = context.levh.list(
        &context.scope,
        filter,
        Page {
            limit: args.limit,
            offset: args.offset,
        },
    )?;
    let (config, now) = (&context.levh.config().model, context.levh.now());
    if json {
        let views: Vec<_> = memories
            .iter()
            .map(|m| output::memory_view(m, config, now))
            .collect();
        output::json(&views)?;
        return Ok(ExitCode::SUCCESS);
    }
    if memories.is_empty() {
        output::line("no memories");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["id", "created", "retention", "project", "kind", "memory"]);
    for m in &memories {
        table.add_row(vec![
            m.id.to_string(),
            output::human_time(m.state.created_at),
            if m.state.pinned {
                "pinned".into()
            } else {
                output::percent(model::retention(&m.state, now))
            },
            m.project.clone().unwrap_or_else(|| "-".into()),
            m.kind.to_string(),
            output::preview(&m.content),
        ]);
    }
    output::print_table(&table);
    Ok(ExitCode::SUCCESS)
}
