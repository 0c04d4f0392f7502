//! `levh show ID`: a memory, or a forgotten one marked as such (it is retired from every
//! read but kept for history until purged; saying "no memory" of it misled).

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::memories;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let shown = context.run(Operation::GetMemory, |levh, scope| {
        memories::show(levh, scope, &id.to_string())
    })?;
    if json {
        output::json(&shown)?;
    } else {
        if let Some(at) = &shown.forgotten_at {
            output::line(format!(
                "forgotten at {at}: retired from every read, kept for history (`levh purge {id}` erases it)"
            ));
        }
        output::print_memory(&shown.memory);
        if let Some(session) = &shown.working_session {
            output::line(format!(
                "working memory of session {session}: other sessions' recall leaves it out until it is used, marked important, pinned or reinforced"
            ));
        }
        for a in &shown.attachments {
            output::line(format!(
                "attached: {} ({}, {} bytes), text in memory {}",
                a.name, a.media_type, a.bytes, a.memory_id
            ));
        }
        if !shown.consolidated_from.is_empty() {
            output::line(format!(
                "consolidated from {} memories (`levh consolidate undo {id}` brings them back):",
                shown.consolidated_from.len()
            ));
            for member in &shown.consolidated_from {
                output::line(format!(
                    "  {}  {}",
                    member.id,
                    levh_core::text::preview(&member.content, 100)
                ));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh show ID --trust`.
pub fn trust(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::MemoryTrust, |levh, scope| {
        levh_api::trust::trust(levh, context.server_store(), scope, &id.to_string())
    })?;
    if json {
        output::json(&view)?;
    } else {
        output::line(format!("trust {:.2} ({})", view.value, view.label));
        for f in &view.factors {
            output::line(format!("  {:+.2}  {}: {}", f.effect, f.factor, f.why));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh show ID --history`.
pub fn history(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::MemoryHistory, |levh, scope| {
        levh_api::memories::history(
            levh,
            context.server_store(),
            scope,
            &id.to_string(),
            levh_api::requests::HistoryQuery::default(),
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        for event in &view.events {
            let detail = match &event.detail {
                serde_json::Value::Object(map) if map.is_empty() => String::new(),
                serde_json::Value::Null => String::new(),
                other => format!("  {other}"),
            };
            output::line(format!(
                "{}  {:<12} via {}{}",
                output::human_time_text(&event.at),
                event.kind,
                event.surface,
                detail
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
