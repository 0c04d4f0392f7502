//! levh-mcp: levh's MCP server.
//!
//! [`LevhMcp`] is an rmcp [`ServerHandler`](rmcp::ServerHandler) over the [`Levh`]
//! facade. Tools are declared next to their code ([`tools`]), each with a JSON schema for
//! its input, structured output and MCP annotations that are true. A [`Profile`] decides
//! which tools a client discovers. Pinned memories and the generated context are
//! resources; a session-start prompt loads the context. Held candidates are decided only
//! through MCP elicitation, by the person behind the client.
//!
//! Everything an MCP client writes records the client's name (from `initialize`) as the
//! memory's source and on the event log's actor (surface `mcp`).

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod arguments;
mod handler;
mod presence;
mod profile;
pub mod sessions;
pub mod stdio;
pub mod tools;

use std::sync::Arc;

use levh_core::sync::Connectors;
use levh_core::{Actor, Levh, Principal, Role, Scope, Surface, Workspace};

pub use profile::{Profile, TOOL_BANDS};
// Re-exported so the binary and the integration tests speak the same rmcp and tokio.
pub use rmcp;
pub use tokio;

/// The MCP server: one per connection.
#[derive(Clone)]
pub struct LevhMcp {
    pub(crate) levh: Levh,
    pub(crate) scope: Scope,
    /// Served over HTTP: every call must come with an authenticated [`Principal`]
    /// (levh-http's auth layer puts it on the request); there is no fallback scope.
    pub(crate) needs_caller: bool,
    pub(crate) profile: Profile,
    pub(crate) connectors: Option<Arc<dyn Connectors>>,
    /// The event log, for what a memory's history decides (its trust).
    pub(crate) events: Option<Arc<dyn levh_core::ServerStore>>,
    /// This session's presence (with the event log): one per session, shared by the
    /// clones of its server, ended when the last is dropped.
    pub(crate) presence: Option<Arc<presence::PresenceSlot>>,
    pub(crate) tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

impl std::fmt::Debug for LevhMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevhMcp")
            .field("scope", &self.scope)
            .field("profile", &self.profile)
            .field("connectors", &self.connectors.is_some())
            .finish()
    }
}

impl LevhMcp {
    /// A server over `levh` in `workspace`, showing the tools of `profile`.
    pub fn new(levh: Levh, workspace: Workspace, profile: Profile) -> Self {
        Self {
            levh,
            scope: Scope {
                workspace,
                actor: Actor {
                    surface: Surface::Mcp,
                    client: None,
                    role: Role::Admin,
                    principal: None,
                },
            },
            profile,
            needs_caller: false,
            connectors: None,
            events: None,
            presence: None,
            tool_router: Self::tool_router(),
        }
    }

    /// A server for the streamable-HTTP transport. Workspace and role come from each
    /// request's [`Principal`], never from the server: a session cannot outlive or
    /// widen the token that makes a call.
    pub fn for_http(levh: Levh, profile: Profile) -> Self {
        let mut server = Self::new(levh, Workspace::default(), profile);
        server.needs_caller = true;
        server
    }

    /// Adds the connector runtime (the `full` profile's connector tools need it).
    pub fn with_connectors(mut self, connectors: Arc<dyn Connectors>) -> Self {
        self.connectors = Some(connectors);
        self
    }

    /// Adds the event log (`memory_trust` reads a memory's review history from it, the
    /// reports read it) and with it presence: this session is listed as connected while
    /// it lasts.
    pub fn with_event_log(mut self, events: Arc<dyn levh_core::ServerStore>) -> Self {
        let transport = if self.needs_caller { "http" } else { "stdio" };
        self.presence = Some(Arc::new(presence::PresenceSlot::new(
            events.clone(),
            self.levh.clone(),
            transport,
        )));
        self.events = Some(events);
        self
    }

