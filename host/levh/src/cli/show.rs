//! `levh show ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let memory = context.levh.get(&context.scope, id)?;
    let (config, now) = (&context.levh.config().model, context.levh.now());
    if json {
        output::json(&output::memory_view(&memory, config, now))?;
    } else {
        output::print_memory(&memory, config, now);
    }
    Ok(ExitCode::SUCCESS)
}
