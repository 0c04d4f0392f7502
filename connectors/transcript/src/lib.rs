//! The `transcript` connector: one item per meeting transcript, with its speakers, an
//! offline extractive summary and an excerpt.

pub mod parse;

#[cfg(target_arch = "wasm32")]
mod component {
    use std::path::{Path, PathBuf};

    use levh_connector_sdk::{
        Capability, Config, ConfigKey, ConfigType, Error, Guest, Item, ItemError, Manifest, Page,
        Person,
    };

    use crate::parse::{Meeting, parse};

    struct Transcripts;

    fn key(name: &str, value_type: ConfigType, default: Option<&str>, help: &str) -> ConfigKey {
        ConfigKey {
            name: name.into(),
            value_type,
            help: help.into(),
            required: false,
            default_value: default.map(str::to_owned),
        }
    }

    /// The transcripts to read, each with the name it is known by (its path relative to
    /// `transcript_dir`, or its file name).
    fn files(config: &Config) -> Result<Vec<(String, PathBuf)>, Error> {
        if let Some(path) = levh_connector_sdk::config_value(config, "transcript_path") {
            let path = PathBuf::from(path);
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Ok(vec![(name, path)]);
        }
        let Some(dir) = levh_connector_sdk::config_value(config, "transcript_dir") else {
            return Err(Error::InvalidConfig(
                "set `transcript_path` or `transcript_dir`".into(),
            ));
        };
        let root = Path::new(dir);
        let mut found = Vec::new();
        walk(root, root, &mut found)
            .map_err(|e| Error::InvalidConfig(format!("`transcript_dir` {dir}: {e}")))?;
        found.sort();
        Ok(found)
    }

    /// Every transcript under `dir`, in subfolders too (hidden ones skipped), whatever
    /// the case of its extension.
    fn walk(dir: &Path, root: &Path, found: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                // An unreadable subfolder is not the whole directory's failure.
                let _ = walk(&path, root, found);
            } else if crate::parse::is_transcript(&path.to_string_lossy()) {
                let name = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                found.push((name, path));
            }
        }
        Ok(())
    }

    impl Guest for Transcripts {
        fn manifest() -> Manifest {
            Manifest {
                id: "transcript".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "One memory per meeting transcript (.vtt, .srt, .sbv, .txt)".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![
                    key(
                        "transcript_path",
                        ConfigType::Path,
                        None,
                        "One transcript file.",
                    ),
                    key(
                        "transcript_dir",
                        ConfigType::Path,
                        None,
                        "A directory of transcripts.",
                    ),
                    key(
                        "max_chars",
                        ConfigType::Integer,
                        Some("4000"),
                        "Longest excerpt kept per meeting.",
                    ),
                ],
                capabilities: vec![
                    Capability::ReadPath("transcript_path".into()),
                    Capability::ReadPath("transcript_dir".into()),
                ],
            }
        }

        fn sync(config: Config, _cursor: Option<String>) -> Result<Page, Error> {
            let max_chars = levh_connector_sdk::integer(&config, "max_chars", 4000)? as usize;
            let mut items = Vec::new();
            let mut errors = Vec::new();
            for (name, path) in files(&config)? {
                let location = name.clone();
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        errors.push(ItemError {
                            source_id: Some(name),
                            location,
                            message: e.to_string(),
                        });
                        continue;
                    }
                };
                match parse(&name, &bytes) {
                    Ok(meeting) => {
                        // The file is stored without them; each one is named in the sync
                        // report. `skipped`, not an item error: the item itself is stored,
                        // and leaving out an unreadable cue is the format's own rule.
                        for cue in &meeting.dropped {
                            levh_connector_sdk::skipped(
                                &format!("{name}:{}", cue.line),
                                &format!(
                                    "cue dropped, the rest of the transcript kept: {}",
                                    cue.reason
                                ),
                            );
                        }
                        let mut item = item(&name, &path, meeting, max_chars);
                        // The meeting's time: the file says none, its modification time
                        // is the closest thing.
                        item.occurred_at = levh_connector_sdk::modified_at(&path);
                        items.push(item);
                    }
                    Err(message) => errors.push(ItemError {
                        source_id: Some(name),
                        location,
                        message,
                    }),
                }
            }
            // The whole folder (or file) in one page: a full listing, so a transcript
            // deleted or renamed since the last sync is retired.
            levh_connector_sdk::full_listing(true, true);
            Ok(Page {
                items,
                errors,
                next_cursor: None,
                done: true,
            })
        }
    }

    fn item(name: &str, path: &Path, meeting: Meeting, max_chars: usize) -> Item {
        let excerpt: String = meeting.text.chars().take(max_chars).collect();
        let speakers = meeting.speakers.join(", ");
        let mut content = format!("Meeting transcript {name}");
        if !speakers.is_empty() {
            content.push_str(&format!(" with {speakers}"));
        }
        content.push_str(&format!(".\nSummary:\n{}\n\n{excerpt}", meeting.summary));
        Item {
            source_id: name.to_owned(),
            title: name.to_owned(),
            content,
            kind: "transcript".into(),
            occurred_at: None,
            people: meeting.speakers.iter().map(|s| Person { name: Some(s.clone()), email: None, role: "speaker".into() }).collect(),
            source_uri: Some(format!("file:{}", path.display())),
            metadata: serde_json::json!({ "speakers": meeting.speakers, "cues": meeting.cues, "duration_seconds": meeting.duration_seconds, "dropped_cues": meeting.dropped.len() }).to_string(),
        }
    }

    levh_connector_sdk::export_connector!(Transcripts);
}
