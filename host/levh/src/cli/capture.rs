//! `levh capture TEXT`: store a memory through the gate.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_core::{Kind, NewMemory, Timestamp};
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
    let outcome = context.levh.capture(
        &context.scope,
        NewMemory {
            content,
            project: args.project,
            kind: args.kind,
            source: args.source,
            importance: args.importance,
            pinned: args.pin,
            valid_from: args.valid_from,
            valid_to: args.valid_to,
            ..NewMemory::default()
        },
    )?;
    if json {
        let mut value = json!({ "verdict": outcome.verdict, "memory_id": outcome.memory_id });
        if !outcome.interference.is_empty() {
            value["interference"] = serde_json::to_value(&outcome.interference)?;
        }
        output::json(&value)?;
    } else if let Some(id) = outcome.memory_id {
        output::line(format!("admitted {id}"));
        for hit in &outcome.interference {
            output::line(format!(
                "  weakened older memory {} (similarity {:.2}, stability now {:.1} h)",
                hit.memory_id, hit.similarity, hit.stability_hours
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
