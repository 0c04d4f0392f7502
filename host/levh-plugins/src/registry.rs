//! Installed connectors and their grants (and, below, installed scorers), under `$LEVH_HOME/plugins/<id>/`:
//! `component.wasm` (third-party only; built-ins live in the binary) and `grants.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use levh_core::Workspace;

use crate::{Connector, Credential, Grants, Origin, PluginError, PluginHost, Scorer, sha256_hex};

/// The plugins directory.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

/// A connector's `grants.toml`. Grants belong to a workspace: a directory granted for one
/// is not readable by another workspace's syncs. The top-level lists are the `default`
/// workspace's (and what files written before workspaces had grants meant); every other
/// workspace has a `[workspaces.NAME]` table.
#[derive(Debug, Default, Serialize, Deserialize)]
struct GrantsFile {
    #[serde(default)]
    read_paths: Vec<PathBuf>,
    /// `host:port`, normalised.
    #[serde(default)]
    http_hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    workspaces: std::collections::BTreeMap<String, WorkspaceGrants>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct WorkspaceGrants {
    #[serde(default)]
    read_paths: Vec<PathBuf>,
    #[serde(default)]
    http_hosts: Vec<String>,
}

impl GrantsFile {
    /// The lists of `workspace` (created empty when it has none).
    fn of(&mut self, workspace: &Workspace) -> (&mut Vec<PathBuf>, &mut Vec<String>) {
        if workspace.as_str() == Workspace::default().as_str() {
            return (&mut self.read_paths, &mut self.http_hosts);
        }
        let grants = self
            .workspaces
            .entry(workspace.as_str().to_owned())
            .or_default();
        (&mut grants.read_paths, &mut grants.http_hosts)
    }
}

/// The file holding a plugin's credential, inside its directory.
const CREDENTIAL_FILE: &str = "credential";

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
        installed_ids(&self.dir)
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
        let bytes = std::fs::read(source).map_err(|e| PluginError::Refused {
            what: what.clone(),
            kind: "connector",
            reason: format!("it cannot be read ({e})"),
        })?;
        let sha256 = sha256_hex(&bytes);
        if let Some(expected) = expected_sha256
            && !expected.eq_ignore_ascii_case(&sha256)
        {
            return Err(PluginError::Refused {
                what,
                kind: "connector",
                reason: format!("its sha256 is {sha256}, not the expected {expected}"),
            });
        }
        let connector = host.load_connector(&what, &bytes)?;
        if reserved.contains(&connector.manifest.id.as_str()) {
            return Err(PluginError::Refused {
                what,
                kind: "connector",
                reason: format!(
                    "`{}` is the id of a built-in connector",
                    connector.manifest.id
                ),
            });
        }
        let dir = self.plugin_dir(&connector.manifest.id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the plugin directory", e))?;
        write_replacing(&dir.join("component.wasm"), &bytes)?;
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

    /// What a connector was granted for `workspace`, with its credential if one is stored. A grants file
    /// that cannot be read or parsed is an error naming it — never "no grants", which
    /// the next grant would then write over.
    pub fn grants(&self, id: &str, workspace: &Workspace) -> Result<Grants, PluginError> {
        let mut file = self.grants_file(id)?;
        let (read_paths, http_hosts) = file.of(workspace);
        Ok(Grants {
            read_paths: std::mem::take(read_paths),
            http_hosts: http_hosts
                .iter()
                .filter_map(|h| Origin::parse(h).ok())
                .collect(),
            credential: self.credential(id),
        })
    }

    fn grants_file(&self, id: &str) -> Result<GrantsFile, PluginError> {
        let path = self.plugin_dir(id).join("grants.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GrantsFile::default()),
            Err(e) => return Err(host_error(&format!("reading {}", path.display()), e)),
        };
        toml::from_str(&text).map_err(|e| {
            PluginError::Host(format!(
                "{} is not a valid grants file ({}); fix it, or delete it and grant again \
                 with `levh connector grant {id} …`",
                path.display(),
                e.message()
            ))
        })
    }

    fn save_grants(&self, id: &str, file: &GrantsFile) -> Result<(), PluginError> {
        let dir = self.plugin_dir(id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the plugin directory", e))?;
        let text = toml::to_string(file).map_err(|e| host_error("writing grants", e))?;
        write_replacing(&dir.join("grants.toml"), text.as_bytes())
    }

    /// Lets a connector connect to a host (`host`, `host:port` or a URL; stored as
    /// `host:port`). It still reaches it only if its manifest asks for it.
    pub fn grant_host(
        &self,
        id: &str,
        workspace: &Workspace,
        host: &str,
    ) -> Result<Origin, PluginError> {
        let origin = Origin::parse(host).map_err(|e| host_error("the host", e))?;
        let mut file = self.grants_file(id)?;
        let text = origin.to_string();
        let (_, hosts) = file.of(workspace);
        if !hosts.contains(&text) {
            hosts.push(text);
        }
        self.save_grants(id, &file)?;
        Ok(origin)
    }

    /// Takes a host grant of `workspace` back. False when it was not granted.
    pub fn revoke_host(
        &self,
        id: &str,
        workspace: &Workspace,
        host: &str,
    ) -> Result<bool, PluginError> {
        let origin = Origin::parse(host).map_err(|e| host_error("the host", e))?;
        let mut file = self.grants_file(id)?;
        let (_, hosts) = file.of(workspace);
        let before = hosts.len();
        hosts.retain(|h| h != &origin.to_string());
        let removed = hosts.len() != before;
        self.save_grants(id, &file)?;
        Ok(removed)
    }

    /// Stores the user's token for a connector: a file readable by the user alone
    /// (0600, in a 0700 directory), beside the database it protects. The OS keyring was
    /// considered and not chosen: headless servers, containers and CI have none, and a
    /// memory server must run there.
    pub fn set_credential(&self, id: &str, token: &str) -> Result<(), PluginError> {
        let token = token.trim();
        if token.is_empty() || token.contains(['\n', '\r']) {
            return Err(host_error("the token", "it must be one non-empty line"));
        }
        let dir = self.plugin_dir(id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the plugin directory", e))?;
        restrict(&dir, 0o700)?;
        let path = dir.join(CREDENTIAL_FILE);
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(format!(".tmp{}", std::process::id()));
        let temporary = PathBuf::from(temporary);
        // Created private, then filled: the token is never in a world-readable file.
        std::fs::write(&temporary, b"").map_err(|e| host_error("writing the token", e))?;
        restrict(&temporary, 0o600)?;
        std::fs::write(&temporary, token).map_err(|e| host_error("writing the token", e))?;
        std::fs::rename(&temporary, &path).map_err(|e| host_error("storing the token", e))
    }

    /// Forgets a connector's token. False when none was stored.
    pub fn clear_credential(&self, id: &str) -> Result<bool, PluginError> {
        match std::fs::remove_file(self.plugin_dir(id).join(CREDENTIAL_FILE)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(host_error("removing the token", e)),
        }
    }

    /// A connector's stored token.
    pub fn credential(&self, id: &str) -> Option<Credential> {
        let text = std::fs::read_to_string(self.plugin_dir(id).join(CREDENTIAL_FILE)).ok()?;
        (!text.trim().is_empty()).then(|| Credential::new(&text))
    }

    /// Grants read access to a directory (stored canonical).
    pub fn grant(
        &self,
        id: &str,
        workspace: &Workspace,
        path: &Path,
    ) -> Result<PathBuf, PluginError> {
        let path = path
            .canonicalize()
            .map_err(|e| host_error(&format!("{}", path.display()), e))?;
        let mut file = self.grants_file(id)?;
        let (paths, _) = file.of(workspace);
        if !paths.contains(&path) {
            paths.push(path.clone());
        }
        self.save_grants(id, &file)?;
        Ok(path)
    }

    /// Takes a grant of `workspace` back. False when it was not granted.
    pub fn revoke(
        &self,
        id: &str,
        workspace: &Workspace,
        path: &Path,
    ) -> Result<bool, PluginError> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let mut file = self.grants_file(id)?;
        let (paths, _) = file.of(workspace);
        let before = paths.len();
        paths.retain(|p| p != &canonical && p != path);
        let removed = paths.len() != before;
        self.save_grants(id, &file)?;
        Ok(removed)
    }
}

/// Installed scorers and the active one, under `$LEVH_HOME/scorers/`:
/// `<id>/component.wasm` (third-party only) and `active` (the id recall uses).
#[derive(Debug, Clone)]
pub struct ScorerRegistry {
    dir: PathBuf,
}

impl ScorerRegistry {
    /// The registry in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Ids of installed third-party scorers, sorted.
    pub fn installed(&self) -> Vec<String> {
        installed_ids(&self.dir)
    }

    /// An installed scorer's component bytes.
    pub fn component(&self, id: &str) -> Option<Vec<u8>> {
        std::fs::read(self.dir.join(id).join("component.wasm")).ok()
    }

    /// A scorer's component bytes: built-in first (as levh-builtins embeds them), then
    /// installed; an unknown id names the ones there are.
    pub fn resolve(&self, id: &str, builtins: crate::runtime::Builtins) -> Result<Vec<u8>, String> {
        if let Some((_, bytes)) = builtins.iter().find(|(name, _)| *name == id) {
            return Ok(bytes.to_vec());
        }
        self.component(id).ok_or_else(|| {
            let mut known: Vec<String> = builtins.iter().map(|(id, _)| (*id).to_owned()).collect();
            known.extend(self.installed());
            format!("no scorer `{id}` (available: {})", known.join(", "))
        })
    }

    /// Validates a scorer component and installs it under its manifest id. Built-in ids
    /// are reserved.
    pub fn install(
        &self,
        host: &PluginHost,
        source: &Path,
        reserved: &[&str],
    ) -> Result<Scorer, PluginError> {
        let what = source.display().to_string();
        let bytes = std::fs::read(source).map_err(|e| PluginError::Refused {
            what: what.clone(),
            kind: "scorer",
            reason: format!("it cannot be read ({e})"),
        })?;
        let scorer = host.load_scorer(&what, &bytes)?;
        if reserved.contains(&scorer.manifest.id.as_str()) {
            return Err(PluginError::Refused {
                what,
                kind: "scorer",
                reason: format!("`{}` is the id of a built-in scorer", scorer.manifest.id),
            });
        }
        let dir = self.dir.join(&scorer.manifest.id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| host_error("creating the scorer directory", e))?;
        write_replacing(&dir.join("component.wasm"), &bytes)?;
        Ok(scorer)
    }

    /// Removes an installed scorer; if it was active, recall goes back to the H-score.
    /// False when it was not installed.
    pub fn remove(&self, id: &str) -> Result<bool, PluginError> {
        let dir = self.dir.join(id);
        if !dir.exists() {
            return Ok(false);
        }
        if self.active().as_deref() == Some(id) {
            self.set_active(None)?;
        }
        std::fs::remove_dir_all(&dir).map_err(|e| host_error("removing the scorer", e))?;
        Ok(true)
    }

    /// The scorer recall uses, if any.
    pub fn active(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("active")).ok()?;
        let id = text.trim();
        (!id.is_empty()).then(|| id.to_owned())
    }

    /// Makes `id` the active scorer, or none.
    pub fn set_active(&self, id: Option<&str>) -> Result<(), PluginError> {
        let path = self.dir.join("active");
        match id {
            Some(id) => {
                std::fs::create_dir_all(&self.dir)
                    .map_err(|e| host_error("creating the scorers directory", e))?;
                write_replacing(&path, format!("{id}\n").as_bytes())
            }
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(host_error("turning the scorer off", e))
                }
                _ => Ok(()),
            },
        }
    }
}

