//! The crate `levh connector new` writes: a working connector that reads `.txt` files
//! from a granted directory, to be edited into whatever the author needs.
//!
//! The connector SDK and the WIT package it binds are embedded in this binary and
//! written beside the new crate (`sdk/`), so the crate builds wherever levh was
//! installed from — no path into the source tree levh was built in, no registry release
//! of the SDK needed. `--sdk PATH` depends on another copy instead (SDK development).

use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// Where the WIT package sits inside the SDK crate; [`SDK_FILES`] rewrites the SDK's
/// bindings to find it there.
const WIT_IN_SOURCE_TREE: &str = "../../wit/levh-plugin@0.1.2";
const WIT_IN_VENDORED_SDK: &str = "wit/levh-plugin@0.1.2";

/// The SDK crate and the WIT package, as shipped with this levh: (path inside `sdk/`,
/// contents).
const SDK_FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../../../connectors/sdk/Cargo.toml"),
    ),
    (
        "src/lib.rs",
        include_str!("../../../../connectors/sdk/src/lib.rs"),
    ),
    (
        "src/http.rs",
        include_str!("../../../../connectors/sdk/src/http.rs"),
    ),
    (
        "src/mutations.rs",
        include_str!("../../../../connectors/sdk/src/mutations.rs"),
    ),
    (
        "wit/levh-plugin@0.1.2/types.wit",
        include_str!("../../../../wit/levh-plugin@0.1.2/types.wit"),
    ),
    (
        "wit/levh-plugin@0.1.2/worlds.wit",
        include_str!("../../../../wit/levh-plugin@0.1.2/worlds.wit"),
    ),
];

/// Writes the embedded SDK into `dir` (`dir/sdk`), its bindings pointed at the WIT
/// package beside them.
fn write_sdk(dir: &Path) -> Result<()> {
    for (path, contents) in SDK_FILES {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let contents = if *path == "src/lib.rs" {
            if !contents.contains(WIT_IN_SOURCE_TREE) {
                bail!("the embedded connector SDK no longer names {WIT_IN_SOURCE_TREE}");
            }
            contents.replace(WIT_IN_SOURCE_TREE, WIT_IN_VENDORED_SDK)
        } else {
            (*contents).to_owned()
        };
        std::fs::write(&target, contents)
            .with_context(|| format!("writing {}", target.display()))?;
    }
    Ok(())
}

/// Creates the crate in `dir`. With `sdk`, it depends on that SDK crate; without, on the
/// copy this levh writes into `dir/sdk`.
pub fn create(dir: &Path, name: &str, sdk: Option<&Path>) -> Result<()> {
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
        // TOML basic strings: a Windows path's backslashes must not become escapes.
        sdk = sdk.map_or_else(
            || "sdk".to_owned(),
            |p| p.display().to_string().replace('\\', "/")
        )
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
    std::fs::write(dir.join("README.md"), readme(name))?;
    if sdk.is_none() {
        write_sdk(&dir.join("sdk"))?;
        if let Some(lock) = lock(name) {
            std::fs::write(dir.join("Cargo.lock"), lock)?;
        }
    }
    Ok(())
}

/// The new crate's `Cargo.lock`: the SDK's dependencies at the versions levh's tests built
/// the template with (`scripts/connector-template-lock.sh` writes it), so a first build
/// does not pick whatever is newest that day. None while the script has not written one
/// (the crate then resolves its own; the template test builds `--locked` and fails).
fn lock(name: &str) -> Option<String> {
    const TEMPLATE: &str = include_str!("template.Cargo.lock");
    const ROOT: &str = "name = \"connector-template\"";
    TEMPLATE
        .contains(ROOT)
        .then(|| TEMPLATE.replace(ROOT, &format!("name = \"{name}\"")))
}

/// The new crate's README: the commands from build to sync, as they run from its folder.
fn readme(name: &str) -> String {
    let file = name.replace('-', "_");
    format!(
        r#"# {name}

A levh connector: it reads the `.txt` files of a folder. Edit `src/lib.rs` (its
`manifest()` says what it asks for; `sync(config, cursor)` returns pages of items).

Run these from this folder:

```sh
rustup target add wasm32-wasip2                      # once
cargo build --target wasm32-wasip2 --release
# try it against a throwaway store: nothing is installed or kept
levh connector run target/wasm32-wasip2/release/{file}.wasm --config directory=$HOME/notes
# install it, let it read the folder, sync
levh connector add target/wasm32-wasip2/release/{file}.wasm --grant $HOME/notes
levh sync {name} --config directory=$HOME/notes
```

With `CARGO_TARGET_DIR` set, the component is `$CARGO_TARGET_DIR/wasm32-wasip2/release/{file}.wasm`.
`levh connector add` refuses a component that imports what its manifest does not ask for
(wasi:http without an http host) or a plugin API this levh does not serve, and says why.

`Cargo.lock` pins the SDK's dependencies at the versions this levh was tested with; keep
it in version control (`cargo update` moves them when you choose).
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_sdk_and_the_wit_package_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut on_disk = vec!["Cargo.toml".to_owned()];
        for (dir, prefix) in [
            ("connectors/sdk/src", "src"),
            ("wit/levh-plugin@0.1.2", "wit/levh-plugin@0.1.2"),
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                on_disk.push(format!("{prefix}/{name}"));
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = SDK_FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
        embedded.sort();
        assert_eq!(
            embedded, on_disk,
            "a new SDK or WIT file must be added to SDK_FILES"
        );
    }

    #[test]
    fn the_template_names_no_path_of_the_tree_levh_was_built_in() {
        let dir = tempfile::tempdir().unwrap();
        create(&dir.path().join("x"), "x", None).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .unwrap();
        let mut stack = vec![dir.path().to_path_buf()];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains(&*root.to_string_lossy()),
                    "{} names {}",
                    path.display(),
                    root.display()
                );
                assert!(
                    !text.contains("../../wit"),
                    "{} reaches outside the crate",
                    path.display()
                );
            }
        }
        assert!(
            dir.path()
                .join("x/sdk/wit/levh-plugin@0.1.2/worlds.wit")
                .is_file()
        );
    }
}
