//! `levh forget ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::memories;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let forgotten = context.run(Operation::ForgetMemory, |levh, scope| {
        memories::forget(levh, scope, &id.to_string())
    })?;
    if json {
        output::json(&forgotten.done)?;
    } else if forgotten.was_pinned {
        output::line(format!("forgot {id} (it was pinned)"));
    } else {
        output::line(format!("forgot {id}"));
    }
    Ok(ExitCode::SUCCESS)
}
