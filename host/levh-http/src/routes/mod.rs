//! Every REST route, declared once: method, path, the levh-api operation it serves (and
//! so the role it needs), its request and response types. [`Api`] turns the table into
//! the axum router (with the role check on each route) and into the OpenAPI document, so
//! neither can miss a route. The handlers are in [`handlers`]; the extractors that turn
//! a bad request into an [`ApiError`](crate::ApiError) naming the field, in [`extract`].

pub(crate) mod extract;
mod handlers;

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, on};
use levh_api::Operation;
use levh_api::requests::{
    AdmitBody, ContextArgs, CurveQuery, EvaluateArgs, FadingArgs, FeedbackBody, GrantBody,
    HeldListArgs, HistoryQuery, ListArgs, MoveArgs, ProjectArgs, RecallArgs, RelatedQuery,
    ScoreQuery, SessionBody, StoreArgs, StoreBatchArgs, SyncBody, SyncStatusArgs, TokenBody,
    UpdateBody,
};
use levh_api::requests::{
    EntityListArgs, EntityPageArgs, GraphArgs, KnowledgeArgs, MergeArgs, ReindexArgs, TimelineArgs,
};
use levh_api::views::{
    AboutView, CommitmentView, EntityList, EntityView, GraphView, OrganizationList, PeopleList,
    ReindexView, TimelineView,
};
use levh_api::views::{
    AdmitView, BatchView, CaptureView, CommitmentList, ContextView, CurveView, DecisionList,
    EvaluationView, FadingList, HealthView, HeldList, HeldView, HistoryView, IssuedTokenView,
    MemoryList, MemoryView, MovedView, ProjectList, PurgeView, RecallView, RelatedList, ScoreView,
    SecretsView, SessionView, SettingsView, SourceList, StatsView, TokenList, UpdateView,
};
use levh_core::Role;
use levh_core::sync::{ConnectorCatalog, ConnectorHelp, SyncReport};
use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::error::ErrorBody;
use crate::{AppState, auth};

pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One route of the API, as documented.
pub(crate) struct Route {
    pub method: Method,
    pub path: &'static str,
    pub summary: &'static str,
    /// The operation it serves; its role comes from levh-api's table.
    pub operation: Operation,
    pub role: Role,
    pub body: Option<SchemaFn>,
    pub query: Option<SchemaFn>,
    /// Success statuses and their body (None: no body).
    pub responses: Vec<(u16, Option<SchemaFn>)>,
    /// Documented error statuses (all with an [`ErrorBody`]).
    pub errors: Vec<u16>,
    /// The largest body it takes, when not axum's default (2 MiB).
    pub body_limit: Option<usize>,
}

impl Route {
    fn new(
        method: Method,
        path: &'static str,
        operation: Operation,
        summary: &'static str,
    ) -> Self {
        Self {
            method,
            path,
            summary,
            operation,
            role: operation.role(),
            body: None,
            query: None,
            responses: Vec::new(),
            // Every route can meet a bad or missing token, a blocked client and a server error.
            errors: vec![401, 429, 500],
            body_limit: None,
        }
    }
    /// Takes bodies up to `bytes` (a batch of a thousand memories is larger than one).
    fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = Some(bytes);
        self.errors.push(413);
        self
    }
    fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Some(schema::<T>);
        self.errors.extend([400, 415]);
        self
    }
    fn query<T: JsonSchema>(mut self) -> Self {
        self.query = Some(schema::<T>);
        self.errors.push(400);
        self
    }
    fn ok<T: JsonSchema>(mut self, status: u16) -> Self {
        self.responses.push((status, Some(schema::<T>)));
        self
    }
    fn empty(mut self, status: u16) -> Self {
        self.responses.push((status, None));
        self
    }
    fn errors(mut self, statuses: &[u16]) -> Self {
        self.errors.extend_from_slice(statuses);
        self
    }
    pub(crate) fn error_schema(generator: &mut SchemaGenerator) -> Schema {
        schema::<ErrorBody>(generator)
    }
}

