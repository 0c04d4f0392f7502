//! Who calls: the [`Principal`] behind a network request, its [`Role`], the [`Surface`]
//! it came through, and the [`Scope`] every engine call is confined to.

use serde::{Deserialize, Serialize};

use crate::{Actor, Timestamp, Workspace};

/// Who is calling and in which workspace. Every engine call is scoped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The workspace all reads and writes are confined to.
    pub workspace: Workspace,
    /// Who acts, for the event log.
    pub actor: Actor,
}

impl Scope {
    /// The same workspace and principal, acting through a connector's sync: what a sync
    /// writes is recorded with surface `sync` and the connector as the client.
    pub fn synced(&self, connector: &str) -> Self {
        Self {
            workspace: self.workspace.clone(),
            actor: Actor {
                surface: Surface::Sync,
                client: Some(connector.to_owned()),
                ..self.actor.clone()
            },
        }
    }

    /// The local person at a terminal, in `workspace`.
    pub fn cli(workspace: Workspace) -> Self {
        Self {
            workspace,
            actor: Actor::cli(),
        }
    }
}

/// An authenticated caller of a network surface: the workspace its token is bound to and
/// what it may do there. The local person without a token is admin of `default`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The only workspace it sees.
    pub workspace: Workspace,
    /// What it may do there.
    pub role: Role,
    /// The token id (or `operator`, `local`) for the event log.
    pub name: Option<String>,
}

impl Principal {
    /// The local person: admin of the default workspace.
    pub fn local() -> Self {
        Self {
            workspace: Workspace::default(),
            role: Role::Admin,
            name: Some("local".into()),
        }
    }

    /// The operator (`LEVH_TOKEN`'s holder): admin of the default workspace.
    pub fn operator() -> Self {
        Self {
            workspace: Workspace::default(),
            role: Role::Admin,
            name: Some("operator".into()),
        }
    }

    /// Whether it speaks for the machine levh runs on — the local person or the operator —
    /// rather than for one workspace (a token issued for a workspace never does). What is
    /// not kept per workspace, such as a connector's grants on the host's files, is theirs
    /// to change.
    pub fn speaks_for_the_host(&self) -> bool {
        *self == Self::local() || *self == Self::operator()
    }

    /// The engine scope of a call by this principal through `surface`. The client's name
    /// is the client's to choose and lands in the event log: secrets in it are redacted.
    pub fn scope(&self, surface: Surface, client: Option<String>) -> Scope {
        Scope {
            workspace: self.workspace.clone(),
            actor: Actor {
                surface,
                client: client.map(|name| crate::gate::secrets::redact(&name).0),
                role: self.role,
                principal: self.name.clone(),
            },
        }
    }
}

/// What a principal may do, weakest first (so `role >= Role::Editor` reads naturally).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads only.
    Viewer,
    /// Reads and writes; cannot purge or decide held candidates.
    Editor,
    /// Everything in its workspace.
    Admin,
}

impl Role {
    /// The role's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        match text {
            "viewer" => Ok(Self::Viewer),
            "editor" => Ok(Self::Editor),
            "admin" => Ok(Self::Admin),
            other => Err(format!(
                "unknown role {other:?}: expected viewer, editor or admin"
            )),
        }
    }
}

/// The surface a call came through, recorded on the event log and on held decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Surface {
    /// The `levh` command line.
    Cli,
    /// An MCP client (stdio or `/mcp`).
    Mcp,
    /// The REST API.
    Http,
    /// The web dashboard.
    Dashboard,
    /// A connector sync.
    Sync,
}

impl Surface {
    /// Its name on the wire and in the event log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Mcp => "mcp",
            Self::Http => "http",
            Self::Dashboard => "dashboard",
            Self::Sync => "sync",
        }
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored token, without its secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenInfo {
    /// Short public id (`tok_…`), for listing and revoking.
    pub id: String,
    /// The workspace it is bound to.
    pub workspace: Workspace,
    /// What it may do there.
    pub role: Role,
    /// A person's note on what it is for.
    pub label: Option<String>,
    /// When it was issued.
    pub created_at: Timestamp,
    /// When it was revoked; a revoked token authenticates nothing.
    pub revoked_at: Option<Timestamp>,
}

/// A token just issued: the only time its secret exists outside the caller.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// The stored part.
    pub info: TokenInfo,
    /// The secret to hand to the client (`levh_` + 40 hex digits).
    pub secret: String,
}

/// How a token's secret is kept: its SHA-256 in hex, never the secret. One rule for every
/// store, so a token issued on SQLite still opens a server on PostgreSQL after a move.
pub fn secret_hash(secret: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
