//! Everything the CLI prints goes through here: JSON for `--json`, tables and lines for
//! people. Nothing else in the binary writes to stdout.

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use levh_core::{Memory, ModelConfig, Timestamp, model, text};
use serde::Serialize;

/// Writes one line to stdout. A reader that went away (`levh list --json | head`) ends
/// the command quietly with success, as other Unix tools do, instead of a panic.
fn emit(text: impl std::fmt::Display) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let written = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
    if let Err(error) = written {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {error}");
        std::process::exit(1);
    }
}

/// Prints a value as pretty JSON.
pub fn json(value: &impl Serialize) -> anyhow::Result<()> {
    emit(serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Prints a line for a person.
pub fn line(text: impl std::fmt::Display) {
    emit(text);
}

/// Prints an error as one line (with its causes) on stderr.
pub fn error(error: &anyhow::Error) {
    eprintln!("error: {error:#}");
}

/// A new table in the house style.
/// A warning for the person at the terminal (stderr, so `--json` output stays clean).
pub fn warn(text: impl std::fmt::Display) {
    eprintln!("warning: {text}");
}

pub fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(header.iter().copied());
    table
}

/// Prints a table.
pub fn print_table(table: &Table) {
    emit(table);
}

/// A time for people: `2026-11-30 09:00 UTC`.
pub fn human_time(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// Retention as a percentage.
pub fn percent(value: f64) -> String {
    format!("{:.0}%", value * 100.0)
}

/// Every field of a memory, plus its retention now and when it will fade: what `show`,
/// `list` and write commands report — levh-api's one `MemoryView`, the same shape REST,
/// MCP and the dashboard return.
pub fn memory_view(memory: &Memory, config: &ModelConfig, now: Timestamp) -> serde_json::Value {
    serde_json::to_value(levh_api::views::MemoryView::new(memory, config, now))
        .unwrap_or(serde_json::Value::Null)
}

/// A memory for people, one field a line.
pub fn print_memory(memory: &Memory, config: &ModelConfig, now: Timestamp) {
    let state = &memory.state;
    let mut rows: Vec<(&str, String)> = vec![
        ("id", memory.id.to_string()),
        ("content", memory.content.clone()),
        (
            "project",
            memory.project.clone().unwrap_or_else(|| "-".into()),
        ),
        ("kind", memory.kind.to_string()),
        ("source", memory.source.clone()),
        ("importance", format!("{:.2}", state.importance)),
        (
            "pinned",
            if state.pinned {
                "yes".into()
            } else {
                "no".into()
            },
        ),
        ("retention", percent(model::retention(state, now))),
        ("stability", format!("{:.1} h", state.stability_hours)),
        ("recalls", state.recall_count.to_string()),
        (
            "last recalled",
            state
                .last_recalled_at
                .map(human_time)
                .unwrap_or_else(|| "never".into()),
        ),
        ("created", human_time(state.created_at)),
        (
            "valid",
            format!(
                "{} → {}",
                human_time(memory.valid_from),
                memory
                    .valid_to
                    .map(human_time)
                    .unwrap_or_else(|| "open".into())
            ),
        ),
    ];
    if let Some(at) = model::fades_at(state, config) {
        rows.push(("fades", human_time(at)));
    }
    if let Some(by) = memory.superseded_by {
        rows.push(("superseded by", by.to_string()));
    }
    for (key, value) in rows {
        emit(format!("{key:>14}  {value}"));
    }
}

/// A one-line preview of content for tables.
pub fn preview(content: &str) -> String {
    text::preview(content, 72)
}
