//! The `calendar` connector: one item per event inside a window around now, read from
//! `.ics` files (one file, or a directory of them). Recurring events are expanded inside
//! the window (one item per series, listing its occurrences), time zones converted to
//! UTC, and each bad file or event is one error. To-dos become tasks and journal entries
//! notes; any other component is named in the report as skipped.
//!
//! The modules depend one way, each only on those before it:
//! `property` (reading iCalendar properties; the leaf) → `identity` (a UID, or one made
//! from the component's content) → `zones` (every `TZID` to a zone)
//! → `time` (values to instants) → `records` (to-dos and journal entries) → `parse`
//! (events to occurrences, on `scan`'s index of the file) → `series` (occurrences to items) → this file. `scan` and `generate` stand
//! alone.

pub mod generate;
mod identity;
pub mod parse;
mod property;
pub mod records;
pub mod scan;
pub mod series;
pub mod time;
pub mod zones;

use std::path::{Path, PathBuf};

/// The `.ics` files under `path`, each with its name relative to `path` (the part source
/// ids are made of), sorted. A file is taken as given, whatever its extension; a
/// directory is walked (calendar exports nest one folder per calendar), skipping hidden
/// entries and files that do not end in `.ics`.
pub fn ics_files(path: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !metadata.is_dir() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        return Ok(vec![(name, path.to_path_buf())]);
    }
    let mut found = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let entry_path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            // Not following links to directories: a link loop would never end.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry_path);
            } else if entry_path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("ics"))
            {
                let relative = entry_path
                    .strip_prefix(path)
                    .unwrap_or(&entry_path)
                    .to_string_lossy()
                    .replace('\\', "/");
                found.push((relative, entry_path));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Events read per page (per call into the plugin): a page's time and memory stay
/// bounded whatever the size of the file, which may span many pages.
pub const PAGE_EVENTS: usize = 10_000;

/// Where the next page starts: a file, and the first of its event groups not yet read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    pub file: String,
    pub group: usize,
}

/// What one page gave.
#[derive(Debug, Default)]
pub struct PageOf {
    pub occurrences: Vec<parse::Occurrence>,
    pub errors: Vec<parse::EventError>,
    /// Passed over on purpose, each named in the sync report.
    pub skipped: Vec<parse::Skipped>,
    /// Events and occurrences the calendar says are gone (cancelled, excluded).
    pub removed: Vec<parse::Skipped>,
    /// To-dos and journal entries.
    pub records: Vec<records::Record>,
    /// `None` when every file has been read.
    pub next: Option<Position>,
}

