//! The crate `levh connector new` writes: a working connector that reads `.txt` files
//! from a granted directory, to be edited into whatever the author needs.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

pub fn create(dir: &Path, name: &str, sdk: &Path) -> Result<()> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || name.is_empty()
    {
        bail!("'{name}' is not a valid connector name: use letters, digits, '-' and '_'");
    }
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!("{} exists and is not empty", dir.display());
    }
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    let cargo = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
levh-connector-sdk = {{ path = "{sdk}" }}

# A connector is a small, standalone crate.
[workspace]

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
strip = true
panic = "abort"
"#,
        sdk = sdk.display()
    );
    let lib = format!(
        r#"//! {name}: a levh connector. `levh sync {name} --config directory=DIR` makes one
//! memory of each `.txt` file in DIR.

use levh_connector_sdk::{{Capability, Config, ConfigKey, ConfigType, Error, Guest, Item, ItemError, Manifest, Page}};

struct Connector;

impl Guest for Connector {{
    fn manifest() -> Manifest {{
        Manifest {{
            id: "{name}".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "One memory per .txt file of a directory".into(),
            api_version: levh_connector_sdk::API_VERSION.into(),
            config: vec![ConfigKey {{
                name: "directory".into(),
                value_type: ConfigType::Path,
                help: "The directory to read.".into(),
                required: true,
                default_value: None,
            }}],
            // Ask only for what you need: the host grants nothing else.
            capabilities: vec![Capability::ReadPath("directory".into())],
        }}
    }}

    fn sync(config: Config, _cursor: Option<String>) -> Result<Page, Error> {{
        let directory = levh_connector_sdk::required(&config, "directory")?;
        let entries = std::fs::read_dir(directory).map_err(|e| Error::InvalidConfig(format!("{{directory}}: {{e}}")))?;
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for entry in entries.flatten() {{
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("txt") {{
                continue;
            }}
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match std::fs::read_to_string(&path) {{
                Ok(text) => items.push(Item {{
                    source_id: name.clone(),
                    title: name,
                    content: text,
                    kind: "note".into(),
                    occurred_at: None,
                    people: Vec::new(),
                    source_uri: None,
                    metadata: "{{}}".into(),
                }}),
                Err(e) => errors.push(ItemError {{ source_id: Some(name.clone()), location: name, message: e.to_string() }}),
            }}
        }}
        Ok(Page {{ items, errors, next_cursor: None, done: true }})
    }}
}}

levh_connector_sdk::export_connector!(Connector);
"#
    );
    std::fs::write(dir.join("Cargo.toml"), cargo)?;
    std::fs::write(dir.join("src/lib.rs"), lib)?;
    std::fs::write(dir.join(".gitignore"), "/target\n")?;
    Ok(())
}
