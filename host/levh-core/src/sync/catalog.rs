//! What the connector runtime tells the surfaces about its connectors: the catalog (one
//! entry per built-in or installed connector), one connector's help, and the manifests
//! they are built from. Typed here so REST, MCP and the CLI send one document and the
//! compiler, not a test, keeps them from drifting.

use std::path::PathBuf;

use serde::Serialize;

use crate::Workspace;

/// What a plugin declares about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Manifest {
    /// Stable id (`calendar`).
    pub id: String,
    /// The plugin's version.
    pub version: String,
    /// One line on what it does.
    pub description: String,
    /// The levh plugin API it targets.
    pub api_version: String,
    /// Config keys it understands.
    pub config: Vec<ConfigKey>,
    /// What it asks the host for.
    pub capabilities: Vec<Capability>,
}

/// One config key of a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfigKey {
    /// Its name.
    pub name: String,
    /// `path`, `text`, `integer`, `boolean` or `text-list`.
    pub value_type: String,
    /// What it means.
    pub help: String,
    /// Whether a sync needs it.
    pub required: bool,
    /// Its default, if any.
    pub default_value: Option<String>,
}

/// A capability a plugin asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Capability {
    /// Read-only access to the path in this config key.
    ReadPath(String),
    /// Outgoing HTTPS to this host.
    HttpHost(String),
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ReadPath(key) => write!(f, "read the path in `{key}`"),
            Self::HttpHost(host) => write!(f, "connect to {host}"),
        }
    }
}

/// Where a connector comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ConnectorOrigin {
    /// Shipped inside levh.
    BuiltIn,
    /// Installed by a person (`levh connector install`).
    Installed,
}

impl ConnectorOrigin {
    /// Its name in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BuiltIn => "built-in",
            Self::Installed => "installed",
        }
    }
}

/// Every built-in and installed connector, with the grants of one workspace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConnectorCatalog {
    /// One entry per connector, built-ins first.
    pub connectors: Vec<CatalogEntry>,
}

/// One connector of the catalog: what it is, or why it could not be read (a connector
/// that cannot load is its own entry's error, not the catalog's).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum CatalogEntry {
    /// A connector that loaded.
    Ready(ConnectorSummary),
    /// A connector whose component or grants could not be read.
    Broken(BrokenConnector),
}

impl CatalogEntry {
    /// The connector's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Ready(c) => &c.id,
            Self::Broken(c) => &c.id,
        }
    }
}

/// A connector that loaded, with what it asks for and what a person granted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConnectorSummary {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Built in or installed.
    pub origin: ConnectorOrigin,
    /// One line on what it does.
    pub description: String,
    /// What it asks the host for.
    pub capabilities: Vec<Capability>,
    /// Directories granted to it in this workspace.
    pub granted_paths: Vec<PathBuf>,
    /// Hosts granted to it in this workspace (`host:port`).
    pub granted_hosts: Vec<String>,
}

/// A connector that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BrokenConnector {
    /// Its id.
    pub id: String,
    /// Built in or installed.
    pub origin: ConnectorOrigin,
    /// What went wrong.
    pub error: String,
}

/// One connector's settings, requested capabilities and the grants of a workspace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConnectorHelp {
    /// What the connector declares.
    pub manifest: Manifest,
    /// The workspace the grants are of.
    pub workspace: Workspace,
    /// Directories granted to it in this workspace.
    pub granted_paths: Vec<PathBuf>,
    /// Hosts granted to it in this workspace (`host:port`).
    pub granted_hosts: Vec<String>,
    /// Whether a token for it is stored (never the token).
    pub token_stored: bool,
    /// How a person grants it what it asks for.
    pub how_to_grant: String,
}
