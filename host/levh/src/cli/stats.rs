//! `levh stats`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let stats = context.run(Operation::GetMemoryStats, |levh, scope| {
        levh_api::workspace::stats(levh, scope, args.project)
    })?;
    if json {
        output::json(&stats)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(format!("workspace      {}", context.scope.workspace));
    output::line(format!(
        "memories       {} ({} pinned, {} fading)",
        stats.total, stats.pinned, stats.fading
    ));
    output::line(format!(
        "avg retention  {}",
        output::percent(stats.average_retention)
    ));
    output::line(format!("recalls        {}", stats.recalls));
    output::line(format!("embedder       {}", stats.embedder));
    for (title, counts) in [
        ("projects", &stats.by_project),
        ("sources", &stats.by_source),
        ("kinds", &stats.by_kind),
    ] {
        if counts.is_empty() {
            continue;
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        output::line(format!("{title:<14} {}", parts.join(", ")));
    }
    Ok(ExitCode::SUCCESS)
}
