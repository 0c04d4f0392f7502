//! `levh pull FILE`: memories a peer shared with this instance (`levh share`), checked
//! (who signed it, that no byte changed, that it is for this instance) and then stored
//! through this instance's own gate, each keeping where it came from.

use std::io::Read as _;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;
use levh_api::share::{PullArgs, PullOutcome, PulledView, ShareHome};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle file (`-` reads standard input).
    from: String,
    /// Put every memory in this project (instead of the one each had at the peer).
    #[arg(long, short)]
    project: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let bytes = read_bundle(&args.from)?;
    let home = ShareHome::new(&context.home);
    let identity = home.identity(&super::peer::default_name(), context.now())?;
    let pull = PullArgs {
        project: args.project,
    };
    let view = context
        .run(Operation::StoreMemories, |levh, scope| {
            levh_api::share::pull(levh, scope, &home, &identity, &bytes, &pull)
        })
        .with_context(|| format!("pulling {}", args.from))?;
    if json {
        output::json(&view)?;
    } else {
        print(&view, &args.from);
    }
    Ok(ExitCode::SUCCESS)
}

/// The bundle's bytes, refused past the largest a bundle may be before it is all read.
fn read_bundle(from: &str) -> Result<Vec<u8>> {
    let limit = levh_api::share::MAX_BUNDLE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if from == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .context("reading the bundle from standard input")?;
    } else {
        let file = std::fs::File::open(from).with_context(|| format!("reading {from}"))?;
        file.take(limit)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {from}"))?;
    }
    if bytes.len() as u64 >= limit {
        bail!(
            "{from} is larger than a bundle may be ({} MiB): nothing was imported",
            levh_api::share::MAX_BUNDLE_BYTES >> 20
        );
    }
    Ok(bytes)
}

fn print(view: &PulledView, from: &str) {
    output::line(format!(
        "{} memories from peer {} ({}, shared {}{}) in {from}: {} imported, {} redacted, {} held for review, {} duplicate, {} already pulled, {} refused",
        view.count,
        view.from,
        view.from_name,
        output::human_time_text(&view.shared_at),
        if view.encrypted { ", encrypted" } else { ", not encrypted" },
        view.imported,
        view.redacted,
        view.held,
        view.duplicate,
        view.already_pulled,
        view.refused,
    ));
    for item in &view.items {
        let fate = match item.outcome {
            PullOutcome::Imported => continue,
            PullOutcome::Redacted => "redacted",
            PullOutcome::Held => "held",
            PullOutcome::Duplicate => "duplicate",
            PullOutcome::AlreadyPulled => "already pulled",
            PullOutcome::Refused => "refused",
        };
        output::line(format!(
            "  {} {fate}: {}{}",
            item.memory_id,
            item.reason.as_deref().unwrap_or(""),
            item.id
                .as_deref()
                .map(|id| format!(" ({id})"))
                .unwrap_or_default()
        ));
    }
    if view.held > 0 {
        output::line("  a person decides what was held: `levh held list`");
    }
}
