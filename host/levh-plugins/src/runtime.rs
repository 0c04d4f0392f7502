//! The connector runtime: the one place that finds a connector's component (built in or
//! installed), checks the settings a caller gives against its manifest, merges the
//! grants, and runs it on the process's one [`PluginHost`]. `levh sync` uses its parts;
//! MCP and REST reach it as levh-core's [`Connectors`] trait, with the stored grants only
//! (an agent cannot grant a connector anything).

use std::borrow::Cow;
use std::sync::Arc;

pub use levh_core::sync::ConnectorOrigin;
use levh_core::sync::{
    BrokenConnector, CatalogEntry, ConnectorCatalog, ConnectorError, ConnectorHelp,
    ConnectorSummary, Connectors, FetchError, FetchFailure, Grant, SyncOptions, SyncReport,
    SyncRequest,
};
use levh_core::{Levh, Scope};

use crate::{Connector, ConnectorSource, Manifest, PluginError, PluginHost, Registry};

/// Built-in components by id, as levh-builtins embeds them.
pub type Builtins = &'static [(&'static str, &'static [u8])];

/// Connectors on one plugin host. Cheap to share: every MCP session and REST request of
/// a process uses the same engine, epoch thread and compiled-component cache.
#[derive(Debug, Clone)]
pub struct ConnectorRuntime {
    host: Arc<PluginHost>,
    registry: Registry,
    builtins: Builtins,
}

impl ConnectorRuntime {
    /// A runtime over `host`, with the connectors of `registry` and `builtins`.
    pub fn new(host: Arc<PluginHost>, registry: Registry, builtins: Builtins) -> Self {
        Self {
            host,
            registry,
            builtins,
        }
    }

    /// The plugin host.
    pub fn host(&self) -> &PluginHost {
        &self.host
    }

    /// The installed connectors and their grants.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Every connector id: built-in ones first, then installed ones.
    pub fn ids(&self) -> Vec<(String, ConnectorOrigin)> {
        ids(&self.registry, self.builtins)
    }

    /// A connector's component bytes: built-in first, then installed.
    pub fn component(&self, id: &str) -> Result<Cow<'static, [u8]>, ConnectorError> {
        component(&self.registry, self.builtins, id)
    }

    /// Compiles (or loads from the cache) a connector and reads its manifest.
    pub fn load(&self, id: &str) -> Result<Connector, ConnectorError> {
        let bytes = self.component(id)?;
        self.host
            .load_connector(id, &bytes)
            .map_err(|e| fetch_error(&e))
    }

    /// The grants a run gets: those a person stored and, when a person typed the settings
    /// themselves (`levh sync --config directory=…`), the paths named in them — a person
    /// may give what is theirs. Agents (MCP, REST) get the stored grants only.
    pub fn grants(
        &self,
        connector: &Connector,
        workspace: &levh_core::Workspace,
        config: &[(String, String)],
        typed_by_a_person: bool,
    ) -> Result<crate::Grants, ConnectorError> {
        let id = &connector.manifest.id;
        let mut grants = self
            .registry
            .grants(id, workspace)
            .map_err(|e| fetch_error(&e))?;
        if typed_by_a_person {
            for (key, value) in config {
                let reads = connector
                    .manifest
                    .capabilities
                    .iter()
                    .any(|c| matches!(c, crate::Capability::ReadPath(k) if k == key));
                if reads {
                    let path = std::path::Path::new(value).canonicalize().map_err(|e| {
                        FetchError::new(
                            FetchFailure::InvalidConfig,
                            format!("--config {key}={value}: {e}"),
                        )
                    })?;
                    grants.read_paths.push(crate::grant_root(&path));
                }
            }
        }
        Ok(grants)
    }

    /// A source over `connector` with these settings and grants, for
    /// [`Levh::sync`](levh_core::Levh::sync).
    pub fn source<'a>(
        &'a self,
        connector: &'a Connector,
        config: Vec<(String, String)>,
        grants: crate::Grants,
    ) -> ConnectorSource<'a> {
        ConnectorSource::new(&self.host, connector, config, grants)
    }
}

