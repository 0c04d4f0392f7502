//! `levh pin ID` / `levh unpin ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, pinned: bool, json: bool) -> Result<ExitCode> {
    let memory = context.levh.set_pinned(&context.scope, id, pinned)?;
    report(
        context,
        &memory,
        if pinned { "pinned" } else { "unpinned" },
        json,
    )
}

/// Reports a memory after a change: its view as JSON, or one line for people.
pub fn report(
    context: &Context,
    memory: &levh_core::Memory,
    what: &str,
    json: bool,
) -> Result<ExitCode> {
    let (config, now) = (&context.levh.config().model, context.levh.now());
    if json {
        output::json(&output::memory_view(memory, config, now))?;
    } else {
        output::line(format!(
            "{what} {}: retention {}, stability {:.1} h",
            memory.id,
            output::percent(levh_core::model::retention(&memory.state, now)),
            memory.state.stability_hours
        ));
    }
    Ok(ExitCode::SUCCESS)
}
