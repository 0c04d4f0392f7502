//! The handlers: each extracts its request, runs one levh-api operation off the async
//! threads, and answers with the operation's view. Nothing else happens here.

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use levh_api::requests::{
    AboutArgs, EntityListArgs, EntityPageArgs, GraphArgs, KnowledgeArgs, MergeArgs, ReindexArgs,
    TimelineArgs,
};
use levh_api::requests::{
    AdmitBody, ContextArgs, CurveQuery, EvaluateArgs, FadingArgs, FeedbackBody, GrantBody,
    HeldListArgs, HistoryQuery, ListArgs, MoveArgs, ProjectArgs, RecallArgs, RelatedArgs,
    RelatedQuery, ScoreQuery, SessionBody, StoreArgs, StoreBatchArgs, SyncBody, SyncStatusArgs,
    TokenBody, UpdateBody, held_id,
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
use levh_api::{connectors, held, memories, recall, secrets, sessions, tokens, workspace};
use levh_core::sync::{ConnectorCatalog, ConnectorHelp, Connectors, SyncReport, SyncRequest};
use levh_core::{Levh, Principal, Scope};

use super::extract::{Body, Caller, CallerScope, OptionalBody, Params, client};
use crate::{ApiError, AppState};

/// Runs an operation that blocks (SQLite, the embedder) without stalling the async
/// threads: on the server's multi-threaded runtime in place, the worker handing its other
/// tasks to another thread meanwhile (`block_in_place`); elsewhere (a single-threaded
/// test runtime) on the blocking pool. A panic is an internal error either way.
///
/// Why in place: handing each request to a pool thread and back cost two thread
/// wake-ups on its path; when the machine was busy with something else (the Python levh
/// beside it, `scripts/compare-python-levh.sh`) a search took twice its CPU time.
async fn run<T, F>(state: &AppState, scope: Scope, operation: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Levh, &Scope) -> levh_api::Result<T> + Send + 'static,
{
    let levh = state.levh.clone();
    let multi_threaded = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    let answer = if multi_threaded {
        tokio::task::block_in_place(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| operation(&levh, &scope)))
        })
        .map_err(|panic| ApiError::internal(panic_message(panic.as_ref())))?
    } else {
        // The blocking thread works inside the request's operation span.
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || span.in_scope(|| operation(&levh, &scope)))
            .await
            .map_err(ApiError::internal)?
    };
    answer.map_err(ApiError::from)
}

/// What a panic said, for the error it becomes.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let said = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    format!("the operation panicked: {said}")
}

/// Runs an operation that needs the connector runtime.
async fn with_runtime<T, F>(state: &AppState, scope: Scope, operation: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Levh, &Scope, &dyn Connectors) -> levh_api::Result<T> + Send + 'static,
{
    let runtime = state.connectors.clone();
    run(state, scope, move |levh, scope| {
        operation(levh, scope, connectors::runtime(runtime.as_deref())?)
    })
    .await
}

pub(super) async fn health(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<HealthView>, ApiError> {
    let server = state.server.clone();
    let scope = principal.scope(levh_core::Surface::Http, None);
    run(&state, scope, move |levh, _| {
        levh_api::server::health(levh, server.as_ref(), &principal)
    })
    .await
    .map(Json)
}

pub(super) async fn openapi_json() -> Json<serde_json::Value> {
    Json(crate::openapi_document())
}

pub(super) async fn create_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    headers: HeaderMap,
    Body(args): Body<StoreArgs>,
) -> Result<Response, ApiError> {
    let source = client(&headers).unwrap_or_else(|| "http".to_owned());
    let view = run(&state, scope, move |levh, scope| {
        memories::store(levh, scope, args, source)
    })
    .await?;
    Ok((capture_status(&view), Json::<CaptureView>(view)).into_response())
}

/// 201 stored, 202 held for a person, 200 rejected.
fn capture_status(view: &CaptureView) -> StatusCode {
    if view.memory_id.is_some() {
        StatusCode::CREATED
    } else if view.held_id.is_some() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    }
}

