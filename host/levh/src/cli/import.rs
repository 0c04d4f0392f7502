//! `levh import FILE`: many memories through the gate, a batch (one transaction) at a time.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_api::Operation;
use levh_api::import::{self, ImportItem};
use levh_api::views::{BatchView, VerdictKind};
use serde::Serialize;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to import: the JSON `GET /api/export` writes, a JSON array of memories, JSON
    /// Lines (one `{"content": …}` a line), the Python levh's `export-full` or the MCP
    /// memory server's `memory.jsonl`; `-` reads standard input.
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

/// At most this many items not stored are listed one by one (the rest are counted): the
/// report of a million bad lines must not take the memory the import saves.
const LISTED: usize = 1_000;

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
    /// Items held, rejected or failed, with where each was in the input (the first
    /// [`LISTED`]).
    not_stored: Vec<Noted>,
    /// How many more were not stored than `not_stored` lists.
    not_listed: usize,
    /// Where the input broke, if it did: the memories before it were imported.
    stopped: Option<String>,
}

impl Report {
    fn note(&mut self, noted: Noted) {
        if self.not_stored.len() < LISTED {
            self.not_stored.push(noted);
        } else {
            self.not_listed += 1;
        }
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    // Read as it streams: at most one memory's text and a few batches are held at once,
    // whatever the file's size (a 1 GB line, a million lines).
    let reader: Box<dyn std::io::BufRead> = if args.file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file =
            std::fs::File::open(&args.file).with_context(|| format!("reading {}", args.file))?;
        Box::new(std::io::BufReader::with_capacity(1 << 16, file))
    };
    let items = import::read(reader).with_context(|| format!("reading {}", args.file))?;
    let report = RefCell::new(Report::default());
    let locations = RefCell::new(VecDeque::new());
    let batches = batches(items, args.project.as_deref(), &report, &locations);
    context.run(Operation::StoreMemories, |levh, scope| {
        levh_api::memories::store_batches(levh, scope, batches, args.source.clone(), |view| {
            let batch_locations = locations
                .borrow_mut()
                .pop_front()
                .expect("locations per batch");
            add(&mut report.borrow_mut(), &batch_locations, view);
            Ok(())
        })
    })?;
    let report = report.into_inner();
    if json {
        output::json(&report)?;
    } else {
        print(&report, &args.file);
    }
    Ok(if report.stopped.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print(report: &Report, file: &str) {
    output::line(format!(
        "{} read from {file}: {} admitted, {} redacted, {} held for review, {} rejected, {} failed ({} batches)",
        report.read,
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
    if report.not_listed > 0 {
        output::line(format!("  … and {} more not stored", report.not_listed));
    }
    if let Some(stopped) = &report.stopped {
        output::line(format!(
            "  stopped: {stopped}; the memories before it were imported, nothing after it"
        ));
    }
    if report.held > 0 {
        output::line("  a person decides what was held: `levh held list`");
    }
}

/// The items cut into batches as the store asks for them; an item that could not be read
/// goes to the report, and a break in the input ends the batches (noted in the report).
fn batches<'a>(
    items: import::Items<'a>,
    project: Option<&'a str>,
    report: &'a RefCell<Report>,
    locations: &'a RefCell<VecDeque<Vec<String>>>,
) -> impl Iterator<Item = levh_api::requests::StoreBatchArgs> + 'a {
    let mut items = items.fuse();
    std::iter::from_fn(move || {
        let mut batch_locations = Vec::new();
        let mut memories = Vec::new();
        while memories.len() < levh_core::MAX_BATCH {
            let Some(item) = items.next() else { break };
            let mut report = report.borrow_mut();
            match item {
                Ok(ImportItem { location, memory }) => {
                    report.read += 1;
                    match memory {
                        Ok(mut memory) => {
                            if let Some(project) = project {
                                memory.project = Some(project.to_owned());
                            }
                            batch_locations.push(location);
                            memories.push(memory);
                        }
                        Err(reason) => {
                            report.failed += 1;
                            report.note(Noted {
                                location,
                                fate: "failed",
                                reason,
                            });
                        }
                    }
                }
                Err(error) => report.stopped = Some(error.to_string()),
            }
        }
        if memories.is_empty() {
            return None;
        }
        locations.borrow_mut().push_back(batch_locations);
        Some(levh_api::requests::StoreBatchArgs { memories })
    })
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
        report.note(noted);
    }
}
