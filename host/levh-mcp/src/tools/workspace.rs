//! Tools on the workspace as a whole: stats, projects, sources, decisions, commitments,
//! secrets, sessions.

use levh_api::requests::{KnowledgeArgs, ProjectArgs, SessionArgs};
use levh_api::views::{
    CommitmentList, DecisionList, ProjectList, SecretsView, SessionView, SourceList, StatsView,
};
use levh_api::{knowledge, secrets, sessions, workspace};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use crate::LevhMcp;
use crate::arguments::Parameters;

#[tool_router(router = workspace_router, vis = "pub(crate)")]
impl LevhMcp {
    /// Counts and averages of the workspace (optionally one project).
    #[tool(annotations(
        title = "Memory statistics",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_memory_stats(
        &self,
        Parameters(args): Parameters<ProjectArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<StatsView>, String> {
        self.run(&peer, move |levh, scope| {
            workspace::stats(levh, scope, args.project)
        })
        .await
        .map(Json)
    }

    /// Decisions the memories state ("we decided to…", "agreed:", "karar verdik"), newest
    /// first: the sentence, when it was said, where, and who was there.
    #[tool(annotations(
        title = "List decisions",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_decisions(
        &self,
        Parameters(args): Parameters<KnowledgeArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<DecisionList>, String> {
        self.run(&peer, move |levh, scope| {
            knowledge::decisions(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Open promises the memories make in their writer's words ("I'll send it by Friday",
    /// "yarın göndereceğim"), soonest due first, with the due day and whether it passed.
    #[tool(annotations(
        title = "List commitments",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_commitments(
        &self,
        Parameters(args): Parameters<KnowledgeArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<CommitmentList>, String> {
        self.run(&peer, move |levh, scope| {
            knowledge::commitments(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Projects of the workspace with their memory counts.
    #[tool(annotations(
        title = "List projects",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_projects(&self, peer: Peer<RoleServer>) -> Result<Json<ProjectList>, String> {
        self.run(&peer, workspace::projects).await.map(Json)
    }

    /// Sources (clients and connectors) that wrote memories, with counts.
    #[tool(annotations(
        title = "List sources",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_sources(&self, peer: Peer<RoleServer>) -> Result<Json<SourceList>, String> {
        self.run(&peer, workspace::sources).await.map(Json)
    }

    /// Find stored memories holding secrets that today's patterns recognise.
    #[tool(annotations(
        title = "Audit secrets",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn audit_secrets(&self, peer: Peer<RoleServer>) -> Result<Json<SecretsView>, String> {
        self.run(&peer, secrets::audit).await.map(Json)
    }

    /// Strip recognised secrets from stored memories (re-embedding each).
    #[tool(annotations(
        title = "Redact secrets",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn redact_secrets(&self, peer: Peer<RoleServer>) -> Result<Json<SecretsView>, String> {
        self.run(&peer, secrets::redact).await.map(Json)
    }

    /// Open a session; pass its id as session_id when storing.
    #[tool(annotations(
        title = "Create a session",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn create_session(
        &self,
        Parameters(args): Parameters<ProjectArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<SessionView>, String> {
        self.run(&peer, move |levh, scope| {
            sessions::create(levh, scope, args.project)
        })
        .await
        .map(Json)
    }

    /// End a session opened with create_session (ending it twice keeps the first end).
    #[tool(annotations(
        title = "End a session",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn end_session(
        &self,
        Parameters(args): Parameters<SessionArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<SessionView>, String> {
        self.run(&peer, move |levh, scope| {
            sessions::end(levh, scope, args.session_id)
        })
        .await
        .map(Json)
    }

    /// Summarise a session into one memory (kind `summary`, in the session's project): how
    /// many memories it stored, what they decided and promised, and their first lines.
    /// Through the gate: summarising again with nothing new is rejected as a duplicate.
    #[tool(annotations(
        title = "Summarize session",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn summarize_session(
        &self,
        Parameters(args): Parameters<SessionArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::SessionSummaryView>, String> {
        self.run(&peer, move |levh, scope| {
            sessions::summarize(levh, scope, args.session_id)
        })
        .await
        .map(Json)
    }
}
