//! The calendar's components that are not events: a `VTODO` becomes a task, a `VJOURNAL`
//! a note. Each is one item, kept when its time (a to-do's due date, else its start; a
//! journal entry's date) is inside the window, or when it has no time at all.
//!
//! A recurring to-do is read once, as written: its RRULE is not expanded (a task is done
//! once; its next instance is the app's to create).

use chrono::{DateTime, Utc};
use icalendar::parser::Component;

use crate::identity::uid;
use crate::property::{find, param, text, texts, zoned_value};
use crate::time::{Stamp, rfc3339};
use crate::zones::Zones;

/// What a record is, as an item's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// A `VTODO`.
    Task,
    /// A `VJOURNAL`.
    Note,
}

impl RecordKind {
    /// The component it is read from, by its name; `None` for any other component.
    pub fn of(component: &str) -> Option<Self> {
        match component.to_ascii_uppercase().as_str() {
            "VTODO" => Some(RecordKind::Task),
            "VJOURNAL" => Some(RecordKind::Note),
            _ => None,
        }
    }

    /// The item's kind.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Task => "task",
            RecordKind::Note => "note",
        }
    }
}

/// A to-do or journal entry: what becomes one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `<file>#<UID>`.
    pub source_id: String,
    /// The file it came from, relative to the configured path.
    pub file: String,
    pub uid: String,
    pub kind: RecordKind,
    pub title: String,
    pub content: String,
    /// Its time: the item's occurred-at.
    pub at: Option<DateTime<Utc>>,
    pub metadata: serde_json::Value,
}

/// A value's time in words: `Tue 2026-03-24 16:00 (UTC)`, with the wall time of its zone
/// when it was written in one; a date alone for dates.
fn when(stamp: &Stamp) -> String {
    let at = stamp.instant();
    if stamp.is_date() {
        return at.format("%a %Y-%m-%d").to_string();
    }
    let mut words = format!("{} (UTC)", at.format("%a %Y-%m-%d %H:%M"));
    let zone = stamp.zone();
    if !zone.is_utc() {
        let here = at.with_timezone(&zone.offset(at));
        words.push_str(&format!(
            ", {} {}",
            here.format("%a %Y-%m-%d %H:%M"),
            zone.name()
        ));
    }
    words
}

/// A date property, read; `Err` names it.
fn stamp(component: &Component, name: &str, zones: &Zones) -> Result<Option<Stamp>, String> {
    let Some(property) = find(component, name) else {
        return Ok(None);
    };
    let (tzid, value) = zoned_value(property);
    Stamp::read(value, tzid.as_deref(), param(property, "VALUE"), zones)
        .map(Some)
        .map_err(|e| format!("bad {name}: {e}"))
}

/// `STATUS` of a to-do in words.
fn task_status(status: Option<&str>) -> &'static str {
    match status.map(str::to_ascii_uppercase).as_deref() {
        Some("COMPLETED") => "done",
        Some("IN-PROCESS") => "in progress",
        Some("CANCELLED") => "cancelled",
        _ => "to do",
    }
}

/// Reads one `VTODO` or `VJOURNAL` of `file`. `Err` when a date cannot be read.
pub fn read(
    file: &str,
    kind: RecordKind,
    component: &Component,
    zones: &Zones,
) -> Result<Record, String> {
    let uid = uid(component);
    let start = stamp(component, "DTSTART", zones)?;
    let title = text(component, "SUMMARY").unwrap_or_else(|| match kind {
        RecordKind::Task => "(untitled task)".into(),
        RecordKind::Note => "(untitled journal entry)".into(),
    });
    let status = text(component, "STATUS");
    // A journal may hold several (RFC 5545 §3.6.3).
    let descriptions = texts(component, "DESCRIPTION");
    let mut content = title.clone();
    let mut metadata = serde_json::json!({
        "uid": uid,
        "file": file,
        "status": status.as_deref().map(str::to_lowercase),
        "start": start.as_ref().map(|s| rfc3339(s.instant())),
    });
    let at = match kind {
        RecordKind::Task => {
            let due = stamp(component, "DUE", zones)?;
            let completed = stamp(component, "COMPLETED", zones)?;
            content.push_str(&format!("\nTask: {}", task_status(status.as_deref())));
            if let Some(due) = &due {
                content.push_str(&format!("\nDue: {}", when(due)));
            }
            if let Some(start) = &start {
                content.push_str(&format!("\nStarts: {}", when(start)));
            }
            if let Some(completed) = &completed {
                content.push_str(&format!("\nCompleted: {}", when(completed)));
            }
            metadata["due"] = due.as_ref().map(|d| rfc3339(d.instant())).into();
            due.or(start).map(|s| s.instant())
        }
        RecordKind::Note => {
            if let Some(start) = &start {
                content.push_str(&format!("\nDate: {}", when(start)));
            }
            start.map(|s| s.instant())
        }
    };
    if !descriptions.is_empty() {
        content.push_str("\n\n");
        content.push_str(&descriptions.join("\n\n"));
    }
    Ok(Record {
        source_id: format!("{file}#{uid}"),
        file: file.to_owned(),
        uid,
        kind,
        title,
        content,
        at,
        metadata,
    })
}
