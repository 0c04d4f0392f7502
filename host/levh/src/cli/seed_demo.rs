//! `levh seed-demo`: a deterministic demo corpus (`demo.jsonl`: a small robotics team's two
//! weeks — people, mail, meetings, decisions, promises, rules, one conflict, a few old notes
//! that fade), so a new user sees every feature with something in it. Dated relative to
//! now; every item goes through the gate like any capture (source `demo`). Refused on a
//! store that holds memories; `levh seed-demo --remove` purges what it seeded.

use std::process::ExitCode;

use anyhow::{Result, bail};
use levh_api::Operation;
use levh_api::requests::{ListArgs, StoreArgs, StoreBatchArgs};
use serde::Deserialize;

use crate::context::Context;
use crate::output;

/// The corpus, one memory a line.
const CORPUS: &str = include_str!("demo.jsonl");
/// The source every demo memory is stored with.
const SOURCE: &str = "demo";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Purge the memories the demo seeded (source `demo`) instead.
    #[arg(long)]
    remove: bool,
}

/// One line of the corpus.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoItem {
    content: String,
    /// When it happened, in days from now (negative: past).
    days: f64,
    project: Option<String>,
    kind: Option<String>,
    importance: Option<f64>,
    pin: Option<bool>,
    metadata: Option<serde_json::Value>,
}

/// The corpus dated from `now`, each memory starting with `stability_hours` (the memory
/// model's setting for a new memory).
fn corpus(now: jiff::Timestamp, stability_hours: f64) -> Result<Vec<StoreArgs>> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            let item: DemoItem = serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("demo.jsonl line {}: {e}", n + 1))?;
            let at = now
                .checked_add(jiff::SignedDuration::from_secs_f64(item.days * 86_400.0))
                .map_err(|e| anyhow::anyhow!("demo.jsonl line {}: {e}", n + 1))?;
            let mut metadata = item.metadata.unwrap_or_else(|| serde_json::json!({}));
            metadata["demo"] = true.into();
            // Stored when it happened (an upcoming event: now), so what is old has decayed
            // as it would have: the old notes fade.
            let stored = at.min(now);
            let prior = levh_core::PriorMemory {
                id: levh_core::MemoryId::new_at(stored),
                source: Some(SOURCE.into()),
                stability_hours,
                recall_count: 0,
                last_recalled_at: None,
                created_at: stored,
                superseded_by: None,
                forgotten_at: None,
            };
            Ok(StoreArgs {
                content: item.content,
                project: item.project,
                kind: item.kind,
                importance: item.importance,
                pin: item.pin,
                valid_from: Some(at.to_string()),
                valid_to: None,
                session_id: None,
                metadata: Some(metadata),
                prior: Some(prior),
            })
        })
        .collect()
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if args.remove {
        return remove(context, json);
    }
    let stats = context.run(Operation::GetMemoryStats, |levh, scope| {
        levh_api::workspace::stats(levh, scope, None)
    })?;
    if stats.total > 0 {
        bail!(
            "this store holds {} memories: the demo goes into an empty one only (try `levh --home /tmp/levh-demo seed-demo`); nothing was changed",
            stats.total
        );
    }
    let report = context.run(Operation::StoreMemories, |levh, scope| {
        let memories = corpus(levh.now(), levh.config().model.initial_stability_hours)
            .map_err(|e| levh_api::Error::internal(e.to_string()))?;
        levh_api::memories::store_batch(levh, scope, StoreBatchArgs { memories }, SOURCE.into())
    })?;
    // A pair inside the batch is named on both of its items.
    let conflicts: std::collections::BTreeSet<&str> = report
        .results
        .iter()
        .filter_map(|r| r.outcome.as_ref())
        .flat_map(|o| o.conflicts.iter().map(String::as_str))
        .collect();
    let conflicts = conflicts.len();
    if json {
        output::json(&report)?;
    } else {
        output::line(format!(
            "seeded the demo: {} stored, {} held for review, {} rejected; {} conflict candidate{} found\n\
             try: levh briefing · levh meeting-prep --next · levh ask \"who owns billing?\" · \
             levh conflicts · levh review · levh people · levh serve (the dashboard)\n\
             the demo's user is Sam Rivera: LEVH_ME=\"Sam Rivera, sam@northwind.example\" tells whose promises are whose\n\
             `levh seed-demo --remove` takes it out again",
            report.admitted + report.redacted,
            report.held,
            report.rejected,
            conflicts,
            if conflicts == 1 { "" } else { "s" },
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Purges every memory of source `demo`.
fn remove(context: &Context, json: bool) -> Result<ExitCode> {
    let mut purged = 0usize;
    loop {
        let page = context.run(Operation::ListMemories, |levh, scope| {
            levh_api::memories::list(
                levh,
                scope,
                ListArgs {
                    source: Some(SOURCE.into()),
                    limit: Some(1000),
                    ..ListArgs::default()
                },
            )
        })?;
        if page.memories.is_empty() {
            break;
        }
        for memory in &page.memories {
            context.run(Operation::PurgeMemory, |levh, scope| {
                levh_api::memories::purge(levh, scope, &memory.id)
            })?;
            purged += 1;
        }
    }
    if json {
        output::json(&serde_json::json!({ "purged": purged }))?;
    } else {
        output::line(format!("purged {purged} demo memories"));
    }
    Ok(ExitCode::SUCCESS)
}
