//! Everything the CLI prints goes through here: JSON for `--json`, tables and lines for
//! people. Nothing else in the binary writes to stdout.

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use levh_api::views::MemoryView;
use levh_core::{Timestamp, text};
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

/// The same error as the JSON document a `--json` caller reads on stdout:
/// `{"error": "…"}` with the whole chain of causes in one sentence.
pub fn json_error(error: &anyhow::Error) {
    let document = serde_json::json!({ "error": format!("{error:#}") });
    println!("{document}");
}

/// A warning for the person at the terminal (stderr, so `--json` output stays clean).
pub fn warn(text: impl std::fmt::Display) {
    eprintln!("warning: {text}");
}

/// A new table in the house style.
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

/// A time given as RFC 3339 text (as views carry it), for people; as given if unreadable.
pub fn human_time_text(at: &str) -> String {
    levh_core::parse_instant(at).map_or_else(|| at.to_owned(), human_time)
}

/// A memory for people, one field a line, from levh-api's view (what `--json` prints).
pub fn print_memory(memory: &MemoryView) {
    let mut rows: Vec<(&str, String)> = vec![
        ("id", memory.id.clone()),
        ("content", memory.content.clone()),
        (
            "project",
            memory.project.clone().unwrap_or_else(|| "-".into()),
        ),
        ("kind", memory.kind.clone()),
        ("source", memory.source.clone()),
        ("importance", format!("{:.2}", memory.importance)),
        ("pinned", if memory.pinned { "yes" } else { "no" }.into()),
        ("retention", percent(memory.retention)),
        ("stability", format!("{:.1} h", memory.stability_hours)),
        ("recalls", memory.recall_count.to_string()),
        (
            "last recalled",
            memory
                .last_recalled_at
                .as_deref()
                .map_or_else(|| "never".into(), human_time_text),
        ),
        ("created", human_time_text(&memory.created_at)),
        (
            "valid",
            format!(
                "{} → {}",
                human_time_text(&memory.valid_from),
                memory
                    .valid_to
                    .as_deref()
                    .map_or_else(|| "open".into(), human_time_text)
            ),
        ),
    ];
    if let Some(at) = &memory.fades_at {
        rows.push(("fades", human_time_text(at)));
    }
    if let Some(by) = &memory.superseded_by {
        rows.push(("superseded by", by.clone()));
    }
    for (key, value) in rows {
        emit(format!("{key:>14}  {value}"));
    }
}

/// A memory's retention for a table: `pinned`, or a percentage.
pub fn retention(memory: &MemoryView) -> String {
    if memory.pinned {
        "pinned".into()
    } else {
        percent(memory.retention)
    }
}

/// A one-line preview of content for tables.
pub fn preview(content: &str) -> String {
    text::preview(content, 72)
}
