//! `levh review`: the fading queue as a flow. In a terminal (or with `--interactive`) it
//! shows one memory at a time and asks for a decision; otherwise it lists the queue (with
//! `--json`, for scripts). `levh review ID --keep|--reinforce|…` decides one memory.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::requests::{ReviewBody, ReviewQueueArgs};
use levh_api::views::{ReviewItemView, ReviewView};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("decision").args(["keep", "reinforce", "weaken", "pin", "snooze", "forget"])))]
pub struct Args {
    /// Decide this memory (with one of the decisions below) instead of going through the
    /// queue.
    #[arg(requires = "decision")]
    id: Option<String>,
    /// Still right: show it again after a growing interval (1, 2, 4, 8… days).
    #[arg(long)]
    keep: bool,
    /// Reinforce it as if recalled.
    #[arg(long)]
    reinforce: bool,
    /// Weaken it: it fades sooner.
    #[arg(long)]
    weaken: bool,
    /// Pin it: it never fades.
    #[arg(long)]
    pin: bool,
    /// Put it off for this many days.
    #[arg(long, value_name = "DAYS")]
    snooze: Option<u32>,
    /// Retire it from every read (kept for history until purged).
    #[arg(long)]
    forget: bool,
    /// Only this project's memories.
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many (default 20).
    #[arg(long, short = 'n')]
    limit: Option<usize>,
    /// Ask for each decision even when standard input is not a terminal (one answer a
    /// line: k, r, w, p, s DAYS, f, n to skip, q to stop).
    #[arg(long, conflicts_with = "decision")]
    interactive: bool,
}

impl Args {
    fn decision(&self) -> Option<ReviewBody> {
        let named = |decision: &str| ReviewBody {
            decision: decision.to_owned(),
            days: None,
        };
        if self.keep {
            Some(named("keep"))
        } else if self.reinforce {
            Some(named("reinforce"))
        } else if self.weaken {
            Some(named("weaken"))
        } else if self.pin {
            Some(named("pin"))
        } else if self.forget {
            Some(named("forget"))
        } else {
            self.snooze.map(|days| ReviewBody {
                decision: "snooze".into(),
                days: Some(days),
            })
        }
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if let (Some(id), Some(body)) = (args.id.as_deref(), args.decision()) {
        let view = decide(context, id, body)?;
        if json {
            output::json(&view)?;
        } else {
            output::line(said(&view));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let queue = context.run(Operation::ListReviewMemories, |levh, scope| {
        levh_api::review::queue(
            levh,
            scope,
            ReviewQueueArgs {
                project: args.project.clone(),
                limit: args.limit,
            },
        )
    })?;
    let interactive = args.interactive || (!json && std::io::stdin().is_terminal());
    if json && !interactive {
        output::json(&queue)?;
        return Ok(ExitCode::SUCCESS);
    }
    if queue.memories.is_empty() {
        output::line("nothing to review: no memory is fading, or each was put off");
        return Ok(ExitCode::SUCCESS);
    }
    if !interactive {
        let mut table = output::table(&["id", "retention", "reviews", "project", "memory"]);
        for item in &queue.memories {
            table.add_row(vec![
                item.memory.id.clone(),
                output::percent(item.memory.retention),
                item.reviews.to_string(),
                item.memory.project.clone().unwrap_or_else(|| "-".into()),
                output::preview(&item.memory.content),
            ]);
        }
        output::print_table(&table);
        output::line(
            "`levh review` in a terminal goes through them; `levh review ID --keep` decides one",
        );
        return Ok(ExitCode::SUCCESS);
    }
    flow(context, &queue.memories, json)
}

/// One memory at a time: shown, a decision read from standard input, applied.
fn flow(context: &Context, items: &[ReviewItemView], json: bool) -> Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut decided = Vec::new();
    let total = items.len();
    'items: for (n, item) in items.iter().enumerate() {
        let m = &item.memory;
        eprintln!(
            "\n[{}/{total}] {} — retention {}, importance {:.2}, {}\n  {}",
            n + 1,
            m.id,
            output::percent(m.retention),
            m.importance,
            if item.reviews == 0 {
                "never reviewed".to_owned()
            } else {
                format!("reviewed {}×", item.reviews)
            },
            m.content.replace('\n', "\n  ")
        );
        loop {
            eprint!("[k]eep [r]einforce [w]eaken [p]in [s]nooze DAYS [f]orget [n]ext [q]uit > ");
            std::io::stderr().flush()?;
            let Some(answer) = lines.next().transpose()? else {
                break 'items;
            };
            let mut words = answer.split_whitespace();
            let body = |decision: &str| ReviewBody {
                decision: decision.to_owned(),
                days: None,
            };
            let body = match words.next().unwrap_or("") {
                "k" | "keep" => body("keep"),
                "r" | "reinforce" => body("reinforce"),
                "w" | "weaken" => body("weaken"),
                "p" | "pin" => body("pin"),
                "f" | "forget" => body("forget"),
                "s" | "snooze" => match words.next().map(str::parse::<u32>) {
                    Some(Ok(days)) => ReviewBody {
                        decision: "snooze".into(),
                        days: Some(days),
                    },
                    _ => {
                        eprintln!("snooze needs a number of days, e.g. `s 7`");
                        continue;
                    }
                },
                "n" | "next" | "" => continue 'items,
                "q" | "quit" => break 'items,
                other => {
                    eprintln!("'{other}' is not one of k, r, w, p, s DAYS, f, n, q");
                    continue;
                }
            };
            match decide(context, &m.id, body) {
                Ok(view) => {
                    eprintln!("  {}", said(&view));
                    decided.push(view);
                    continue 'items;
                }
                Err(error) => eprintln!("  {error:#}"),
            }
        }
    }
    if json {
        output::json(&decided)?;
    } else {
        output::line(format!("{} decided", decided.len()));
    }
    Ok(ExitCode::SUCCESS)
}

fn decide(context: &Context, id: &str, body: ReviewBody) -> Result<ReviewView> {
    context.run(Operation::ReviewMemory, |levh, scope| {
        levh_api::review::review(levh, scope, id, body)
    })
}

fn said(view: &ReviewView) -> String {
    match view.decision.as_str() {
        "forget" => format!("forgot {}", view.memory_id),
        decision => format!(
            "{decision}: {} shown again from {}",
            view.memory_id,
            output::human_time_text(&view.next_review)
        ),
    }
}
