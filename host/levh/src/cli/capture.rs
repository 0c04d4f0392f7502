//! `levh capture TEXT`: store a memory through the gate.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_api::Operation;
use levh_api::requests::{EvaluateArgs, StoreArgs};
use levh_api::views::{CaptureView, VerdictKind};
use levh_api::{held, memories};
use levh_core::{Kind, Timestamp};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Store it in this session (`levh session start` opens one).
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
    /// The text to remember; `-` reads it from standard input.
    text: String,
    /// The project it belongs to (inside a git repository: the repository's name).
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
    // Inside a git repository, the repository is the project unless one is given.
    let project = args.project.or_else(super::hook::repository_name);
    if args.dry_run {
        let view = context.run(Operation::EvaluateAdmission, |levh, scope| {
            held::evaluate(levh, scope, EvaluateArgs { content, project })
        })?;
        if json {
            output::json(&view)?;
        } else {
            let mut line = format!("the gate would {} this", view.verdict.name());
            if let Some(reason) = &view.reason {
                line.push_str(&format!(": {reason}"));
            }
            output::line(line);
            if !view.redactions.is_empty() {
                output::line(format!("stored as: {}", view.content));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let request = StoreArgs {
        content,
        project,
        kind: args.kind.map(|kind| kind.to_string()),
        importance: args.importance,
        pin: args.pin.then_some(true),
        valid_from: args.valid_from.map(|t| t.to_string()),
        valid_to: args.valid_to.map(|t| t.to_string()),
        session_id: args.session,
        metadata: None,
        prior: None,
    };
    let source = args.source.unwrap_or_else(|| "cli".to_owned());
    let view = context.run(Operation::StoreMemory, |levh, scope| {
        memories::store(levh, scope, request, source)
    })?;
    report(&view, json)
}

/// The gate's answer to a capture: JSON, or a line for people (with what it weakened and
/// how a person decides a held one).
pub fn report(view: &CaptureView, json: bool) -> Result<ExitCode> {
    if json {
        output::json(view)?;
    } else {
        output::line(describe(view));
        for hit in &view.interference {
            output::line(format!(
                "  weakened older memory {} (similarity {:.2}, stability now {:.1} h)",
                hit.memory_id, hit.similarity, hit.stability_hours
            ));
        }
        if let Some(held) = &view.held_id {
            output::line(format!(
                "  a person decides: `levh held show {held}`, then `levh held admit|discard {held}`"
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line for people from the gate's answer.
fn describe(view: &CaptureView) -> String {
    let id = view.memory_id.as_deref().unwrap_or_default();
    let reason = view.reason.as_deref().unwrap_or_default();
    match view.verdict {
        VerdictKind::Admit => format!("admitted {id}"),
        VerdictKind::Redact => format!(
            "admitted {id} (secrets replaced: {})",
            view.redactions.join(", ")
        ),
        VerdictKind::Review => format!(
            "held for review {}: {reason}",
            view.held_id.as_deref().unwrap_or_default()
        ),
        VerdictKind::Reject => format!("rejected: {reason}"),
    }
}