/// Names of the subdirectories of `dir` that hold a `component.wasm`, sorted.
fn installed_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("component.wasm").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    ids.sort();
    ids
}

/// Sets Unix permissions (other platforms keep their defaults and per-user home).
fn restrict(path: &Path, mode: u32) -> Result<(), PluginError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| host_error("restricting permissions", e))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Writes a file by writing a sibling and renaming it over, so a reader never sees half.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), PluginError> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, bytes).map_err(|e| host_error("writing", e))?;
    std::fs::rename(&temporary, path).map_err(|e| host_error("replacing", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scorer_resolves_built_in_first_then_installed_and_an_unknown_one_names_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let registry = ScorerRegistry::new(dir.path().to_owned());
        let builtins: crate::runtime::Builtins = &[("recency", b"built-in bytes")];
        std::fs::create_dir_all(dir.path().join("team")).unwrap();
        std::fs::write(dir.path().join("team/component.wasm"), b"installed bytes").unwrap();
        assert_eq!(
            registry.resolve("recency", builtins).unwrap(),
            b"built-in bytes"
        );
        assert_eq!(
            registry.resolve("team", builtins).unwrap(),
            b"installed bytes"
        );
        let unknown = registry.resolve("nope", builtins).unwrap_err();
        assert!(
            unknown.contains("no scorer `nope`") && unknown.contains("recency"),
            "{unknown}"
        );
    }
}