/// Reads events from `files` (as [`ics_files`] lists them) starting at `from`, until about
/// `budget` events have been read: whole files while they fit, and a file too large for
/// one page in parts (never splitting a series). Each file that cannot be read is one
/// error, and the next file is read.
pub fn read_page(
    files: &[(String, PathBuf)],
    from: Option<&Position>,
    window: &parse::Window,
    budget: usize,
) -> PageOf {
    let mut page = PageOf::default();
    let mut read = 0;
    let first = from.map_or(0, |at| files.partition_point(|(name, _)| *name < at.file));
    for (index, (name, path)) in files.iter().enumerate().skip(first) {
        let start = match from {
            Some(at) if index == first && *name == at.file => at.group,
            _ => 0,
        };
        if read >= budget {
            page.next = Some(Position {
                file: name.clone(),
                group: start,
            });
            return page;
        }
        let fail = |message: String| parse::EventError {
            location: name.clone(),
            message,
        };
        // One handle for the scan and the reads after it: the events are read from the
        // file that was scanned.
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) => {
                page.errors.push(fail(e.to_string()));
                continue;
            }
        };
        let scanned = match scan::scan(std::io::BufReader::new(&file)) {
            Ok(scanned) => scanned,
            Err(message) => {
                page.errors.push(fail(message));
                continue;
            }
        };
        // Whole groups, at least one, until the budget is spent.
        let mut end = start;
        while end < scanned.groups.len()
            && (end == start || read + scanned.groups[end].events.len() <= budget)
        {
            read += scanned.groups[end].events.len();
            end += 1;
        }
        let mut source = &file;
        let parsed = parse::read_groups(name, &mut source, &scanned, start..end, window);
        page.occurrences.extend(parsed.occurrences);
        page.errors.extend(parsed.errors);
        page.skipped.extend(parsed.skipped);
        page.removed.extend(parsed.removed);
        page.records.extend(parsed.records);
        if end < scanned.groups.len() {
            page.next = Some(Position {
                file: name.clone(),
                group: end,
            });
            return page;
        }
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_every_event_once_split_large_files_by_series_and_skip_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let now: chrono::DateTime<chrono::Utc> = "2026-03-20T12:00:00Z".parse().unwrap();
        // All 40 one-offs inside the window; the big file's series changes one occurrence
        // in an event far from its master, so a page must not split them.
        let mut big = String::from("BEGIN:VCALENDAR\nVERSION:2.0\n");
        big.push_str("BEGIN:VEVENT\nUID:series\nDTSTART:20260316T090000Z\nRRULE:FREQ=DAILY;COUNT=5\nSUMMARY:Daily\nEND:VEVENT\n");
        for n in 0..30 {
            big.push_str(&format!(
                "BEGIN:VEVENT\nUID:one-{n}\nDTSTART:202603{:02}T1{}0000Z\nSUMMARY:Big {n}\nEND:VEVENT\n",
                1 + n % 28,
                n % 10
            ));
        }
        big.push_str("BEGIN:VEVENT\nUID:series\nRECURRENCE-ID:20260318T090000Z\nDTSTART:20260318T150000Z\nSUMMARY:Daily, moved\nEND:VEVENT\nEND:VCALENDAR\n");
        std::fs::write(dir.path().join("b-big.ics"), big).unwrap();
        std::fs::write(
            dir.path().join("c-broken.ics"),
            "BEGIN:VCALENDAR\nBEGIN:VEVENT\n",
        )
        .unwrap();
        let mut small = String::from("BEGIN:VCALENDAR\n");
        for n in 0..10 {
            small.push_str(&format!(
                "BEGIN:VEVENT\nUID:small-{n}\nDTSTART:202603{:02}T080000Z\nSUMMARY:Small {n}\nEND:VEVENT\n",
                10 + n
            ));
        }
        small.push_str("END:VCALENDAR\n");
        std::fs::write(dir.path().join("a-small.ics"), &small).unwrap();
        std::fs::write(
            dir.path().join("d-small.ics"),
            small.replace("small-", "d-"),
        )
        .unwrap();

        let files = ics_files(dir.path()).unwrap();
        let window = parse::Window::around(now, 30, 30).unwrap();
        let mut from: Option<Position> = None;
        let mut pages = 0;
        let mut ids = Vec::new();
        let mut errors = Vec::new();
        loop {
            let page = read_page(&files, from.as_ref(), &window, 12);
            pages += 1;
            let series = page
                .occurrences
                .iter()
                .filter(|o| o.uid == "series")
                .count();
            assert!(series == 0 || series == 5, "a series split over pages");
            ids.extend(page.occurrences.iter().map(|o| o.source_id.clone()));
            errors.extend(page.errors.iter().map(|e| e.location.clone()));
            match page.next {
                Some(next) => from = Some(next),
                None => break,
            }
            assert!(pages < 20, "pages never end");
        }
        assert!(pages >= 4, "{pages} pages");
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "an event read twice: {ids:?}");
        assert_eq!(ids.len(), 10 + 5 + 30 + 10, "{ids:?}");
        assert!(ids.contains(&"b-big.ics#series@2026-03-18T09:00:00Z".to_owned()));
        assert_eq!(errors, ["c-broken.ics"]);
    }

    #[test]
    fn a_directory_is_walked_for_ics_files_and_a_file_is_taken_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("work/nested")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        for file in [
            "home.ics",
            "work/team.ICS",
            "work/nested/old.ics",
            "work/notes.txt",
            ".hidden/secret.ics",
            ".dotfile.ics",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        let names: Vec<String> = ics_files(root)
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["home.ics", "work/nested/old.ics", "work/team.ICS"]);
        let one = ics_files(&root.join("work/notes.txt")).unwrap();
        assert_eq!(one, [("notes.txt".to_owned(), root.join("work/notes.txt"))]);
        assert!(
            ics_files(&root.join("missing"))
                .unwrap_err()
                .contains("missing")
        );
    }
}

#[cfg(target_arch = "wasm32")]
mod component {
    use chrono::{DateTime, Utc};
    use levh_connector_sdk::{
        Capability, Config, ConfigType, Error, Guest, Item, ItemError, Manifest, Page, Person,
    };

    use crate::parse::{Window, rfc3339};
    use crate::records::Record;
    use crate::series::{Entry, entries};
    use crate::{PAGE_EVENTS, Position, read_page};

    struct Calendar;

    use levh_connector_sdk::setting as key;