pub(super) async fn create_memories(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    headers: HeaderMap,
    Body(args): Body<StoreBatchArgs>,
) -> Result<Json<BatchView>, ApiError> {
    let source = client(&headers).unwrap_or_else(|| "http".to_owned());
    run(&state, scope, move |levh, scope| {
        memories::store_batch(levh, scope, args, source)
    })
    .await
    .map(Json)
}

pub(super) async fn upsert_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<levh_api::requests::UpsertArgs>,
) -> Result<Json<levh_api::views::UpsertView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::upsert(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn get_memory_by(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::GetArgs>,
) -> Result<Json<levh_api::views::GotMemory>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::get_by(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn checkpoint(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<levh_api::checkpoints::CheckpointArgs>,
) -> Result<Json<levh_api::views::UpsertView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::checkpoints::checkpoint(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn continue_task(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::checkpoints::ContinueArgs>,
) -> Result<Json<levh_api::checkpoints::ContinueView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::checkpoints::resume(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn create_goal(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<levh_api::goals::GoalArgs>,
) -> Result<Json<levh_api::goals::GoalChange>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::goals::create(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn update_goal(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    headers: HeaderMap,
    Body(args): Body<levh_api::goals::GoalUpdateArgs>,
) -> Result<Json<levh_api::goals::GoalChange>, ApiError> {
    let source = client(&headers).unwrap_or_else(|| "http".to_owned());
    run(&state, scope, move |levh, scope| {
        levh_api::goals::update(levh, scope, args, source)
    })
    .await
    .map(Json)
}

pub(super) async fn list_goals(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::goals::GoalListArgs>,
) -> Result<Json<levh_api::goals::GoalList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::goals::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn record_mistake(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    headers: HeaderMap,
    Body(args): Body<levh_api::mistakes::MistakeArgs>,
) -> Result<(StatusCode, Json<CaptureView>), ApiError> {
    let source = client(&headers).unwrap_or_else(|| "http".to_owned());
    let view = run(&state, scope, move |levh, scope| {
        levh_api::mistakes::record(levh, scope, args, source)
    })
    .await?;
    Ok((capture_status(&view), Json(view)))
}

pub(super) async fn list_mistakes(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<ListArgs>,
) -> Result<Json<MemoryList>, ApiError> {
    if args
        .kind
        .as_deref()
        .is_some_and(|k| k != levh_api::mistakes::MISTAKE_KIND)
    {
        return Err(
            levh_api::Error::invalid("invalid kind: mistakes are all of kind mistake").into(),
        );
    }
    let args = ListArgs {
        kind: Some(levh_api::mistakes::MISTAKE_KIND.to_owned()),
        ..args
    };
    run(&state, scope, move |levh, scope| {
        memories::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn check_action(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<levh_api::mistakes::CheckArgs>,
) -> Result<Json<levh_api::mistakes::CheckView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::mistakes::check(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn move_memories(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<MoveArgs>,
) -> Result<Json<MovedView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::move_to_project(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn list_memories(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<ListArgs>,
) -> Result<Json<MemoryList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn fading(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<FadingArgs>,
) -> Result<Json<FadingList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::fading(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn get_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::get(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn update_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Body(body): Body<UpdateBody>,
) -> Result<(StatusCode, Json<UpdateView>), ApiError> {
    let view = run(&state, scope, move |levh, scope| {
        memories::update(levh, scope, &id, body)
    })
    .await?;
    // Held for a person, as a capture would be: accepted, not done.
    let status = if view.held_id.is_some() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view)))
}

pub(super) async fn forget_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::forget(levh, scope, &id)
    })
    .await
    .map(|_| StatusCode::NO_CONTENT)
}

pub(super) async fn forgetting_curve(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Params(query): Params<CurveQuery>,
) -> Result<Json<CurveView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::curve(levh, scope, &id, query)
    })
    .await
    .map(Json)
}

pub(super) async fn score_breakdown(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Params(query): Params<ScoreQuery>,
) -> Result<Json<ScoreView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::score(levh, scope, &id, query.query.as_deref())
    })
    .await
    .map(Json)
}

