//! `levh fading`: memories whose retention dropped below the fading threshold.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::memories;
use levh_api::requests::FadingArgs;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many, weakest first (default 20).
    #[arg(long, short = 'n')]
    limit: Option<usize>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let request = FadingArgs {
        project: args.project,
        limit: args.limit,
    };
    let fading = context.run(Operation::ListFadingMemories, |levh, scope| {
        memories::fading(levh, scope, request)
    })?;
    if json {
        output::json(&fading)?;
        return Ok(ExitCode::SUCCESS);
    }
    if fading.memories.is_empty() {
        output::line(format!(
            "nothing is fading (retention below {})",
            output::percent(context.fading_threshold())
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["id", "retention", "last recalled", "project", "memory"]);
    for m in &fading.memories {
        table.add_row(vec![
            m.id.clone(),
            output::percent(m.retention),
            m.last_recalled_at
                .as_deref()
                .map_or_else(|| "never".into(), output::human_time_text),
            m.project.clone().unwrap_or_else(|| "-".into()),
            output::preview(&m.content),
        ]);
    }
    output::print_table(&table);
    output::line("recall or `levh reinforce ID` keeps one; `levh forget ID` lets it go");
    Ok(ExitCode::SUCCESS)
}