    impl Guest for Calendar {
        fn manifest() -> Manifest {
            Manifest {
                id: "calendar".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "One memory per event in .ics calendars (recurring events expanded in the window, times in UTC)".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![
                    key(
                        "ics_path",
                        ConfigType::Path,
                        true,
                        None,
                        "An .ics file, or a directory of them (read recursively).",
                    ),
                    key(
                        "past_days",
                        ConfigType::Integer,
                        false,
                        Some("30"),
                        "How many days back from now to take events.",
                    ),
                    key(
                        "future_days",
                        ConfigType::Integer,
                        false,
                        Some("30"),
                        "How many days ahead of now to take events.",
                    ),
                ],
                capabilities: vec![Capability::ReadPath("ics_path".into())],
            }
        }

        fn sync(config: Config, cursor: Option<String>) -> Result<Page, Error> {
            let path = levh_connector_sdk::required(&config, "ics_path")?;
            let past_days = levh_connector_sdk::integer(&config, "past_days", 30)?;
            let future_days = levh_connector_sdk::integer(&config, "future_days", 30)?;
            // The host hands plugins its clock (LEVH_NOW when set) as the WASI wall clock.
            let now: DateTime<Utc> = std::time::SystemTime::now().into();
            let window =
                Window::around(now, past_days, future_days).map_err(Error::InvalidConfig)?;
            let root = std::path::Path::new(path);
            let files = crate::ics_files(root)
                .map_err(|e| Error::InvalidConfig(format!("`ics_path` {e}")))?;
            // A cursor from an older version, or none: start at the first file.
            let from: Option<Position> =
                cursor.as_deref().and_then(|c| serde_json::from_str(c).ok());
            let page = read_page(&files, from.as_ref(), &window, PAGE_EVENTS);
            let uri = |file: &str| {
                let full = if root.is_dir() {
                    root.join(file)
                } else {
                    root.to_path_buf()
                };
                format!("file:{}", full.display())
            };
            let mut items: Vec<Item> = entries(page.occurrences, now)
                .iter()
                .map(|e| item(e, &uri(&e.file)))
                .collect();
            items.extend(page.records.iter().map(|r| record_item(r, &uri(&r.file))));
            levh_connector_sdk::info(&format!(
                "{} events between {} and {}{}",
                items.len(),
                rfc3339(window.start),
                rfc3339(window.end),
                match &page.next {
                    Some(next) => format!("; next page from {} group {}", next.file, next.group),
                    None => String::new(),
                }
            ));
            // Each named in the sync report, beside the items.
            for skipped in &page.skipped {
                levh_connector_sdk::skipped(&skipped.source_id, &skipped.reason);
            }
            // A cancelled event or an excluded occurrence is gone: its memory is retired.
            // Events that leave the window are not (they happened, or will), so the
            // calendar never claims a complete listing.
            for removed in &page.removed {
                levh_connector_sdk::removed(&removed.source_id, &removed.reason);
            }
            Ok(Page {
                items,
                errors: page
                    .errors
                    .into_iter()
                    .map(|e| ItemError {
                        source_id: Some(e.location.clone()),
                        location: e.location,
                        message: e.message,
                    })
                    .collect(),
                done: page.next.is_none(),
                next_cursor: page
                    .next
                    .map(|next| serde_json::to_string(&next).unwrap_or_default()),
            })
        }
    }

    fn item(entry: &Entry, uri: &str) -> Item {
        let person = |a: &crate::parse::Attendee, role: &str| Person {
            name: a.name.clone(),
            email: a.email.clone(),
            role: role.into(),
        };
        Item {
            source_id: entry.source_id.clone(),
            title: entry.title.clone(),
            content: entry.content.clone(),
            kind: "event".into(),
            occurred_at: Some(rfc3339(entry.start)),
            people: entry
                .organizer
                .iter()
                .map(|o| person(o, "organizer"))
                .chain(entry.attendees.iter().map(|a| person(a, "attendee")))
                .collect(),
            source_uri: Some(uri.to_owned()),
            metadata: entry.metadata.to_string(),
        }
    }

    /// A to-do (kind `task`) or journal entry (kind `note`).
    fn record_item(record: &Record, uri: &str) -> Item {
        Item {
            source_id: record.source_id.clone(),
            title: record.title.clone(),
            content: record.content.clone(),
            kind: record.kind.as_str().into(),
            occurred_at: record.at.map(rfc3339),
            people: Vec::new(),
            source_uri: Some(uri.to_owned()),
            metadata: record.metadata.to_string(),
        }
    }

    levh_connector_sdk::export_connector!(Calendar);
}
