//! `levh pin ID` / `levh unpin ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::views::MemoryView;
use levh_api::{Operation, memories};
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, pinned: bool, json: bool) -> Result<ExitCode> {
    let operation = if pinned {
        Operation::PinMemory
    } else {
        Operation::UnpinMemory
    };
    let view = context.run(operation, |levh, scope| {
        memories::set_pinned(levh, scope, &id.to_string(), pinned)
    })?;
    report(&view, if pinned { "pinned" } else { "unpinned" }, json)
}

/// Reports a memory after a change: its view as JSON, or one line for people.
pub fn report(memory: &MemoryView, what: &str, json: bool) -> Result<ExitCode> {
    if json {
        output::json(memory)?;
    } else {
        output::line(format!(
            "{what} {}: retention {}, stability {:.1} h",
            memory.id,
            output::percent(memory.retention),
            memory.stability_hours
        ));
    }
    Ok(ExitCode::SUCCESS)
}
