//! The `obsidian` connector: one item per Markdown note of a vault.

pub mod note;

#[cfg(target_arch = "wasm32")]
mod component {
    use std::path::Path;

    use levh_connector_sdk::{
        Capability, Config, ConfigKey, ConfigType, Error, Guest, Item, ItemError, Manifest, Page,
    };

    use crate::note::{parse, vault_notes};

    struct Obsidian;

    impl Guest for Obsidian {
        fn manifest() -> Manifest {
            Manifest {
                id: "obsidian".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "One memory per note of an Obsidian vault".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![ConfigKey {
                    name: "vault_path".into(),
                    value_type: ConfigType::Path,
                    help: "The vault's folder.".into(),
                    required: true,
                    default_value: None,
                }],
                capabilities: vec![Capability::ReadPath("vault_path".into())],
            }
        }

        fn sync(config: Config, _cursor: Option<String>) -> Result<Page, Error> {
            let vault = levh_connector_sdk::required(&config, "vault_path")?;
            let (paths, skipped) = vault_notes(Path::new(vault)).map_err(Error::InvalidConfig)?;
            let mut items = Vec::new();
            let mut errors = Vec::new();
            for relative in paths {
                let path = Path::new(vault).join(&relative);
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        errors.push(ItemError {
                            source_id: Some(relative.clone()),
                            location: relative,
                            message: e.to_string(),
                        });
                        continue;
                    }
                };
                match parse(&relative, &bytes) {
                    Ok(note) => items.push(Item {
                        source_id: relative.clone(),
                        title: note.title.clone(),
                        content: note.body.clone(),
                        kind: "note".into(),
                        // The note's own date, else when the file was last changed
                        // (as `local_files` dates a file), never the time of the sync.
                        occurred_at: note
                            .date
                            .clone()
                            .or_else(|| levh_connector_sdk::modified_at(&path)),
                        people: Vec::new(),
                        source_uri: Some(format!("obsidian:{relative}")),
                        metadata: note.metadata().to_string(),
                    }),
                    Err(message) => errors.push(ItemError {
                        source_id: Some(relative.clone()),
                        location: relative,
                        message,
                    }),
                }
            }
            // One page holds the whole vault: a note it does not name was deleted or
            // renamed, and its memory is retired.
            levh_connector_sdk::full_listing(true, true);
            if skipped > 0 {
                levh_connector_sdk::info(&format!(
                    "skipped {skipped} attachments and settings files"
                ));
            }
            Ok(Page {
                items,
                errors,
                next_cursor: None,
                done: true,
            })
        }
    }

    levh_connector_sdk::export_connector!(Obsidian);
}
