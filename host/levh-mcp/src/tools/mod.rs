//! The tools, by area, each a thin adapter over one levh-api operation: parse the
//! arguments (done by [`Parameters`](crate::arguments::Parameters)), run the operation
//! in the caller's scope off the async threads, return its view as structured output.
//! An operation's error becomes an `isError` result whose text names the problem, never
//! a protocol error. There is no `force` anywhere: the gate decides every write.
//!
//! Each area is an rmcp router of its own; [`LevhMcp::tool_router`] adds them up.

mod assistant;
mod connectors;
mod held;
mod knowledge;
mod memories;
mod recall;
mod workspace;

use levh_api::Operation;
use levh_core::{Levh, Scope, Surface};
use rmcp::{Peer, RoleServer};

use crate::LevhMcp;

pub use levh_api::recall::DEFAULT_CONTEXT_TOKENS;

/// The operation behind a tool. `admit_memory` is `store_memory` under the name agents
/// look for when they want the gate's full verdict.
pub fn operation_of(tool: &str) -> Option<Operation> {
    match tool {
        "admit_memory" => Some(Operation::StoreMemory),
        other => Operation::named(other),
    }
}

/// An operation's error as the agent should read it. Faults on levh's side are logged
/// here, once, with their detail, and the agent reads only that there was one (as REST
/// answers 500 without the detail): a path, a query or a library's message is the
/// operator's to read, not the agent's.
pub(crate) fn describe(error: levh_api::Error) -> String {
    if let levh_api::Error::Internal(detail) = &error {
        tracing::error!(%detail, "MCP tool call failed");
        return "internal error: levh could not complete this call; the server's log has the detail (nothing was changed)".to_owned();
    }
    error.to_string()
}

/// The name the client gave in `initialize`, recorded as the source of what it writes
/// (secrets in it redacted: it is listed and logged).
pub(crate) fn client_name(peer: &Peer<RoleServer>) -> Option<String> {
    peer.peer_info()
        .map(|info| info.client_info.name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .map(|name| levh_core::gate::secrets::redact(&name).0)
}

impl LevhMcp {
    /// Every tool, from each area's router.
    pub(crate) fn tool_router() -> rmcp::handler::server::router::tool::ToolRouter<Self> {
        Self::memory_router()
            + Self::recall_router()
            + Self::held_router()
            + Self::workspace_router()
            + Self::knowledge_router()
            + Self::assistant_router()
            + Self::connector_router()
    }

    /// The scope of the call in progress: the HTTP caller's principal, or (stdio) the
    /// server's own workspace; client = the name it gave in `initialize`. An HTTP server
    /// without a caller refuses rather than guess.
    pub(crate) fn scope_for(&self, peer: &Peer<RoleServer>) -> Result<Scope, String> {
        let client = client_name(peer);
        match crate::current_caller() {
            Some(caller) => Ok(caller.scope(Surface::Mcp, client)),
            None if self.needs_caller => Err(
                "unauthenticated MCP call: no principal on the request (nothing was changed)"
                    .into(),
            ),
            None => {
                let mut scope = self.scope.clone();
                scope.actor.client = client;
                Ok(scope)
            }
        }
    }

    /// Runs an operation off the async threads (SQLite is blocking) in the caller's
    /// scope, and turns its error into the text of an `isError` result.
    pub(crate) async fn run<T, F>(&self, peer: &Peer<RoleServer>, operation: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Levh, &Scope) -> levh_api::Result<T> + Send + 'static,
    {
        let levh = self.levh.clone();
        let scope = self.scope_for(peer)?;
        // The blocking thread works inside the tool call's span.
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || span.in_scope(|| operation(&levh, &scope)))
            .await
            .map_err(|e| describe(levh_api::Error::internal(e)))?
            .map_err(describe)
    }

    /// Tells the client the pinned set (and so the resource list) changed.
    pub(crate) async fn pinned_set_changed(&self, peer: &Peer<RoleServer>) {
        if let Err(error) = peer.notify_resource_list_changed().await {
            tracing::debug!(%error, "resources/list_changed not sent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_fault_reaches_the_agent_without_its_detail() {
        let told = describe(levh_api::Error::internal(
            "disk I/O error at /home/someone/.local/share/levh/levh.db",
        ));
        assert!(told.starts_with("internal error"), "{told}");
        assert!(
            !told.contains("/home/someone") && !told.contains("disk I/O"),
            "{told}"
        );
        let invalid = describe(levh_api::Error::invalid("invalid limit: 0"));
        assert!(invalid.contains("invalid limit: 0"), "{invalid}");
    }

    #[test]
    fn a_tool_name_levh_does_not_know_needs_the_highest_role() {
        assert_eq!(crate::required_role("no_such_tool"), levh_core::Role::Admin);
        assert_eq!(
            crate::required_role("search_memory"),
            levh_core::Role::Viewer
        );
    }
}