    /// Notes this session's activity for presence (see [`presence`]).
    pub(crate) fn note_presence(
        &self,
        caller: Option<&Principal>,
        peer: &rmcp::Peer<rmcp::RoleServer>,
        project: Option<String>,
        call: bool,
    ) {
        let Some(slot) = &self.presence else { return };
        let scope = match caller {
            Some(caller) => caller.scope(Surface::Mcp, tools::client_name(peer)),
            None if self.needs_caller => return,
            None => {
                let mut scope = self.scope.clone();
                scope.actor.client = tools::client_name(peer);
                scope
            }
        };
        slot.touch(&scope, project, call);
    }

    /// The profile in force.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Every tool definition levh has, whatever the profile, by name (so every client
    /// and every snapshot lists them alike).
    pub fn all_tools() -> Vec<rmcp::model::Tool> {
        let mut tools: Vec<rmcp::model::Tool> = Self::tool_router()
            .list_all()
            .into_iter()
            .map(arguments::interoperable_tool)
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }
}

tokio::task_local! {
    /// The authenticated caller of the HTTP request being handled.
    static CALLER: Principal;
}

/// The principal levh-http's auth layer attached to the HTTP request behind this call.
pub(crate) fn caller_of(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Option<Principal> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
}

/// Runs `work` with `caller` as the principal every engine call in it is scoped to.
pub(crate) async fn as_caller<T>(
    caller: Option<Principal>,
    work: impl std::future::Future<Output = T>,
) -> T {
    match caller {
        Some(caller) => CALLER.scope(caller, work).await,
        None => work.await,
    }
}

/// The caller in force, if the call came over HTTP.
pub(crate) fn current_caller() -> Option<Principal> {
    CALLER.try_with(Clone::clone).ok()
}

/// The weakest role that may call a tool: its operation's, from levh-api's one table
/// (REST's routes read theirs from the same table). A name levh does not know needs the
/// highest role: a tool added later, or one that is not an operation, is never open to
/// a weaker token by default.
pub fn required_role(name: &str) -> Role {
    tools::operation_of(name).map_or(Role::Admin, levh_api::Operation::role)
}

/// The MCP streamable-HTTP service `levh serve` mounts at `/mcp`: one
/// [`LevhMcp::for_http`] per session, with the connector runtime when given.
/// `allowed_hosts` guards against DNS rebinding (loopback names by default; empty = any
/// host, for a server behind a token on a public interface).
pub fn http_service(
    levh: Levh,
    profile: Profile,
    connectors: Option<Arc<dyn Connectors>>,
    events: Option<Arc<dyn levh_core::ServerStore>>,
    allowed_hosts: Option<Vec<String>>,
    limits: sessions::SessionLimits,
    cancel: tokio_util::sync::CancellationToken,
) -> sessions::CappedSessions {
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(cancel);
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    let make = move || {
        let mut server = LevhMcp::for_http(levh.clone(), profile);
        if let Some(connectors) = &connectors {
            server = server.with_connectors(connectors.clone());
        }
        if let Some(events) = &events {
            server = server.with_event_log(events.clone());
        }
        Ok(server)
    };
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.idle);
    let manager = Arc::new(manager);
    sessions::CappedSessions::new(
        rmcp::transport::streamable_http_server::StreamableHttpService::new(
            make,
            manager.clone(),
            config,
        ),
        manager,
        limits.max_sessions,
    )
}