/// The route table and the router built from it.
pub(crate) struct Api {
    router: Router<AppState>,
    pub routes: Vec<Route>,
}

impl Api {
    fn new() -> Self {
        Self {
            router: Router::new(),
            routes: Vec::new(),
        }
    }

    fn route<H, T>(mut self, mut operation: Route, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter = match operation.method {
            Method::GET => MethodFilter::GET,
            Method::POST => MethodFilter::POST,
            Method::PATCH => MethodFilter::PATCH,
            Method::DELETE => MethodFilter::DELETE,
            ref other => unreachable!("no route uses {other}"),
        };
        let role = operation.role;
        let name = operation.operation.name();
        if role > Role::Viewer {
            operation.errors.push(403);
        }
        operation.errors.sort_unstable();
        operation.errors.dedup();
        // One span per operation, named as levh-api names it (the log of a failure says
        // which operation failed, whatever the path looked like).
        let mut method_router = on(filter, handler)
            .route_layer(axum::middleware::from_fn(move |request, next| {
                auth::require(role, request, next)
            }))
            .route_layer(axum::middleware::from_fn(
                move |request, next: axum::middleware::Next| {
                    use tracing::Instrument as _;
                    async move {
                        let response = next.run(request).await;
                        tracing::debug!(status = %response.status(), "operation answered");
                        response
                    }
                    .instrument(tracing::info_span!("operation", name))
                },
            ));
        if let Some(bytes) = operation.body_limit {
            method_router = method_router.layer(axum::extract::DefaultBodyLimit::max(bytes));
        }
        self.router = self.router.route(operation.path, method_router);
        self.routes.push(operation);
        self
    }

    pub(crate) fn into_router(self) -> Router<AppState> {
        self.router
    }
}

use Method as M;
use Operation as O;

/// A batch's body limit: a thousand memories of a few thousand characters each.
const BATCH_BODY_LIMIT: usize = 32 << 20;
/// An attachment's body: the largest file (10 MiB) as base64, with room for the JSON
/// around it.
const ATTACHMENT_BODY_LIMIT: usize = levh_api::attachments::MAX_ATTACHMENT_BYTES / 3 * 4 + 4096;

