//! The `local_files` connector: one item per text file under a directory.
//!
//! The walking and reading logic is plain Rust over `std::fs`, so it runs and is tested
//! natively; inside the component, `std::fs` is WASI's view of the granted directory.

pub mod scan;

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_connector_sdk::{
        Capability, Config, ConfigType, Error, Guest, Item, ItemError, Manifest, Page,
    };

    use crate::scan::{Options, scan};

    struct LocalFiles;

    use levh_connector_sdk::setting as key;

    impl Guest for LocalFiles {
        fn manifest() -> Manifest {
            Manifest {
                id: "local_files".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "One memory per text file of a directory".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![
                    key(
                        "directory",
                        ConfigType::Path,
                        true,
                        None,
                        "The directory to read (recursively).",
                    ),
                    key(
                        "include",
                        ConfigType::TextList,
                        false,
                        Some("**/*"),
                        "Globs of files to take.",
                    ),
                    key(
                        "exclude",
                        ConfigType::TextList,
                        false,
                        Some(""),
                        "Globs of files to leave out.",
                    ),
                    key(
                        "max_bytes",
                        ConfigType::Integer,
                        false,
                        Some("1000000"),
                        "Larger files are skipped, each named in the sync report.",
                    ),
                ],
                capabilities: vec![Capability::ReadPath("directory".into())],
            }
        }

        fn sync(config: Config, cursor: Option<String>) -> Result<Page, Error> {
            let directory = levh_connector_sdk::required(&config, "directory")?;
            let list = |key: &str, default: &str| -> Vec<String> {
                levh_connector_sdk::config_value(&config, key)
                    .unwrap_or(default)
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            let options = Options {
                include: list("include", "**/*"),
                exclude: list("exclude", ""),
                max_bytes: levh_connector_sdk::integer(&config, "max_bytes", 1_000_000)?,
            };
            let result = scan(std::path::Path::new(directory), &options, cursor.as_deref())
                .map_err(Error::InvalidConfig)?;
            // Every call without a cursor walks the whole folder: a file it does not name
            // was deleted (or renamed), and its memory is retired.
            levh_connector_sdk::full_listing(cursor.is_none(), result.done);
            // Passed over on purpose (binary, over max_bytes, a link): named in the sync
            // report as skipped, so a run counts them apart from files that failed.
            for (source_id, reason) in &result.skipped {
                levh_connector_sdk::skipped(source_id, reason);
            }
            Ok(Page {
                items: result
                    .files
                    .into_iter()
                    .map(|f| Item {
                        source_id: f.relative_path.clone(),
                        title: f.title,
                        content: f.content,
                        kind: "document".into(),
                        occurred_at: f.modified,
                        people: Vec::new(),
                        source_uri: Some(format!("file:{}", f.relative_path)),
                        metadata: f.metadata.to_string(),
                    })
                    .collect(),
                errors: result
                    .errors
                    .into_iter()
                    .map(|(location, message)| ItemError {
                        source_id: Some(location.clone()),
                        location,
                        message,
                    })
                    .collect(),
                next_cursor: result.next_cursor,
                done: result.done,
            })
        }
    }

    levh_connector_sdk::export_connector!(LocalFiles);
}