/// Serves MCP over stdin/stdout until the client closes the connection. Blocks; builds
/// its own runtime, so the caller needs none. Logs go to stderr (set up by the caller).
pub fn serve_stdio(server: LevhMcp) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        use rmcp::ServiceExt;
        let stdin = stdio::Oversize::new(tokio::io::stdin(), stdio::MAX_MESSAGE_BYTES);
        let running = server.serve((stdin, tokio::io::stdout())).await?;
        running.waiting().await?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an agent discovers, per profile: names, descriptions, hints and both schemas.
    /// A change here changes what every MCP client reads.
    #[test]
    fn tools_list_per_profile_is_what_agents_read() {
        for profile in Profile::ALL {
            let tools: Vec<rmcp::model::Tool> = LevhMcp::all_tools()
                .into_iter()
                .filter(|tool| profile.includes(&tool.name))
                .collect();
            // Keys sorted: serde_json keeps insertion order only when some crate of the
            // build enables `preserve_order`, which differs between -p and --workspace.
            insta::with_settings!({ sort_maps => true }, {
                insta::assert_json_snapshot!(format!("tools_list_{}", profile.as_str()), tools);
            });
        }
    }

    /// What each profile's `tools/list` costs an agent's context, snapshotted so that a
    /// change in it is seen in review. A model is shown each tool's name, description and
    /// input schema (the output schema is the client's, for checking results, and clients
    /// do not pass it to the model): those bytes, tokens estimated at four bytes each
    /// (English and JSON run 3.5-4.5 bytes a token in the common tokenizers), and a
    /// ceiling per profile that fails the test when a change would blow it; beside them,
    /// the whole `tools/list` answer as sent.
    #[test]
    fn tools_list_tokens_per_profile_stay_within_their_budget() {
        let mut table = String::from(
            "profile | tools | model-facing bytes | ~tokens | whole tools/list bytes\n",
        );
        for (profile, ceiling) in Profile::ALL.into_iter().zip([1_500, 8_500, 11_500, 13_000]) {
            let tools: Vec<rmcp::model::Tool> = LevhMcp::all_tools()
                .into_iter()
                .filter(|tool| profile.includes(&tool.name))
                .collect();
            let whole = serde_json::to_string(&serde_json::json!({ "tools": tools }))
                .unwrap()
                .len();
            let shown: Vec<serde_json::Value> = tools
                .iter()
                .map(|t| serde_json::json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }))
                .collect();
            let bytes = serde_json::to_string(&shown).unwrap().len();
            let tokens = bytes.div_ceil(4);
            assert!(
                tokens <= ceiling,
                "{profile:?}: ~{tokens} tokens, over {ceiling}"
            );
            table.push_str(&format!(
                "{} | {} | {bytes} | {tokens} | {whole}\n",
                profile.as_str(),
                tools.len()
            ));
        }
        insta::assert_snapshot!("tools_list_tokens", table);
    }

    #[test]
    fn every_tool_has_a_band_and_every_band_entry_is_a_tool() {
        let mut declared: Vec<String> = LevhMcp::all_tools()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        declared.sort();
        let mut banded: Vec<String> = TOOL_BANDS.iter().map(|(n, _)| (*n).to_owned()).collect();
        banded.sort();
        assert_eq!(declared, banded);
    }

    #[test]
    fn every_tool_has_a_description_an_output_schema_and_all_three_hints() {
        for tool in LevhMcp::all_tools() {
            assert!(
                tool.description.as_deref().is_some_and(|d| d.len() > 20),
                "{}",
                tool.name
            );
            assert!(tool.output_schema.is_some(), "{}", tool.name);
            let hints = tool.annotations.unwrap_or_else(|| panic!("{}", tool.name));
            assert!(hints.read_only_hint.is_some(), "{}", tool.name);
            assert!(hints.destructive_hint.is_some(), "{}", tool.name);
            assert!(hints.idempotent_hint.is_some(), "{}", tool.name);
            // The hint an agent reads agrees with the role the table requires.
            let operation = tools::operation_of(&tool.name)
                .unwrap_or_else(|| panic!("{} has no operation in levh-api's table", tool.name));
            assert_eq!(
                hints.read_only_hint,
                Some(operation.is_read_only()),
                "{}",
                tool.name
            );
            // A read-only tool is never destructive.
            if hints.read_only_hint == Some(true) {
                assert_eq!(hints.destructive_hint, Some(false), "{}", tool.name);
            }
        }
    }
}
