//! The `calendar` connector: one item per event inside a window around now, read from
//! `.ics` files (one file, or a directory of them). Recurring events are expanded inside
//! the window (one item per series, listing its occurrences), time zones converted to
//! UTC, and each bad file or event is one error.

pub mod parse;
pub mod series;
pub mod time;

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

#[cfg(test)]
mod tests {
    use super::*;

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

    use crate::parse::{Window, parse, rfc3339};
    use crate::series::{Entry, entries};

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

        fn sync(config: Config, _cursor: Option<String>) -> Result<Page, Error> {
            let path = levh_connector_sdk::required(&config, "ics_path")?;
            let past_days = levh_connector_sdk::integer(&config, "past_days", 30)?;
            let future_days = levh_connector_sdk::integer(&config, "future_days", 30)?;
            // The host hands plugins its clock (LEVH_NOW when set) as the WASI wall clock.
            let now: DateTime<Utc> = std::time::SystemTime::now().into();
            let window =
                Window::around(now, past_days, future_days).map_err(Error::InvalidConfig)?;
            let files = crate::ics_files(std::path::Path::new(path))
                .map_err(|e| Error::InvalidConfig(format!("`ics_path` {e}")))?;
            let mut items = Vec::new();
            let mut errors = Vec::new();
            for (name, file) in files {
                let fail = |message: String| ItemError {
                    source_id: Some(name.clone()),
                    location: name.clone(),
                    message,
                };
                let bytes = match std::fs::read(&file) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        errors.push(fail(e.to_string()));
                        continue;
                    }
                };
                match parse(&name, &bytes, &window) {
                    Ok(parsed) => {
                        let uri = format!("file:{}", file.display());
                        items.extend(entries(parsed.occurrences).iter().map(|e| item(e, &uri)));
                        errors.extend(parsed.errors.into_iter().map(|e| ItemError {
                            source_id: Some(e.location.clone()),
                            location: e.location,
                            message: e.message,
                        }));
                    }
                    Err(message) => errors.push(fail(message)),
                }
            }
            levh_connector_sdk::info(&format!(
                "{} events between {} and {}",
                items.len(),
                rfc3339(window.start),
                rfc3339(window.end)
            ));
            Ok(Page {
                items,
                errors,
                next_cursor: None,
                done: true,
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

    levh_connector_sdk::export_connector!(Calendar);
}
