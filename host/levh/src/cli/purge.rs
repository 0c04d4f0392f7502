//! `levh purge ID`: erase a memory without residue, and show the proof.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let report = context.run(Operation::PurgeMemory, |levh, scope| {
        levh_api::memories::purge(levh, scope, &id.to_string())
    })?;
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
        if context.backend() == levh_core::Backend::Postgres {
            // The tables hold no copy; what PostgreSQL keeps beside them is the database
            // operator's to clear (the README's "Team server on PostgreSQL" says how).
            output::line(
                "  on PostgreSQL, dead row versions stay in the table files until VACUUM, and \
                 the write-ahead log, replicas and the database's backups may still hold it",
            );
        }
        // Backups are files the person keeps on purpose: named, never touched.
        let backups = levh_backup::list(&context.home).unwrap_or_default();
        if !backups.is_empty() {
            output::line(format!(
                "  {} backup(s) in {} were made before this purge and may hold it; delete them if it must be gone everywhere",
                backups.len(),
                levh_backup::backups_dir(&context.home).display()
            ));
        }
    }
    Ok(if report.residue.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
