//! `levh purge ID`: erase a memory without residue, and show the proof.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let report = context.levh.purge(&context.scope, id)?;
    if json {
        output::json(&report)?;
    } else {
        output::line(format!("purged {}", report.memory_id));
        if report.held_removed > 0 {
            output::line(format!(
                "  and {} held candidate(s) with the same content",
                report.held_removed
            ));
        }
        if report.residue.is_empty() {
            output::line("  no residue: the content is in no table, index or file");
        } else {
            for place in &report.residue {
                output::line(format!("  residue: {place}"));
            }
        }
    }
    Ok(if report.residue.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
