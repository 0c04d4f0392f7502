//! `levh upsert KEY TEXT` and `levh get --key KEY`: facts an agent (or a person) rewrites
//! under a key, read back by key, by JSON pointer, or as they were at a time.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_api::requests::{GetArgs, UpsertArgs};
use levh_api::{Operation, memories};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct UpsertCommand {
    /// The key ("build command", "owner of billing").
    key: String,
    /// The text.
    text: String,
    /// The project.
    #[arg(long, short)]
    project: Option<String>,
    /// A JSON value beside the text (read back with `levh get --pointer`).
    #[arg(long, value_name = "JSON")]
    value: Option<String>,
    /// Importance 0..1.
    #[arg(long)]
    importance: Option<f64>,
}

#[derive(Debug, clap::Args)]
pub struct GetCommand {
    /// A memory's id (or give `--key`).
    #[arg(required_unless_present = "key", conflicts_with = "key")]
    id: Option<String>,
    /// The key it was upserted under.
    #[arg(long)]
    key: Option<String>,
    /// With `--key`: the project.
    #[arg(long, short, requires = "key")]
    project: Option<String>,
    /// A JSON pointer into its value (`/deploy/region`).
    #[arg(long)]
    pointer: Option<String>,
    /// With `--key`: the memory that held then (RFC 3339, or a date).
    #[arg(long, requires = "key")]
    as_of: Option<String>,
}

pub fn upsert(context: &Context, args: UpsertCommand, json: bool) -> Result<ExitCode> {
    let value = args
        .value
        .as_deref()
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .context("--value is not JSON")?;
    let view = context.run(Operation::UpsertMemory, |levh, scope| {
        memories::upsert(
            levh,
            scope,
            UpsertArgs {
                key: args.key,
                content: args.text,
                project: args.project,
                value,
                importance: args.importance,
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        let id = view.memory.as_ref().map(|m| m.id.as_str()).unwrap_or("-");
        match view.status.as_str() {
            "stored" => match &view.replaced {
                Some(old) => {
                    output::line(format!("stored {id} under '{}', replacing {old}", view.key))
                }
                None => output::line(format!("stored {id} under '{}'", view.key)),
            },
            "unchanged" => output::line(format!("unchanged: {id} already says this")),
            "held" => output::line(format!(
                "held for review ({}): {}",
                view.held_id.as_deref().unwrap_or("-"),
                view.reason.as_deref().unwrap_or("")
            )),
            _ => output::line(format!(
                "rejected: {}",
                view.reason.as_deref().unwrap_or("")
            )),
        }
    }
    // A write that did not happen is a failure a script should see.
    Ok(if matches!(view.status.as_str(), "stored" | "unchanged") {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn get(context: &Context, args: GetCommand, json: bool) -> Result<ExitCode> {
    let pointed = args.pointer.is_some();
    let view = context.run(Operation::GetMemory, |levh, scope| {
        memories::get_by(
            levh,
            scope,
            GetArgs {
                id: args.id,
                key: args.key,
                project: args.project,
                pointer: args.pointer,
                as_of: args.as_of,
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else if pointed {
        // What the pointer found, as JSON: a script reads it as it is.
        output::line(serde_json::to_string(&view.value)?);
    } else {
        output::line(&view.memory.content);
        if let Some(value) = &view.value {
            output::line(serde_json::to_string_pretty(value)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
