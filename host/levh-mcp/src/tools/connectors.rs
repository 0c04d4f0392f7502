//! Connector tools (the `full` profile): list, help, sync with stored grants, status.

use levh_api::connectors;
use levh_api::requests::{ConnectorArgs, SyncArgs, SyncStatusArgs};
use levh_api::views::ConnectorOutput;
use levh_core::sync::{ConnectorCatalog, ConnectorHelp, SyncReport};
use levh_core::sync::{Connectors, SyncRequest};
use levh_core::{Levh, Scope};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use crate::LevhMcp;
use crate::arguments::Parameters;

impl LevhMcp {
    /// Runs an operation that needs the connector runtime.
    async fn with_runtime<T, F>(&self, peer: &Peer<RoleServer>, operation: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Levh, &Scope, &dyn Connectors) -> levh_api::Result<T> + Send + 'static,
    {
        let runtime = self.connectors.clone();
        self.run(peer, move |levh, scope| {
            operation(levh, scope, connectors::runtime(runtime.as_deref())?)
        })
        .await
    }
}

#[tool_router(router = connector_router, vis = "pub(crate)")]
impl LevhMcp {
    /// Built-in and installed connectors, with what they ask for and what a person granted.
    #[tool(annotations(
        title = "List connectors",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_connectors(
        &self,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput<ConnectorCatalog>>, String> {
        self.with_runtime(&peer, |_, scope, runtime| connectors::list(runtime, scope))
            .await
            .map(|result| Json(ConnectorOutput { result }))
    }

    /// A connector's settings, requested capabilities and stored grants.
    #[tool(annotations(
        title = "Connector help",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_connector_help(
        &self,
        Parameters(args): Parameters<ConnectorArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput<ConnectorHelp>>, String> {
        self.with_runtime(&peer, move |_, scope, runtime| {
            connectors::help(runtime, scope, &args.id)
        })
        .await
        .map(|result| Json(ConnectorOutput { result }))
    }

    /// Run a connector: its items go through the gate into memory. Uses only the grants a
    /// person stored (`levh connector grant`); an agent cannot grant paths or hosts.
    #[tool(annotations(
        title = "Sync a connector",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = true
    ))]
    async fn sync_connector(
        &self,
        Parameters(args): Parameters<SyncArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput<SyncReport>>, String> {
        let request = SyncRequest {
            id: args.id,
            config: args.config.unwrap_or_default().into_iter().collect(),
            project: args.project,
            dry_run: args.dry_run.unwrap_or(false),
        };
        // A refused capability is among the errors of the report (with the grant
        // command), as REST answers it with 403; the run is recorded either way.
        self.with_runtime(&peer, move |levh, scope, runtime| {
            connectors::sync(levh, scope, runtime, request)
        })
        .await
        .map(|result| Json(ConnectorOutput { result }))
    }

    /// Recent sync runs and their tallies.
    #[tool(annotations(
        title = "Connector sync status",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn connector_sync_status(
        &self,
        Parameters(args): Parameters<SyncStatusArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput<Vec<SyncReport>>>, String> {
        self.run(&peer, move |levh, scope| {
            connectors::status(levh, scope, args)
        })
        .await
        .map(|result| Json(ConnectorOutput { result }))
    }
}