/// Every connector id: built-in ones first, then installed ones.
fn ids(registry: &Registry, builtins: Builtins) -> Vec<(String, ConnectorOrigin)> {
    builtins
        .iter()
        .map(|(id, _)| ((*id).to_owned(), ConnectorOrigin::BuiltIn))
        .chain(
            registry
                .installed()
                .into_iter()
                .map(|id| (id, ConnectorOrigin::Installed)),
        )
        .collect()
}

/// A connector's component bytes, built-in first, then installed; or the error that
/// names the connectors there are. Needs no plugin engine.
pub fn component(
    registry: &Registry,
    builtins: Builtins,
    id: &str,
) -> Result<Cow<'static, [u8]>, ConnectorError> {
    if let Some((_, bytes)) = builtins.iter().find(|(name, _)| *name == id) {
        return Ok(Cow::Borrowed(bytes));
    }
    registry
        .component(id)
        .map(Cow::Owned)
        .ok_or_else(|| ConnectorError::Unknown {
            id: id.to_owned(),
            available: ids(registry, builtins)
                .into_iter()
                .map(|(id, _)| id)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Checks a grant against what the manifest asks for: a directory only for a connector
/// that reads a path, a host only one it names (or one of its settings names, such as a
/// self-hosted server's address). A grant it never asked for would be listed as granted
/// and still refused at run time; it is refused here, naming what it does ask for.
pub fn check_grant(manifest: &Manifest, grant: &Grant) -> Result<(), String> {
    let id = &manifest.id;
    let asks = if manifest.capabilities.is_empty() {
        "nothing".to_owned()
    } else {
        manifest
            .capabilities
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match grant {
        Grant::Directory(dir) => {
            let reads = manifest
                .capabilities
                .iter()
                .any(|c| matches!(c, crate::Capability::ReadPath(_)));
            if reads {
                return Ok(());
            }
            Err(format!(
                "{id} reads no directory, so {} cannot be granted to it (it asks to: {asks}); nothing was granted",
                dir.display()
            ))
        }
        Grant::Host(host) => {
            let origin = crate::Origin::parse(host)?;
            let named = manifest.capabilities.iter().any(|c| match c {
                crate::Capability::HttpHost(target) => {
                    manifest.config.iter().any(|key| &key.name == target)
                        || crate::Origin::parse(target).is_ok_and(|asked| asked == origin)
                }
                crate::Capability::ReadPath(_) => false,
            });
            if named {
                return Ok(());
            }
            Err(format!(
                "{id} does not ask to connect to {origin} (it asks to: {asks}); nothing was granted"
            ))
        }
    }
}

/// Checks the settings a caller gives against the manifest: every required one present,
/// none the connector does not know. The words name the setting and what it is for.
pub fn check_config(manifest: &Manifest, config: &[(String, String)]) -> Result<(), FetchError> {
    let id = &manifest.id;
    let invalid = |message: String| FetchError::new(FetchFailure::InvalidConfig, message);
    for key in manifest.config.iter().filter(|k| k.required) {
        if !config.iter().any(|(k, _)| k == &key.name) {
            return Err(invalid(format!(
                "invalid config: connector {id} needs --config {name}=… (`config.{name}` over MCP and REST): {help}",
                name = key.name,
                help = key.help
            )));
        }
    }
    for (key, _) in config {
        if !manifest.config.iter().any(|k| &k.name == key) {
            let known: Vec<&str> = manifest.config.iter().map(|k| k.name.as_str()).collect();
            return Err(invalid(format!(
                "invalid config: connector {id} has no setting `{key}` (it knows: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// A plugin error as the sync's typed failure.
/// A grant the registry refused (a host that does not parse, a path that cannot be
/// resolved): the caller's to fix.
fn invalid_grant(error: &PluginError) -> ConnectorError {
    ConnectorError::Fetch(FetchError::new(
        FetchFailure::InvalidConfig,
        error.to_string(),
    ))
}

pub(crate) fn fetch_error(error: &PluginError) -> ConnectorError {
    ConnectorError::Fetch(FetchError::new(
        crate::source::failure_of(error),
        error.to_string(),
    ))
}

impl Connectors for ConnectorRuntime {
    fn list(&self, workspace: &levh_core::Workspace) -> Result<ConnectorCatalog, ConnectorError> {
        let mut connectors = Vec::new();
        for (id, origin) in self.ids() {
            // One connector that cannot load, or whose grants file is unreadable, is that
            // entry's error, not the catalog's.
            let loaded = self.load(&id).and_then(|c| {
                let grants = self
                    .registry
                    .grants(&id, workspace)
                    .map_err(|e| fetch_error(&e))?;
                Ok((c, grants))
            });
            connectors.push(match loaded {
                Ok((c, grants)) => CatalogEntry::Ready(ConnectorSummary {
                    id: c.manifest.id,
                    version: c.manifest.version,
                    origin,
                    description: c.manifest.description,
                    capabilities: c.manifest.capabilities,
                    granted_paths: grants.read_paths,
                    granted_hosts: grants.http_hosts.iter().map(|h| h.to_string()).collect(),
                }),
                Err(e) => CatalogEntry::Broken(BrokenConnector {
                    id,
                    origin,
                    error: e.to_string(),
                }),
            });
        }
        Ok(ConnectorCatalog { connectors })
    }

    fn help(
        &self,
        id: &str,
        workspace: &levh_core::Workspace,
    ) -> Result<ConnectorHelp, ConnectorError> {
        let connector = self.load(id)?;
        let grants = self
            .registry
            .grants(id, workspace)
            .map_err(|e| fetch_error(&e))?;
        Ok(ConnectorHelp {
            manifest: connector.manifest,
            workspace: workspace.clone(),
            granted_paths: grants.read_paths,
            granted_hosts: grants.http_hosts.iter().map(|h| h.to_string()).collect(),
            token_stored: grants.credential.is_some(),
            how_to_grant: format!(
                "a person grants it on the dashboard's Connectors page (/connectors on `levh serve`) or runs `levh --workspace {workspace} connector grant {id} DIR` (or --host HOST); grants belong to one workspace; agents cannot grant"
            ),
        })
    }

    fn grant(
        &self,
        id: &str,
        workspace: &levh_core::Workspace,
        grant: &Grant,
    ) -> Result<ConnectorHelp, ConnectorError> {
        // Only a connector there is can be granted anything, and only what it asks for.
        let connector = self.load(id)?;
        check_grant(&connector.manifest, grant).map_err(|message| {
            ConnectorError::Fetch(FetchError::new(FetchFailure::InvalidConfig, message))
        })?;
        match grant {
            Grant::Directory(path) => self.registry.grant(id, workspace, path).map(|_| ()),
            Grant::Host(host) => self.registry.grant_host(id, workspace, host).map(|_| ()),
        }
        .map_err(|e| invalid_grant(&e))?;
        self.help(id, workspace)
    }

    fn revoke(
        &self,
        id: &str,
        workspace: &levh_core::Workspace,
        grant: &Grant,
    ) -> Result<bool, ConnectorError> {
        self.load(id)?;
        match grant {
            Grant::Directory(path) => self.registry.revoke(id, workspace, path),
            Grant::Host(host) => self.registry.revoke_host(id, workspace, host),
        }
        .map_err(|e| invalid_grant(&e))
    }

    fn sync(
        &self,
        levh: &Levh,
        scope: &Scope,
        request: SyncRequest,
    ) -> Result<SyncReport, ConnectorError> {
        let connector = self.load(&request.id)?;
        check_config(&connector.manifest, &request.config)?;
        // Stored grants only. A path named in `config` is NOT granted (unlike `levh sync`
        // typed by a person): the connector's read is refused unless a person granted it.
        let grants = self.grants(&connector, &scope.workspace, &request.config, false)?;
        let mut source = self.source(&connector, request.config, grants);
        Ok(levh.sync(
            scope,
            &mut source,
            SyncOptions {
                dry_run: request.dry_run,
            },
            request.project,
            &mut |_| {},
        )?)
    }
}
