//! `levh capture TEXT`: store a memory through the gate.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_core::{HeldId, Kind, MemoryId, Nearest, NewMemory, Redaction, Timestamp, Verdict};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The text to remember; `-` reads it from standard input.
    text: String,
    /// The project it belongs to.
    #[arg(long, short)]
    project: Option<String>,
    /// How much it matters, 0..1 (default 0.5). Important memories are reinforced more.
    #[arg(long, short, value_parser = importance_arg)]
    importance: Option<f64>,
    /// Pin it: it never fades.
    #[arg(long)]
    pin: bool,
    /// Who produced it (default `cli`).
    #[arg(long, short)]
    source: Option<String>,
    /// What it is: note, event, decision, ... (default `note`).
    #[arg(long, short, value_parser = kind_arg)]
    kind: Option<Kind>,
    /// World time from which the fact holds (RFC 3339 or a date; default now).
    #[arg(long, value_parser = super::time_arg)]
    valid_from: Option<Timestamp>,
    /// World time at which the fact stops holding (RFC 3339 or a date).
    #[arg(long, value_parser = super::time_arg)]
    valid_to: Option<Timestamp>,
    /// Only ask the gate what it would decide; store nothing.
    #[arg(long)]
    dry_run: bool,
}

fn importance_arg(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is outside 0..1"))
    }
}

fn kind_arg(text: &str) -> Result<Kind, String> {
    Kind::new(text).map_err(|e| e.to_string())
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let content = if args.text == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the memory from standard input")?;
        text
    } else {
        args.text
    };
    let new = NewMemory {
        content,
        project: args.project,
        kind: args.kind,
        source: args.source,
        importance: args.importance,
        pinned: args.pin,
        valid_from: args.valid_from,
        valid_to: args.valid_to,
        ..NewMemory::default()
    };
    if args.dry_run {
        let evaluation = context.levh.evaluate(&context.scope, new)?;
        let value = verdict_json(
            &evaluation.verdict,
            None,
            None,
            &evaluation.redactions,
            evaluation.nearest,
        );
        if json {
            output::json(
                &json!({ "dry_run": true, "content": evaluation.content, "gate": value }),
            )?;
        } else {
            let mut line = format!(
                "the gate would {} this",
                value["verdict"].as_str().unwrap_or("?")
            );
            if let Some(reason) = value["reason"].as_str() {
                line.push_str(&format!(": {reason}"));
            }
            output::line(line);
            if !evaluation.redactions.is_empty() {
                output::line(format!("stored as: {}", evaluation.content));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let outcome = context.levh.capture(&context.scope, new)?;
    let mut value = verdict_json(
        &outcome.verdict,
        outcome.memory_id,
        outcome.held_id,
        &outcome.redactions,
        outcome.nearest(),
    );
    if json {
        if !outcome.interference.is_empty() {
            value["interference"] = serde_json::to_value(&outcome.interference)?;
        }
        output::json(&value)?;
    } else {
        output::line(describe(&value));
        for hit in &outcome.interference {
            output::line(format!(
                "  weakened older memory {} (similarity {:.2}, stability now {:.1} h)",
                hit.memory_id, hit.similarity, hit.stability_hours
            ));
        }
        if let Some(held) = outcome.held_id {
            output::line(format!(
                "  a person decides: `levh held show {held}`, then `levh held admit|discard {held}`"
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The gate's answer in the shape every surface returns:
/// `{"verdict", "memory_id"?, "held_id"?, "reason"?, "nearest_id"?, "similarity"?, "redactions"?}`.
fn verdict_json(
    verdict: &Verdict,
    memory_id: Option<MemoryId>,
    held_id: Option<HeldId>,
    redactions: &[Redaction],
    nearest: Option<Nearest>,
) -> serde_json::Value {
    let mut value = json!({ "verdict": verdict.name() });
    if let Some(id) = memory_id {
        value["memory_id"] = json!(id);
    }
    if let Some(id) = held_id {
        value["held_id"] = json!(id);
    }
    let reason = match verdict {
        Verdict::Review { nearest } => Some(levh_core::gate::review_reason(nearest)),
        Verdict::Reject { reason, .. } => Some(reason.clone()),
        _ => None,
    };
    if let Some(reason) = reason {
        value["reason"] = json!(reason);
    }
    if let Some(nearest) = nearest {
        value["nearest_id"] = json!(nearest.id);
        value["similarity"] = json!(nearest.similarity);
        value["measure"] = json!(nearest.measure);
    }
    if !redactions.is_empty() {
        value["redactions"] = json!(redactions);
    }
    value
}

/// One line for people from a verdict value.
fn describe(value: &serde_json::Value) -> String {
    let text = |key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let redacted = value["redactions"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|x| x["kind"].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|kinds| !kinds.is_empty())
        .map(|kinds| format!(" (secrets replaced: {kinds})"))
        .unwrap_or_default();
    match value["verdict"].as_str() {
        Some("admit") => format!("admitted {}", text("memory_id")),
        Some("redact") => format!("admitted {}{redacted}", text("memory_id")),
        Some("review") => format!("held for review {}: {}", text("held_id"), text("reason")),
        Some("reject") => format!("rejected: {}", text("reason")),
        _ => value.to_string(),
    }
}
