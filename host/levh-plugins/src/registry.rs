//! Installed connectors and their grants, under `$LEVH_HOME/plugins/<id>/`:
//! `component.wasm` (third-party only; built-ins live in the binary) and `grants.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Connector, Grants, PluginError, PluginHost, sha256_hex};

/// The plugins directory.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct GrantsFile {
    #[serde(default)]
    read_paths: Vec<PathBuf>,
}

fn host_error(what: &str, error: impl std::fmt::Display) -> PluginError {
    PluginError::Host(format!("{what}: {error}"))
}

impl Registry {
    /// The registry in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn plugin_dir(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Ids of installed third-party connectors, sorted.
    pub fn installed(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("component.wasm").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        ids.sort();
        ids
    }

    /// An installed connector's component bytes.
    pub fn component(&self, id: &str) -> Option<Vec<u8>> {
        std::fs::read(self.plugin_dir(id).join("component.wasm")).ok()
    }

    /// Validates a component, checks its sha256 if one is given, and installs it under
    /// its manifest id. Built-in ids are reserved.
    pub fn install(
        &self,
        host: &PluginHost,
        source: &Path,
        expected_sha256: Option<&str>,
        reserved: &[&str],
    ) -> Result<Connector, PluginError> {
        let what = source.display().to_string();
        let bytes = std::fs::read(source).map_err(|e| PluginError::Invalid {
            what: what.clone(),
            reason: e.to_string(),
        })?;
        let sha256 = sha256_hex(&bytes);
        if let Some(expected) = expected_sha256
            && !expected.eq_ignore_ascii_case(&sha256)
        {
            return Err(PluginError::Invalid {
                what,
                reason: format!("its sha256 is {sha256}, not the expected {expected}"),
            });
        }
        let connector = host.load_connector(&what, &bytes)?;
        if reserved.contains(&connector.manifest.id.as_str()) {
            return Err(PluginError::Invalid {
                what,
                reason: format!(
                    "`{}` is the id of a built-in connector",
                    connector.manifest.id
                ),
            });
        }
        let dir = self.plugin_dir(&connector.manifest.id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the plugin directory", e))?;
        let temporary = dir.join(format!("component.wasm.tmp{}", std::process::id()));
        std::fs::write(&temporary, &bytes).map_err(|e| host_error("writing the component", e))?;
        std::fs::rename(&temporary, dir.join("component.wasm"))
            .map_err(|e| host_error("installing the component", e))?;
        Ok(connector)
    }

    /// Removes an installed connector and its grants. False when it was not installed.
    pub fn remove(&self, id: &str) -> Result<bool, PluginError> {
        let dir = self.plugin_dir(id);
        if !dir.exists() {
            return Ok(false);
        }
        std::fs::remove_dir_all(&dir).map_err(|e| host_error("removing the plugin", e))?;
        Ok(true)
    }

    /// What a connector was granted.
    pub fn grants(&self, id: &str) -> Grants {
        let text =
            std::fs::read_to_string(self.plugin_dir(id).join("grants.toml")).unwrap_or_default();
        let file: GrantsFile = toml::from_str(&text).unwrap_or_default();
        Grants {
            read_paths: file.read_paths,
        }
    }

    fn save_grants(&self, id: &str, grants: &Grants) -> Result<(), PluginError> {
        let dir = self.plugin_dir(id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the plugin directory", e))?;
        let text = toml::to_string(&GrantsFile {
            read_paths: grants.read_paths.clone(),
        })
        .map_err(|e| host_error("writing grants", e))?;
        std::fs::write(dir.join("grants.toml"), text).map_err(|e| host_error("writing grants", e))
    }

    /// Grants read access to a directory (stored canonical).
    pub fn grant(&self, id: &str, path: &Path) -> Result<PathBuf, PluginError> {
        let path = path
            .canonicalize()
            .map_err(|e| host_error(&format!("{}", path.display()), e))?;
        let mut grants = self.grants(id);
        if !grants.read_paths.contains(&path) {
            grants.read_paths.push(path.clone());
        }
        self.save_grants(id, &grants)?;
        Ok(path)
    }

    /// Takes a grant back. False when it was not granted.
    pub fn revoke(&self, id: &str, path: &Path) -> Result<bool, PluginError> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let mut grants = self.grants(id);
        let before = grants.read_paths.len();
        grants.read_paths.retain(|p| p != &canonical && p != path);
        let removed = grants.read_paths.len() != before;
        self.save_grants(id, &grants)?;
        Ok(removed)
    }
}