pub(super) async fn related(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Params(query): Params<RelatedQuery>,
) -> Result<Json<RelatedList>, ApiError> {
    let args = RelatedArgs {
        id,
        limit: query.limit,
    };
    run(&state, scope, move |levh, scope| {
        memories::related(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn reinforce(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::reinforce(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn pin(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::set_pinned(levh, scope, &id, true)
    })
    .await
    .map(Json)
}

pub(super) async fn unpin(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::set_pinned(levh, scope, &id, false)
    })
    .await
    .map(Json)
}

pub(super) async fn feedback(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Body(body): Body<FeedbackBody>,
) -> Result<Json<MemoryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::feedback(levh, scope, &id, body.helpful)
    })
    .await
    .map(Json)
}

pub(super) async fn purge(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<PurgeView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        memories::purge(levh, scope, &id)
    })
    .await
    .map(Json)
}

/// The whole export in the asked format, with its media type. (Built in memory: a
/// 100k-memory export is ~80 MB of JSON; a client that needs less asks by project.)
pub(super) async fn export(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::export::ExportArgs>,
) -> Result<Response, ApiError> {
    let format = args.format.unwrap_or_default();
    let body = run(&state, scope, move |levh, scope| {
        let mut out = Vec::new();
        levh_api::export::write(levh, scope, &args, &mut out, |_| {})?;
        Ok(out)
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, format.media_type())],
        body,
    )
        .into_response())
}

/// A bundle for the peer whose share token asks: only it can open it (an age file).
pub(super) async fn share_bundle(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    peer: Option<Extension<crate::auth::SharePeer>>,
    Params(args): Params<levh_api::share::ShareBundleArgs>,
) -> Result<Response, ApiError> {
    let Some(Extension(crate::auth::SharePeer(peer))) = peer else {
        return Err(ApiError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            "only a peer's share token fetches bundles (`levh peer grant NAME --project P` issues one)",
        ));
    };
    let Some(share) = state.share.clone() else {
        return Err(ApiError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            "this server shares with no peer",
        ));
    };
    let body = run(&state, scope, move |levh, scope| {
        // The identity exists: `levh peer grant` made sure of it.
        let identity = share.identity("levh", levh.now())?;
        levh_api::share::bundle_for_peer(
            levh,
            scope,
            &share,
            &identity,
            &peer,
            args.project.as_deref(),
        )
        .map(|(bytes, _)| bytes)
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
        body,
    )
        .into_response())
}

pub(super) async fn held_list(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<HeldListArgs>,
) -> Result<Json<HeldList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        held::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn held_get(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<HeldView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        held::get(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn held_admit(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    OptionalBody(body): OptionalBody<AdmitBody>,
) -> Result<Json<AdmitView>, ApiError> {
    let id = held_id("id", &id)?;
    run(&state, scope, move |levh, scope| {
        held::admit(levh, scope, id, body.supersede)
    })
    .await
    .map(Json)
}

pub(super) async fn held_discard(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<HeldView>, ApiError> {
    let id = held_id("id", &id)?;
    run(&state, scope, move |levh, scope| {
        held::discard(levh, scope, id)
    })
    .await
    .map(Json)
}

pub(super) async fn evaluate_admission(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<EvaluateArgs>,
) -> Result<Json<EvaluationView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        held::evaluate(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn audit_secrets(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<SecretsView>, ApiError> {
    run(&state, scope, secrets::audit).await.map(Json)
}

pub(super) async fn redact_all(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<SecretsView>, ApiError> {
    run(&state, scope, secrets::redact).await.map(Json)
}

pub(super) async fn recall(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<RecallArgs>,
) -> Result<Json<RecallView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        recall::recall(levh, scope, args, true)
    })
    .await
    .map(Json)
}

pub(super) async fn search(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<RecallArgs>,
) -> Result<Json<RecallView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        recall::recall(levh, scope, args, false)
    })
    .await
    .map(Json)
}

