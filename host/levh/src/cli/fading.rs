//! `levh fading`: memories whose retention dropped below the fading threshold.

use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many, weakest first.
    #[arg(long, short = 'n', default_value_t = 50)]
    limit: usize,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let fading = context
        .levh
        .fading(&context.scope, args.project, args.limit)?;
    let (config, now) = (&context.levh.config().model, context.levh.now());
    if json {
        let views: Vec<_> = fading
            .iter()
            .map(|f| output::memory_view(&f.memory, config, now))
            .collect();
        output::json(&json!(views))?;
        return Ok(ExitCode::SUCCESS);
    }
    if fading.is_empty() {
        output::line(format!(
            "nothing is fading (retention below {})",
            output::percent(config.fading_threshold)
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["id", "retention", "last recalled", "project", "memory"]);
    for f in &fading {
        let m = &f.memory;
        table.add_row(vec![
            m.id.to_string(),
            output::percent(f.retention),
            m.state
                .last_recalled_at
                .map(output::human_time)
                .unwrap_or_else(|| "never".into()),
            m.project.clone().unwrap_or_else(|| "-".into()),
            output::preview(&m.content),
        ]);
    }
    output::print_table(&table);
    output::line("recall or `levh reinforce ID` keeps one; `levh forget ID` lets it go");
    Ok(ExitCode::SUCCESS)
}
