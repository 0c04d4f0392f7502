//! `levh forget ID`.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;
use serde_json::json;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    context.levh.forget(&context.scope, id)?;
    if json {
        output::json(&json!({ "forgotten": id }))?;
    } else {
        output::line(format!("forgot {id}"));
    }
    Ok(ExitCode::SUCCESS)
}
