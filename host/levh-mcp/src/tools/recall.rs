//! Tools that find memories: recall, search, the session-start context.

use levh_api::recall;
use levh_api::requests::{ContextArgs, RecallArgs};
use levh_api::views::{ContextView, RecallView};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use crate::LevhMcp;
use crate::arguments::Parameters;

#[tool_router(router = recall_router, vis = "pub(crate)")]
impl LevhMcp {
    /// Find the memories that best match a query, ranked by H-score. What is returned is
    /// reinforced (it grows more durable); use search_memory to look without reinforcing.
    #[tool(annotations(
        title = "Recall memories",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn recall_memory(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<RecallView>, String> {
        self.run(&peer, move |levh, scope| {
            recall::recall(levh, scope, args, true)
        })
        .await
        .map(Json)
    }

    /// Search memories like recall_memory, without reinforcing anything (read-only).
    #[tool(annotations(
        title = "Search memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn search_memory(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<RecallView>, String> {
        self.run(&peer, move |levh, scope| {
            recall::recall(levh, scope, args, false)
        })
        .await
        .map(Json)
    }

    /// Context for the start of a session: pinned rules first, then the project's most
    /// important, best-retained memories, within a token budget.
    #[tool(annotations(
        title = "Get context",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_context(
        &self,
        Parameters(args): Parameters<ContextArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ContextView>, String> {
        self.run(&peer, move |levh, scope| recall::context(levh, scope, args))
            .await
            .map(Json)
    }
}
