//! Requests to the connectors: run, sync, grant.

use super::*;

/// Arguments of get_connector_help.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorArgs {
    /// The connector's id (list_connectors shows them).
    pub id: String,
}

/// Arguments of sync_connector.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    /// The connector's id.
    pub id: String,
    /// Its settings (get_connector_help lists them). Paths must already be granted by
    /// a person (`levh connector grant`); naming one here grants nothing.
    pub config: Option<BTreeMap<String, String>>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    pub dry_run: Option<bool>,
}

/// Arguments of connector_sync_status.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncStatusArgs {
    /// Only this connector.
    pub id: Option<String>,
    /// How many runs (default 10).
    pub limit: Option<usize>,
}

/// Sync body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBody {
    /// The connector's settings. Paths and hosts must already be granted by a person.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// A grant to give a connector, or take back: one directory or one host.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantBody {
    /// An absolute path of a directory on the server's machine: the connector may read it
    /// and everything under it.
    pub directory: Option<String>,
    /// A host it may connect to (`api.github.com`, `host:port` or a URL), if its manifest
    /// asks for one too.
    pub host: Option<String>,
    /// The workspace whose syncs may use it (default: the caller's): a grant belongs to
    /// one workspace.
    pub workspace: Option<String>,
}

impl GrantBody {
    /// The grant, checked: exactly one of the two; a directory absolute, and (when
    /// granting) one that exists.
    pub fn into_grant(self, granting: bool) -> Result<levh_core::sync::Grant, Error> {
        match (self.directory, self.host) {
            (Some(directory), None) => {
                let path = std::path::PathBuf::from(directory.trim());
                if !path.is_absolute() {
                    return Err(Error::invalid(format!(
                        "invalid directory: '{}' is not an absolute path",
                        path.display()
                    )));
                }
                if granting && !path.is_dir() {
                    return Err(Error::invalid(format!(
                        "invalid directory: {} is not a directory on this machine",
                        path.display()
                    )));
                }
                Ok(levh_core::sync::Grant::Directory(path))
            }
            (None, Some(host)) if !host.trim().is_empty() => {
                Ok(levh_core::sync::Grant::Host(host.trim().to_owned()))
            }
            (None, Some(_)) => Err(Error::invalid("invalid host: it is empty")),
            _ => Err(Error::invalid("give exactly one of directory and host")),
        }
    }
}
