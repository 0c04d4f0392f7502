//! `levh reinforce ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::memories;
use levh_core::MemoryId;

use crate::context::Context;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::ReinforceMemory, |levh, scope| {
        memories::reinforce(levh, scope, &id.to_string())
    })?;
    super::pin::report(&view, "reinforced", json)
}