pub(super) async fn context(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<ContextArgs>,
) -> Result<Json<ContextView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        recall::context(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn stats(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<ProjectArgs>,
) -> Result<Json<StatsView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        workspace::stats(levh, scope, args.project)
    })
    .await
    .map(Json)
}

pub(super) async fn projects(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<ProjectList>, ApiError> {
    run(&state, scope, workspace::projects).await.map(Json)
}

pub(super) async fn sources(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<SourceList>, ApiError> {
    run(&state, scope, workspace::sources).await.map(Json)
}

pub(super) async fn sessions(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::SessionListArgs>,
) -> Result<Json<levh_api::views::SessionList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        sessions::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn create_session(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    OptionalBody(body): OptionalBody<SessionBody>,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    run(&state, scope, move |levh, scope| {
        sessions::create(levh, scope, body.project)
    })
    .await
    .map(|view| (StatusCode::CREATED, Json(view)))
}

pub(super) async fn end_session(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        sessions::end(levh, scope, id)
    })
    .await
    .map(Json)
}

pub(super) async fn summarize_session(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<levh_api::views::SessionSummaryView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        sessions::summarize(levh, scope, id)
    })
    .await
    .map(Json)
}

pub(super) async fn consolidate(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(body): Body<levh_api::requests::ConsolidateArgs>,
) -> Result<Json<levh_api::views::ConsolidationView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        let model = levh_embed::chat::ChatModel::from_env().map_err(levh_api::Error::invalid)?;
        levh_api::consolidation::consolidate(
            levh,
            scope,
            body,
            model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
        )
    })
    .await
    .map(Json)
}