/// The REST API.
pub(crate) fn api() -> Api {
    Api::new()
        .route(
            Route::new(M::GET, "/api/health", O::Health, "Liveness and store health").ok::<HealthView>(200),
            handlers::health,
        )
        .route(
            Route::new(M::GET, "/api/openapi.json", O::DescribeApi, "This OpenAPI document").ok::<serde_json::Value>(200),
            handlers::openapi_json,
        )
        .route(
            Route::new(M::GET, "/api/ws", O::WatchFeed, "Live feed of every mutation in the workspace (WebSocket upgrade; one JSON event per message)")
                .empty(101),
            crate::feed::socket,
        )
        .route(
            Route::new(M::POST, "/api/memories", O::StoreMemory, "Store a memory through the admission gate (201 stored, 202 held for review, 200 rejected)")
                .body::<StoreArgs>()
                .ok::<CaptureView>(201)
                .ok::<CaptureView>(202)
                .ok::<CaptureView>(200),
            handlers::create_memory,
        )
        .route(
            Route::new(M::POST, "/api/memories:batch", O::StoreMemories, "Store up to 1,000 memories through the admission gate in one transaction, each with its own verdict (judged as if sent alone after the earlier ones); an invalid item is named at its index and the rest are stored")
                .body::<StoreBatchArgs>()
                .body_limit(BATCH_BODY_LIMIT)
                .ok::<BatchView>(200),
            handlers::create_memories,
        )
        .route(
            Route::new(M::POST, "/api/memories:upsert", O::UpsertMemory, "Store a fact under a key through the admission gate: it replaces the key's current memory (kept, superseded, for as_of); status stored, unchanged, held or rejected")
                .body::<levh_api::requests::UpsertArgs>()
                .ok::<levh_api::views::UpsertView>(200),
            handlers::upsert_memory,
        )
        .route(
            Route::new(M::GET, "/api/memories:get", O::GetMemory, "A memory by `id`, or the one under `key` (in `project`; with `as_of`, the one that held then); `pointer` reads into its JSON value")
                .query::<levh_api::requests::GetArgs>()
                .ok::<levh_api::views::GotMemory>(200)
                .errors(&[400, 404]),
            handlers::get_memory_by,
        )
        .route(
            Route::new(M::POST, "/api/checkpoints", O::Checkpoint, "Write where a task stands (goal, done, next, open questions, linked memories): the task's new current checkpoint, through the admission gate")
                .body::<levh_api::checkpoints::CheckpointArgs>()
                .ok::<levh_api::views::UpsertView>(200),
            handlers::checkpoint,
        )
        .route(
            Route::new(M::GET, "/api/continue", O::ContinueTask, "Resume a task: its latest checkpoint, what was stored and used since, the project's open commitments and decisions, as one text within max_tokens")
                .query::<levh_api::checkpoints::ContinueArgs>()
                .ok::<levh_api::checkpoints::ContinueView>(200),
            handlers::continue_task,
        )
        .route(
            Route::new(M::POST, "/api/goals", O::CreateGoal, "Set a goal with milestones (one per title and project)")
                .body::<levh_api::goals::GoalArgs>()
                .ok::<levh_api::goals::GoalChange>(200),
            handlers::create_goal,
        )
        .route(
            Route::new(M::POST, "/api/goals:update", O::UpdateGoal, "Change a goal: status, milestones reached or added, a progress note (a memory of its own, linked from the goal's log)")
                .body::<levh_api::goals::GoalUpdateArgs>()
                .ok::<levh_api::goals::GoalChange>(200)
                .errors(&[400, 404]),
            handlers::update_goal,
        )
        .route(
            Route::new(M::GET, "/api/goals", O::ListGoals, "The goals, most recently changed first")
                .query::<levh_api::goals::GoalListArgs>()
                .ok::<levh_api::goals::GoalList>(200),
            handlers::list_goals,
        )
        .route(
            Route::new(M::POST, "/api/mistakes", O::RecordMistake, "Record a mistake (what happened, why, how to avoid it) as a memory of kind mistake, through the admission gate")
                .body::<levh_api::mistakes::MistakeArgs>()
                .ok::<CaptureView>(201)
                .ok::<CaptureView>(202)
                .ok::<CaptureView>(200),
            handlers::record_mistake,
        )
        .route(
            Route::new(M::GET, "/api/mistakes", O::ListMemories, "Recorded mistakes, newest first (the memory list of kind mistake: every filter and order of GET /api/memories)")
                .query::<ListArgs>()
                .ok::<MemoryList>(200),
            handlers::list_mistakes,
        )
        .route(
            Route::new(M::POST, "/api/check-action", O::CheckAction, "Before an action: the recorded mistakes and pinned rules that apply to it, ranked, or \"no known issue\"; each applying mistake is reinforced")
                .body::<levh_api::mistakes::CheckArgs>()
                .ok::<levh_api::mistakes::CheckView>(200),
            handlers::check_action,
        )
        .route(
            Route::new(M::POST, "/api/memories:move", O::MoveMemories, "Move up to 1,000 live memories to a project (project absent or null: out of every project); ids that name no live memory are returned as missing")
                .body::<MoveArgs>()
                .ok::<MovedView>(200),
            handlers::move_memories,
        )
        .route(
            Route::new(M::GET, "/api/memories", O::ListMemories, "List memories (newest first, or by importance, last recall or retention), filtered, paged by `after`; the first page says how many match")
                .query::<ListArgs>()
                .ok::<MemoryList>(200),
            handlers::list_memories,
        )
        .route(
            Route::new(M::GET, "/api/memories/fading", O::ListFadingMemories, "Memories whose retention fell below the fading threshold")
                .query::<FadingArgs>()
                .ok::<FadingList>(200),
            handlers::fading,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}", O::GetMemory, "One memory")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            handlers::get_memory,
        )
        .route(
            Route::new(M::PATCH, "/api/memories/{id}", O::UpdateMemory, "Update content (judged by the gate like a capture: 200 applied or rejected, 202 held for a person) and/or importance")
                .body::<UpdateBody>()
                .ok::<UpdateView>(200)
                .ok::<UpdateView>(202)
                .errors(&[400, 404]),
            handlers::update_memory,
        )
        .route(
            Route::new(M::DELETE, "/api/memories/{id}", O::ForgetMemory, "Forget a memory (it stops being recalled; purge removes it)")
                .empty(204)
                .errors(&[400, 404]),
            handlers::forget_memory,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/forgetting-curve", O::ForgettingCurve, "Predicted retention for the coming days")
                .query::<CurveQuery>()
                .ok::<CurveView>(200)
                .errors(&[404]),
            handlers::forgetting_curve,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/score-breakdown", O::ScoreBreakdown, "The memory's H-score and its four terms (against a query, if given)")
                .query::<ScoreQuery>()
                .ok::<ScoreView>(200)
                .errors(&[404]),
            handlers::score_breakdown,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/reinforce", O::ReinforceMemory, "Reinforce as if recalled")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            handlers::reinforce,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/pin", O::PinMemory, "Pin: never fades")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            handlers::pin,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/unpin", O::UnpinMemory, "Unpin: decays again")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            handlers::unpin,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/feedback", O::MemoryFeedback, "Helpful (reinforces) or wrong (weakens)")
                .body::<FeedbackBody>()
                .ok::<MemoryView>(200)
                .errors(&[404]),
            handlers::feedback,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/purge", O::PurgeMemory, "Remove a memory and every trace of its content")
                .ok::<PurgeView>(200)
                .errors(&[400, 404]),
            handlers::purge,
        )
        .route(
            Route::new(M::GET, "/api/memories/held", O::ListHeldMemories, "Held candidates awaiting a person's decision")
                .query::<HeldListArgs>()
                .ok::<HeldList>(200),
            handlers::held_list,
        )
        .route(
            Route::new(M::GET, "/api/memories/held/{id}", O::GetHeldMemory, "One held candidate")
                .ok::<HeldView>(200)
                .errors(&[400, 404]),
            handlers::held_get,
        )
        .route(
            Route::new(M::POST, "/api/memories/held/{id}/admit", O::AdmitHeldMemory, "Admit a held candidate (optionally superseding its nearest neighbour)")
                .body::<AdmitBody>()
                .ok::<AdmitView>(200)
                .errors(&[404, 409]),
            handlers::held_admit,
        )
        .route(
            Route::new(M::POST, "/api/memories/held/{id}/discard", O::DiscardHeldMemory, "Discard a held candidate")
                .ok::<HeldView>(200)
                .errors(&[400, 404, 409]),
            handlers::held_discard,
        )
        .route(
            Route::new(M::POST, "/api/memories/evaluate-admission", O::EvaluateAdmission, "What the gate would decide, storing nothing")
                .body::<EvaluateArgs>()
                .ok::<EvaluationView>(200),
            handlers::evaluate_admission,
        )
        .route(
            Route::new(M::GET, "/api/memories/audit-secrets", O::AuditSecrets, "Memories that contain secrets (kinds only, never the secrets)")
                .ok::<SecretsView>(200),
            handlers::audit_secrets,
        )
        .route(
            Route::new(M::POST, "/api/memories/redact-all", O::RedactSecrets, "Redact every secret found in stored memories")
                .ok::<SecretsView>(200),
            handlers::redact_all,
        )
        .route(
            Route::new(M::POST, "/api/recall", O::RecallMemory, "Recall: ranked by H-score; what is returned is reinforced")
                .body::<RecallArgs>()
                .ok::<RecallView>(200),
            handlers::recall,
        )
        .route(
            Route::new(M::POST, "/api/search", O::SearchMemory, "Search like recall, reinforcing nothing")
                .body::<RecallArgs>()
                .ok::<RecallView>(200),
            handlers::search,
        )
        .route(
            Route::new(M::GET, "/api/stats", O::GetMemoryStats, "Counts and averages of the workspace")
                .query::<ProjectArgs>()
                .ok::<StatsView>(200),
            handlers::stats,
        )
        .route(
            Route::new(M::GET, "/api/projects", O::ListProjects, "Projects with their memory counts").ok::<ProjectList>(200),
            handlers::projects,
        )
        .route(
            Route::new(M::GET, "/api/sources", O::ListSources, "Sources with their memory counts").ok::<SourceList>(200),
            handlers::sources,
        )
        .route(
            Route::new(M::GET, "/api/export", O::ExportMemories, "Every live memory of the workspace (of a project), newest first: format json (default, {memories: [...]}), jsonl (one memory a line, what levh import reads back) or markdown; include_forgotten adds forgotten ones, each with forgotten_at")
                .query::<levh_api::export::ExportArgs>()
                .ok::<MemoryList>(200)
                .errors(&[400]),
            handlers::export,
        )
        .route(
            Route::new(M::GET, "/api/share/bundle", O::FetchShareBundle, "For a peer's share token only (`levh peer grant`): a bundle of one project it was granted (`project`, optional when it was granted one), signed by this instance and encrypted to the peer (an age file, application/octet-stream), for `levh pull PEER` at the other end. Any other token is refused, and a share token is refused on every other route")
                .query::<levh_api::share::ShareBundleArgs>()
                .empty(200)
                .errors(&[403, 404]),
            handlers::share_bundle,
        )
        .route(
            Route::new(M::GET, "/api/sessions", O::ListSessions, "Sessions newest first, each with its live memories counted; `before` (a session's started_at) pages on")
                .query::<levh_api::requests::SessionListArgs>()
                .ok::<levh_api::views::SessionList>(200)
                .errors(&[400]),
            handlers::sessions,
        )
        .route(
            Route::new(M::POST, "/api/sessions", O::CreateSession, "Open a session")
                .body::<SessionBody>()
                .ok::<SessionView>(201),
            handlers::create_session,
        )
        .route(
            Route::new(M::POST, "/api/sessions/{id}/end", O::EndSession, "End a session")
                .ok::<SessionView>(200)
                .errors(&[400]),
            handlers::end_session,
        )
        .route(
            Route::new(M::POST, "/api/sessions/{id}/summarize", O::SummarizeSession, "Summarise a session into one memory (kind summary): what it stored, decided and promised; through the gate")
                .ok::<levh_api::views::SessionSummaryView>(200)
                .errors(&[400]),
            handlers::summarize_session,
        )
        .route(
            Route::new(M::POST, "/api/consolidations", O::Consolidate, "Consolidate clusters of aged, related, unpinned memories into one summary memory each (members retired from default recall, kept, linked); dry_run writes nothing")
                .body::<levh_api::requests::ConsolidateArgs>()
                .ok::<levh_api::views::ConsolidationView>(200)
                .errors(&[400]),
            handlers::consolidate,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/attachments", O::AttachFile, "Attach a file (PDF, HTML, Markdown or text; base64, at most 10 MiB): its text goes through the gate as an attachment memory that recall finds; a file holding a secret is refused")
                .body::<levh_api::requests::AttachArgs>()
                .body_limit(ATTACHMENT_BODY_LIMIT)
                .ok::<levh_api::views::AttachedView>(200)
                .errors(&[400, 404]),
            handlers::attach_file,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/attachments", O::ListAttachments, "The files attached to a memory, oldest first")
                .ok::<levh_api::views::AttachmentList>(200)
                .errors(&[404]),
            handlers::list_attachments,
        )
        .route(
            Route::new(M::GET, "/api/agents", O::ListAgents, "Who used the memory in the last `days` (default 30): each surface and client with what it wrote, recalled and changed, and when, from the event log (its newest 200,000 events at most; `cut_short` says when that left older ones out)")
                .query::<levh_api::agents::AgentsArgs>()
                .ok::<levh_api::agents::AgentsView>(200),
            handlers::list_agents,
        )
        .route(
            Route::new(M::GET, "/api/reports/recalls", O::ReportRecalls, "What was asked and what was done with the answers since `since` (default 7 days): each recall, search and ask with the ids it returned, its tokens, which were then used (helpful, reinforced, pinned) or marked unhelpful, and the recalls that found nothing; filtered by `token` id or `client`. Query text only when the operator set LEVH_LOG_QUERIES")
                .query::<levh_api::reports::ReportArgs>()
                .ok::<levh_api::reports::RecallReportView>(200)
                .errors(&[400]),
            handlers::report_recalls,
        )
        .route(
            Route::new(M::GET, "/api/reports/usage", O::ReportUsage, "What each token and client stored and recalled per day (UTC) since `since` (default 7 days): memories and bytes stored, recalls, memories, tokens and bytes returned")
                .query::<levh_api::reports::ReportArgs>()
                .ok::<levh_api::reports::UsageView>(200)
                .errors(&[400]),
            handlers::report_usage,
        )
        .route(
            Route::new(M::GET, "/api/presence", O::ListPresence, "The MCP sessions connected now (over stdio from any process on this store, or HTTP) with their client, token, project and last activity, and those that ended in the last day; the live feed announces each start and end (`session-start`, `session-end`)")
                .ok::<levh_api::reports::PresenceView>(200),
            handlers::list_presence,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/entities", O::GetMemory, "The people, organizations, projects and other entities a memory involves, each with its parts in it (sender, attendee, mentioned, ...); people first")
                .ok::<levh_api::views::MemoryEntities>(200)
                .errors(&[400, 404]),
            handlers::memory_entities,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/consolidated", O::GetMemory, "For a consolidation's summary: the memories it replaced, oldest first (empty for any other memory)")
                .ok::<MemoryList>(200)
                .errors(&[404]),
            handlers::consolidated_members,
        )
        .route(
            Route::new(M::POST, "/api/consolidations/{id}/undo", O::UndoConsolidation, "Undo a consolidation: its members live again as they were, its summary forgotten")
                .ok::<levh_api::views::UndoConsolidationView>(200)
                .errors(&[400]),
            handlers::undo_consolidation,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/related", O::RelatedMemories, "Memories whose content is closest to this one's")
                .query::<RelatedQuery>()
                .ok::<RelatedList>(200)
                .errors(&[404]),
            handlers::related,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/history", O::MemoryHistory, "What happened to the memory, newest first, from the event log (never content)")
                .query::<HistoryQuery>()
                .ok::<HistoryView>(200)
                .errors(&[404]),
            handlers::memory_history,
        )
        .route(
            Route::new(M::GET, "/api/context", O::GetContext, "Pinned rules, then the project's essentials, within a token budget (what an agent loads at the start of a session)")
                .query::<ContextArgs>()
                .ok::<ContextView>(200),
            handlers::context,
        )
        .route(
            Route::new(M::GET, "/api/connectors", O::ListConnectors, "Connectors with their manifests and stored grants")
                .ok::<ConnectorCatalog>(200)
                .errors(&[503]),
            handlers::connectors,
        )
        .route(
            Route::new(M::GET, "/api/connectors/sync-state", O::ConnectorSyncStatus, "Recent sync runs")
                .query::<SyncStatusArgs>()
                .ok::<Vec<SyncReport>>(200),
            handlers::sync_state,
        )
        .route(
            Route::new(M::GET, "/api/connectors/{id}", O::GetConnectorHelp, "One connector's settings, capabilities and grants")
                .ok::<ConnectorHelp>(200)
                .errors(&[404, 503]),
            handlers::connector_help,
        )
        .route(
            Route::new(M::POST, "/api/connectors/{id}/sync", O::SyncConnector, "Sync a connector with its stored grants, through the gate")
                .body::<SyncBody>()
                .ok::<SyncReport>(200)
                .errors(&[403, 404, 422, 503]),
            handlers::sync_connector,
        )
        .route(
            Route::new(M::POST, "/api/connectors/{id}/grants", O::GrantConnector, "Let a connector read a directory (and everything under it) or reach a host, when one workspace (`workspace`, default the caller's) syncs; only the operator or the local person, since grants are the machine's")
                .body::<GrantBody>()
                .ok::<ConnectorHelp>(200)
                .errors(&[403, 404, 422, 503]),
            handlers::grant_connector,
        )
        .route(
            Route::new(M::POST, "/api/connectors/{id}/revoke", O::RevokeConnector, "Take a connector's grant of a directory or a host back")
                .body::<GrantBody>()
                .ok::<ConnectorHelp>(200)
                .errors(&[403, 404, 422, 503]),
            handlers::revoke_connector,
        )
        .route(
            Route::new(M::GET, "/api/settings", O::GetSettings, "The store's checks, the embedder and model, the active scorer, and an MCP configuration per client")
                .ok::<SettingsView>(200),
            handlers::get_settings,
        )
        .route(
            Route::new(M::GET, "/api/tokens", O::ListTokens, "The workspace's API tokens, newest first (never their secrets)")
                .ok::<TokenList>(200),
            handlers::list_tokens,
        )
        .route(
            Route::new(M::POST, "/api/tokens", O::CreateToken, "Issue a token bound to the caller's workspace; the answer carries its secret, shown this once")
                .body::<TokenBody>()
                .ok::<IssuedTokenView>(201),
            handlers::create_token,
        )
        .route(
            Route::new(M::DELETE, "/api/tokens/{id}", O::RevokeToken, "Revoke one of the workspace's tokens: it stops working at once")
                .ok::<TokenList>(200)
                .errors(&[404]),
            handlers::revoke_token,
        )
        .route(
            Route::new(M::POST, "/api/ask", O::Ask, "An answer to a question from the memories, citing each memory it used (with LEVH_LLM_URL a model writes it and every citation is checked; without, the evidence grouped by person); reinforces nothing")
                .body::<levh_api::requests::AskArgs>()
                .ok::<levh_api::views::AnswerView>(200),
            handlers::ask,
        )
        .route(
            Route::new(M::GET, "/api/briefing", O::Briefing, "The day at a glance in the user's zone: events, promises due and owed, recent decisions, the day's people, important memories fading")
                .query::<levh_api::requests::BriefingArgs>()
                .ok::<levh_api::views::BriefingView>(200),
            handlers::briefing,
        )
        .route(
            Route::new(M::GET, "/api/meeting-prep", O::MeetingPrep, "What to know before a meeting (a calendar event by memory or source id; the next one by default): attendees with what was last discussed and what is open, decisions, documents, earlier meetings")
                .query::<levh_api::requests::MeetingPrepArgs>()
                .ok::<levh_api::views::MeetingPrepView>(200)
                .errors(&[404]),
            handlers::meeting_prep,
        )
        .route(
            Route::new(M::GET, "/api/memories/{id}/trust", O::MemoryTrust, "How far a memory can be believed: its source, a person's review, corroboration by other sources, age and risks (an open conflict, redactions, a supersession), summed to 0..1 with a label; ranking is separate")
                .ok::<levh_api::views::TrustView>(200)
                .errors(&[404]),
            handlers::memory_trust,
        )
        .route(
            Route::new(M::GET, "/api/review", O::ListReviewMemories, "Fading memories waiting for a person's review, weakest first, less those a decision put off until later")
                .query::<levh_api::requests::ReviewQueueArgs>()
                .ok::<levh_api::views::ReviewQueueView>(200),
            handlers::review_queue,
        )
        .route(
            Route::new(M::POST, "/api/memories/{id}/review", O::ReviewMemory, "A person's review decision on a fading memory: keep, reinforce, weaken, pin, snooze (days) or forget; recorded in its history")
                .body::<levh_api::requests::ReviewBody>()
                .ok::<levh_api::views::ReviewView>(200)
                .errors(&[404]),
            handlers::review_memory,
        )
        .route(
            Route::new(M::GET, "/api/conflicts", O::ListConflicts, "Pairs of memories that may disagree (a value, a negation, opposite words, a swapped name), open ones unless include_resolved")
                .query::<levh_api::requests::ConflictListArgs>()
                .ok::<levh_api::views::ConflictList>(200),
            handlers::conflicts,
        )
        .route(
            Route::new(M::POST, "/api/conflicts/detect", O::DetectConflicts, "Look for pairs that may disagree among the newest 5,000 memories; new ones are recorded and announced on the live feed")
                .body::<levh_api::requests::ConflictDetectArgs>()
                .ok::<levh_api::views::DetectView>(200),
            handlers::detect_conflicts,
        )
        .route(
            Route::new(M::POST, "/api/conflicts/{id}/resolve", O::ResolveConflict, "A person resolves a conflict candidate: keep_both, not_a_conflict, or supersede (retire one, kept for --as-of)")
                .body::<levh_api::requests::ResolveConflictBody>()
                .ok::<levh_api::views::ConflictView>(200)
                .errors(&[404, 409]),
            handlers::resolve_conflict,
        )
        .route(
            Route::new(M::GET, "/api/decisions", O::ListDecisions, "Decisions the memories state (\"we decided…\", \"karar verdik…\"), newest first, with when, where and who was there")
                .query::<KnowledgeArgs>()
                .ok::<DecisionList>(200),
            handlers::decisions,
        )
        .route(
            Route::new(M::GET, "/api/commitments", O::ListCommitments, "Promises the memories make in their writer's words, soonest due first (due dates in LEVH_TZ or the system's zone)")
                .query::<KnowledgeArgs>()
                .ok::<CommitmentList>(200),
            handlers::commitments,
        )
        .route(
            Route::new(M::POST, "/api/commitments/{id}/done", O::CompleteCommitment, "Mark a commitment done (its id from the list); it leaves the open list")
                .ok::<CommitmentView>(200)
                .errors(&[404]),
            handlers::complete_commitment,
        )
        .route(
            Route::new(M::GET, "/api/timeline", O::Timeline, "Memories grouped by the day they happened, in LEVH_TZ or the system's zone: a named range (this week, last week, ...) or from/to, optionally with one person, project or kind")
                .query::<TimelineArgs>()
                .ok::<TimelineView>(200),
            handlers::timeline,
        )
        .route(
            Route::new(M::GET, "/api/people", O::ListPeople, "People the memories are about, one per person across sources, most memories first, with the last interaction, channels and organizations")
                .query::<EntityListArgs>()
                .ok::<PeopleList>(200),
            handlers::people,
        )
        .route(
            Route::new(M::GET, "/api/organizations", O::ListOrganizations, "Organizations by e-mail domain (personal providers excluded), with who from each appears")
                .query::<EntityListArgs>()
                .ok::<OrganizationList>(200),
            handlers::organizations,
        )
        .route(
            Route::new(M::GET, "/api/entities", O::ListEntities, "Entities of every kind (person, organization, project, event, document, task), most memories first")
                .query::<EntityListArgs>()
                .ok::<EntityList>(200),
            handlers::entities,
        )
        .route(
            Route::new(M::GET, "/api/entities/{entity}", O::AboutEntity, "Everything about one entity (an id, an e-mail address, an @handle, a name, a domain or a project): its memories, organizations or people, related entities and open commitments")
                .query::<EntityPageArgs>()
                .ok::<AboutView>(200)
                .errors(&[404]),
            handlers::about_entity,
        )
        .route(
            Route::new(M::GET, "/api/graph", O::EntityGraph, "The entity graph: the entities with the most memories and their co-occurrence edges (weight = shared memories)")
                .query::<GraphArgs>()
                .ok::<GraphView>(200),
            handlers::entity_graph,
        )
        .route(
            Route::new(M::POST, "/api/entities/merge", O::MergeEntities, "Merge two entities the heuristics kept apart: `from` goes into `into`")
                .body::<MergeArgs>()
                .ok::<EntityView>(200)
                .errors(&[404]),
            handlers::merge_entities,
        )
        .route(
            Route::new(M::POST, "/api/entities/reindex", O::ReindexEntities, "Index the memories not indexed under today's rules (with all, every memory); resumable")
                .body::<ReindexArgs>()
                .ok::<ReindexView>(200),
            handlers::reindex_entities,
        )
}
