//! `levh import FILE`: many memories through the gate, a batch (one transaction) at a time.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_api::import::{self, ImportItem};
use levh_api::views::{BatchView, VerdictKind};
use serde::Serialize;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to import: the JSON `GET /api/export` writes, a JSON array of memories, or
    /// JSON Lines (one `{"content": …}` a line); `-` reads standard input.
    file: String,
    /// Put every memory in this project (instead of the one each names).
    #[arg(long, short)]
    project: Option<String>,
    /// Who produced them (default `import`).
    #[arg(long, short, default_value = "import")]
    source: String,
}

/// What became of one item that was not stored as given.
#[derive(Debug, Serialize)]
struct Noted {
    location: String,
    fate: &'static str,
    reason: String,
}

/// The whole import, as `--json` prints it.
#[derive(Debug, Default, Serialize)]
struct Report {
    read: usize,
    admitted: usize,
    redacted: usize,
    held: usize,
    rejected: usize,
    failed: usize,
    batches: usize,
    /// Every item held, rejected or failed, with where it was in the input.
    not_stored: Vec<Noted>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let text = if args.file == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file))?
    };
    let items = import::parse(&text).with_context(|| format!("reading {}", args.file))?;
    // The memories own their text now; a large file need not stay in memory beside them.
    drop(text);
    let mut report = Report {
        read: items.len(),
        ..Report::default()
    };
    let mut stored: Vec<(String, levh_api::requests::StoreArgs)> = Vec::new();
    for ImportItem { location, memory } in items {
        match memory {
            Ok(mut memory) => {
                if args.project.is_some() {
                    memory.project = args.project.clone();
                }
                stored.push((location, memory));
            }
            Err(reason) => {
                report.failed += 1;
                report.not_stored.push(Noted {
                    location,
                    fate: "failed",
                    reason,
                });
            }
        }
    }
    store(context, &args.source, stored, &mut report)?;
    if json {
        output::json(&report)?;
    } else {
        output::line(format!(
            "{} read from {}: {} admitted, {} redacted, {} held for review, {} rejected, {} failed ({} batches)",
            report.read,
            args.file,
            report.admitted,
            report.redacted,
            report.held,
            report.rejected,
            report.failed,
            report.batches
        ));
        for noted in &report.not_stored {
            output::line(format!(
                "  {} {}: {}",
                noted.location, noted.fate, noted.reason
            ));
        }
        if report.held > 0 {
            output::line("  a person decides what was held: `levh held list`");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Stores the items in batches (one transaction each; the next judged while the
/// previous is written) and adds each batch's outcomes to the report.
fn store(
    context: &Context,
    source: &str,
    items: Vec<(String, levh_api::requests::StoreArgs)>,
    report: &mut Report,
) -> Result<()> {
    let mut batches = Vec::new();
    let mut locations = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let (batch_locations, memories): (Vec<String>, Vec<_>) =
            items.by_ref().take(levh_core::MAX_BATCH).unzip();
        locations.push(batch_locations);
        batches.push(levh_api::requests::StoreBatchArgs { memories });
    }
    let mut locations = locations.into_iter();
    levh_api::memories::store_batches(
        &context.levh,
        &context.scope,
        batches,
        source.to_owned(),
        |view| {
            let locations = locations.next().expect("locations per batch");
            add(report, &locations, view);
            Ok(())
        },
    )?;
    Ok(())
}

/// One batch's outcomes, added to the report under the items' locations.
fn add(report: &mut Report, locations: &[String], view: BatchView) {
    report.batches += 1;
    report.admitted += view.admitted;
    report.redacted += view.redacted;
    report.held += view.held;
    report.rejected += view.rejected;
    report.failed += view.failed;
    for item in view.results {
        let location = locations[item.index].clone();
        let noted = match (item.outcome, item.error) {
            (_, Some(error)) => Noted {
                location,
                fate: "failed",
                // The batch's own position means nothing to the person: the location does.
                reason: error
                    .split_once(": ")
                    .map_or(error.clone(), |(_, why)| why.to_owned()),
            },
            (Some(outcome), None) if outcome.verdict == VerdictKind::Review => Noted {
                location,
                fate: "held",
                reason: format!(
                    "{} (held {})",
                    outcome.reason.unwrap_or_default(),
                    outcome.held_id.unwrap_or_default()
                ),
            },
            (Some(outcome), None) if outcome.verdict == VerdictKind::Reject => Noted {
                location,
                fate: "rejected",
                reason: outcome.reason.unwrap_or_default(),
            },
            _ => continue,
        };
        report.not_stored.push(noted);
    }
}