pub(super) async fn memory_entities(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<levh_api::views::MemoryEntities>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::of_memory(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn consolidated_members(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<MemoryList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::consolidation::members(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn attach_file(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Body(body): Body<levh_api::requests::AttachArgs>,
) -> Result<Json<levh_api::views::AttachedView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::attachments::attach_encoded(levh, scope, &id, body)
    })
    .await
    .map(Json)
}

pub(super) async fn list_attachments(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<levh_api::views::AttachmentList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::attachments::list(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn undo_consolidation(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<levh_api::views::UndoConsolidationView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::consolidation::undo(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn connectors(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<ConnectorCatalog>, ApiError> {
    with_runtime(&state, scope, |_, scope, runtime| {
        connectors::list(runtime, scope)
    })
    .await
    .map(Json)
}

pub(super) async fn connector_help(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<ConnectorHelp>, ApiError> {
    with_runtime(&state, scope, move |_, scope, runtime| {
        connectors::help(runtime, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn sync_connector(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    OptionalBody(body): OptionalBody<SyncBody>,
) -> Result<Json<SyncReport>, ApiError> {
    let request = SyncRequest {
        id,
        config: body.config.into_iter().collect(),
        project: body.project,
        dry_run: body.dry_run,
    };
    let report = with_runtime(&state, scope, move |levh, scope, runtime| {
        connectors::sync(levh, scope, runtime, request)
    })
    .await?;
    // A refused capability is the person's to grant: 403, with the line that names the
    // grant command. (The run is recorded either way.)
    if let Some(refusal) = connectors::refusal(&report) {
        return Err(refusal.into());
    }
    Ok(Json(report))
}

pub(super) async fn sync_state(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<SyncStatusArgs>,
) -> Result<Json<Vec<SyncReport>>, ApiError> {
    run(&state, scope, move |levh, scope| {
        connectors::status(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn memory_trust(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<levh_api::views::TrustView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        levh_api::trust::trust(levh, server.as_ref(), scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn memory_history(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Params(query): Params<HistoryQuery>,
) -> Result<Json<HistoryView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        memories::history(levh, server.as_ref(), scope, &id, query)
    })
    .await
    .map(Json)
}

pub(super) async fn list_agents(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::agents::AgentsArgs>,
) -> Result<Json<levh_api::agents::AgentsView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        levh_api::agents::list(levh, server.as_ref(), scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn report_recalls(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::reports::ReportArgs>,
) -> Result<Json<levh_api::reports::RecallReportView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        levh_api::reports::recalls(levh, server.as_ref(), scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn report_usage(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::reports::ReportArgs>,
) -> Result<Json<levh_api::reports::UsageView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        levh_api::reports::usage(levh, server.as_ref(), scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn list_presence(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
) -> Result<Json<levh_api::reports::PresenceView>, ApiError> {
    let server = state.server.clone();
    run(&state, scope, move |levh, scope| {
        levh_api::reports::presence(levh, server.as_ref(), scope)
    })
    .await
    .map(Json)
}

pub(super) async fn get_settings(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<SettingsView>, ApiError> {
    let facts = state.facts.clone();
    let scope = principal.scope(levh_core::Surface::Http, None);
    run(&state, scope, move |levh, _| {
        levh_api::settings::settings(levh, &facts, &principal)
    })
    .await
    .map(Json)
}

pub(super) async fn list_tokens(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<TokenList>, ApiError> {
    let server = state.server.clone();
    let scope = principal.scope(levh_core::Surface::Http, None);
    run(&state, scope, move |_, _| {
        tokens::list(server.as_ref(), &principal)
    })
    .await
    .map(Json)
}

pub(super) async fn create_token(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Body(body): Body<TokenBody>,
) -> Result<(StatusCode, Json<IssuedTokenView>), ApiError> {
    let server = state.server.clone();
    let scope = principal.scope(levh_core::Surface::Http, None);
    run(&state, scope, move |levh, _| {
        tokens::create(server.as_ref(), &principal, body, levh.now())
    })
    .await
    .map(|view| (StatusCode::CREATED, Json(view)))
}

pub(super) async fn revoke_token(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
) -> Result<Json<TokenList>, ApiError> {
    let server = state.server.clone();
    let scope = principal.scope(levh_core::Surface::Http, None);
    run(&state, scope, move |levh, _| {
        tokens::revoke(server.as_ref(), &principal, &id, levh.now())
    })
    .await
    .map(Json)
}

/// A change to a connector's grants (levh-api's `grant` or `revoke`) as the caller.
type GrantChange =
    fn(&dyn Connectors, &Principal, &str, GrantBody) -> levh_api::Result<ConnectorHelp>;

async fn change_grant(
    state: AppState,
    principal: Principal,
    id: String,
    body: GrantBody,
    change: GrantChange,
) -> Result<Json<ConnectorHelp>, ApiError> {
    let scope = principal.scope(levh_core::Surface::Http, None);
    with_runtime(&state, scope, move |_, _, runtime| {
        change(runtime, &principal, &id, body)
    })
    .await
    .map(Json)
}

pub(super) async fn grant_connector(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
    Body(body): Body<GrantBody>,
) -> Result<Json<ConnectorHelp>, ApiError> {
    change_grant(state, principal, id, body, connectors::grant).await
}

pub(super) async fn revoke_connector(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
    Body(body): Body<GrantBody>,
) -> Result<Json<ConnectorHelp>, ApiError> {
    change_grant(state, principal, id, body, connectors::revoke).await
}

pub(super) async fn ask(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<levh_api::requests::AskArgs>,
) -> Result<Json<levh_api::views::AnswerView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        let model = levh_embed::chat::ChatModel::from_env().map_err(levh_api::Error::invalid)?;
        levh_api::ask::ask(
            levh,
            scope,
            args,
            model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
        )
    })
    .await
    .map(Json)
}

pub(super) async fn briefing(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::BriefingArgs>,
) -> Result<Json<levh_api::views::BriefingView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::briefing::briefing(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn meeting_prep(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::MeetingPrepArgs>,
) -> Result<Json<levh_api::views::MeetingPrepView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::briefing::meeting_prep(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn review_queue(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::ReviewQueueArgs>,
) -> Result<Json<levh_api::views::ReviewQueueView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::review::queue(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn review_memory(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Body(body): Body<levh_api::requests::ReviewBody>,
) -> Result<Json<levh_api::views::ReviewView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::review::review(levh, scope, &id, body)
    })
    .await
    .map(Json)
}

pub(super) async fn conflicts(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<levh_api::requests::ConflictListArgs>,
) -> Result<Json<levh_api::views::ConflictList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::conflicts::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn detect_conflicts(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    OptionalBody(args): OptionalBody<levh_api::requests::ConflictDetectArgs>,
) -> Result<Json<levh_api::views::DetectView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::conflicts::detect(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn resolve_conflict(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
    Body(body): Body<levh_api::requests::ResolveConflictBody>,
) -> Result<Json<levh_api::views::ConflictView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::conflicts::resolve(levh, scope, &id, body)
    })
    .await
    .map(Json)
}

pub(super) async fn decisions(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<KnowledgeArgs>,
) -> Result<Json<DecisionList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::knowledge::decisions(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn commitments(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<KnowledgeArgs>,
) -> Result<Json<CommitmentList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::knowledge::commitments(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn complete_commitment(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(id): Path<String>,
) -> Result<Json<CommitmentView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::knowledge::complete(levh, scope, &id)
    })
    .await
    .map(Json)
}

pub(super) async fn timeline(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<TimelineArgs>,
) -> Result<Json<TimelineView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::timeline::timeline(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn people(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<EntityListArgs>,
) -> Result<Json<PeopleList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::people(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn organizations(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<EntityListArgs>,
) -> Result<Json<OrganizationList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::organizations(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn entities(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<EntityListArgs>,
) -> Result<Json<EntityList>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::list(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn about_entity(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Path(entity): Path<String>,
    Params(page): Params<EntityPageArgs>,
) -> Result<Json<AboutView>, ApiError> {
    let args = AboutArgs {
        entity,
        kind: page.kind,
        limit: page.limit,
    };
    run(&state, scope, move |levh, scope| {
        levh_api::entities::about(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn entity_graph(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Params(args): Params<GraphArgs>,
) -> Result<Json<GraphView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::graph(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn merge_entities(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    Body(args): Body<MergeArgs>,
) -> Result<Json<EntityView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::merge(levh, scope, args)
    })
    .await
    .map(Json)
}

pub(super) async fn reindex_entities(
    State(state): State<AppState>,
    CallerScope(scope): CallerScope,
    OptionalBody(args): OptionalBody<ReindexArgs>,
) -> Result<Json<ReindexView>, ApiError> {
    run(&state, scope, move |levh, scope| {
        levh_api::entities::reindex(levh, scope, args, &mut |_, _| {})
    })
    .await
    .map(Json)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use levh_core::{Parts, Principal};

    use super::*;
    use crate::AuthConfig;

    fn state() -> AppState {
        let store = Arc::new(levh_store::SqliteStore::open_in_memory().unwrap());
        let levh = Levh::new(Parts {
            store: store.clone(),
            index: store.clone(),
            embedder: Arc::new(levh_embed::HashEmbedder::default()),
            clock: Arc::new(levh_core::SystemClock),
            config: Default::default(),
        });
        AppState::new(levh, store, AuthConfig::default())
    }

    /// On either runtime an operation's answer comes back, and a panic in it is a 500
    /// that names it — the server goes on (in place, the panic would otherwise unwind
    /// through the connection's task).
    #[test]
    fn an_operation_runs_in_place_or_on_the_pool_and_a_panic_is_an_internal_error() {
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let single = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for runtime in [&multi, &single] {
            let state = state();
            let scope = Principal::local().scope(levh_core::Surface::Http, None);
            let answer = runtime.block_on(run(&state, scope.clone(), |_, scope| {
                Ok(scope.workspace.to_string())
            }));
            assert_eq!(answer.unwrap(), "default");
            let panicked = runtime
                .block_on(run(&state, scope, |_, _| -> levh_api::Result<()> {
                    panic!("a bug in an operation")
                }))
                .unwrap_err();
            assert_eq!(
                panicked.status(),
                axum::http::StatusCode::INTERNAL_SERVER_ERROR
            );
            assert!(
                format!("{panicked:?}").contains("a bug in an operation"),
                "{panicked:?}"
            );
        }
    }
}
