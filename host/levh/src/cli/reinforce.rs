//! `levh reinforce ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;

use crate::context::Context;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let memory = context.levh.reinforce(&context.scope, id)?;
    super::pin::report(context, &memory, "reinforced", json)
}
