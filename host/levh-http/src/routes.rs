//! Every REST route, declared once: method, path, the role it needs, its request and
//! response types. [`Api`] turns the table into the axum router (with the role check on
//! each route) and into the OpenAPI document, so neither can miss a route.

use std::collections::BTreeMap;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Extension, Path, Query, State};
use axum::handler::Handler;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};
use axum::{Json, Router};
use levh_core::{
    HeldId, HeldStatus, Levh, MemoryFilter, MemoryId, NewMemory, Page, Principal, Role, Scope,
};
use levh_mcp::tools::{
    EvaluateArgs, FadingArgs, HeldListArgs, ListArgs, ProjectArgs, RecallArgs, StoreArgs,
    SyncStatusArgs, kind, memory_id, secrets_view,
};
use levh_mcp::views::{
    CaptureView, EvaluationView, FadingList, HeldList, HeldView, MemoryList, MemoryView,
    NamedCount, ProjectList, PurgeView, RecallView, SecretsView, SessionView, SourceList,
    StatsView, UpdateView,
};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::error::ErrorBody;
use crate::{ApiError, AppState, auth, feed};

pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One route of the API, as documented.
pub(crate) struct Operation {
    pub method: Method,
    pub path: &'static str,
    pub summary: &'static str,
    pub role: Role,
    pub body: Option<SchemaFn>,
    pub query: Option<SchemaFn>,
    /// Success statuses and their body (None: no body).
    pub responses: Vec<(u16, Option<SchemaFn>)>,
    /// Documented error statuses (all with an [`ErrorBody`]).
    pub errors: Vec<u16>,
}

impl Operation {
    fn new(method: Method, path: &'static str, role: Role, summary: &'static str) -> Self {
        Self {
            method,
            path,
            summary,
            role,
            body: None,
            query: None,
            responses: Vec::new(),
            // Every route can meet a bad or missing token, a blocked client and a server error.
            errors: vec![401, 429, 500],
        }
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
    pub operations: Vec<Operation>,
}

impl Api {
    fn new() -> Self {
        Self {
            router: Router::new(),
            operations: Vec::new(),
        }
    }

    fn route<H, T>(mut self, mut operation: Operation, handler: H) -> Self
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
        if role > Role::Viewer {
            operation.errors.push(403);
        }
        operation.errors.sort_unstable();
        operation.errors.dedup();
        let method_router =
            on(filter, handler).route_layer(axum::middleware::from_fn(move |request, next| {
                auth::require(role, request, next)
            }));
        self.router = self.router.route(operation.path, method_router);
        self.operations.push(operation);
        self
    }

    pub(crate) fn into_router(self) -> Router<AppState> {
        self.router
    }
}

use Method as M;

/// The REST API.
pub(crate) fn api() -> Api {
    let (viewer, editor, admin) = (Role::Viewer, Role::Editor, Role::Admin);
    Api::new()
        .route(
            Operation::new(M::GET, "/api/health", viewer, "Liveness and store health").ok::<Health>(200),
            health,
        )
        .route(
            Operation::new(M::GET, "/api/openapi.json", viewer, "This OpenAPI document").ok::<serde_json::Value>(200),
            openapi_json,
        )
        .route(
            Operation::new(M::GET, "/api/ws", viewer, "Live feed of every mutation in the workspace (WebSocket upgrade; one JSON event per message)")
                .empty(101),
            feed::socket,
        )
        .route(
            Operation::new(M::POST, "/api/memories", editor, "Store a memory through the admission gate (201 stored, 202 held for review, 200 rejected)")
                .body::<StoreArgs>()
                .ok::<CaptureView>(201)
                .ok::<CaptureView>(202)
                .ok::<CaptureView>(200),
            create_memory,
        )
        .route(
            Operation::new(M::GET, "/api/memories", viewer, "List memories, newest first")
                .query::<ListArgs>()
                .ok::<MemoryList>(200),
            list_memories,
        )
        .route(
            Operation::new(M::GET, "/api/memories/fading", viewer, "Memories whose retention fell below the fading threshold")
                .query::<FadingArgs>()
                .ok::<FadingList>(200),
            fading,
        )
        .route(
            Operation::new(M::GET, "/api/memories/{id}", viewer, "One memory")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            get_memory,
        )
        .route(
            Operation::new(M::PATCH, "/api/memories/{id}", editor, "Update content (through the gate's secret check) and/or importance")
                .body::<UpdateBody>()
                .ok::<UpdateView>(200)
                .errors(&[404]),
            update_memory,
        )
        .route(
            Operation::new(M::DELETE, "/api/memories/{id}", editor, "Forget a memory (it stops being recalled; purge removes it)")
                .empty(204)
                .errors(&[400, 404]),
            forget_memory,
        )
        .route(
            Operation::new(M::GET, "/api/memories/{id}/forgetting-curve", viewer, "Predicted retention for the coming days")
                .query::<CurveQuery>()
                .ok::<CurveView>(200)
                .errors(&[404]),
            forgetting_curve,
        )
        .route(
            Operation::new(M::GET, "/api/memories/{id}/score-breakdown", viewer, "The memory's H-score and its four terms (against a query, if given)")
                .query::<ScoreQuery>()
                .ok::<ScoreView>(200)
                .errors(&[404]),
            score_breakdown,
        )
        .route(
            Operation::new(M::POST, "/api/memories/{id}/reinforce", editor, "Reinforce as if recalled")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            reinforce,
        )
        .route(
            Operation::new(M::POST, "/api/memories/{id}/pin", editor, "Pin: never fades")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            pin,
        )
        .route(
            Operation::new(M::POST, "/api/memories/{id}/unpin", editor, "Unpin: decays again")
                .ok::<MemoryView>(200)
                .errors(&[400, 404]),
            unpin,
        )
        .route(
            Operation::new(M::POST, "/api/memories/{id}/feedback", editor, "Helpful (reinforces) or wrong (weakens)")
                .body::<FeedbackBody>()
                .ok::<MemoryView>(200)
                .errors(&[404]),
            feedback,
        )
        .route(
            Operation::new(M::POST, "/api/memories/{id}/purge", admin, "Remove a memory and every trace of its content")
                .ok::<PurgeView>(200)
                .errors(&[400, 404]),
            purge,
        )
        .route(
            Operation::new(M::GET, "/api/memories/held", viewer, "Held candidates awaiting a person's decision")
                .query::<HeldListArgs>()
                .ok::<HeldList>(200),
            held_list,
        )
        .route(
            Operation::new(M::GET, "/api/memories/held/{id}", viewer, "One held candidate")
                .ok::<HeldView>(200)
                .errors(&[400, 404]),
            held_get,
        )
        .route(
            Operation::new(M::POST, "/api/memories/held/{id}/admit", admin, "Admit a held candidate (optionally superseding its nearest neighbour)")
                .body::<AdmitBody>()
                .ok::<AdmitView>(200)
                .errors(&[404, 409]),
            held_admit,
        )
        .route(
            Operation::new(M::POST, "/api/memories/held/{id}/discard", admin, "Discard a held candidate")
                .ok::<HeldView>(200)
                .errors(&[400, 404, 409]),
            held_discard,
        )
        .route(
            Operation::new(M::POST, "/api/memories/evaluate-admission", viewer, "What the gate would decide, storing nothing")
                .body::<EvaluateArgs>()
                .ok::<EvaluationView>(200),
            evaluate_admission,
        )
        .route(
            Operation::new(M::GET, "/api/memories/audit-secrets", viewer, "Memories that contain secrets (kinds only, never the secrets)")
                .ok::<SecretsView>(200),
            audit_secrets,
        )
        .route(
            Operation::new(M::POST, "/api/memories/redact-all", editor, "Redact every secret found in stored memories")
                .ok::<SecretsView>(200),
            redact_all,
        )
        .route(
            Operation::new(M::POST, "/api/recall", editor, "Recall: ranked by H-score; what is returned is reinforced")
                .body::<RecallArgs>()
                .ok::<RecallView>(200),
            recall,
        )
        .route(
            Operation::new(M::POST, "/api/search", viewer, "Search like recall, reinforcing nothing")
                .body::<RecallArgs>()
                .ok::<RecallView>(200),
            search,
        )
        .route(
            Operation::new(M::GET, "/api/stats", viewer, "Counts and averages of the workspace")
                .query::<ProjectArgs>()
                .ok::<StatsView>(200),
            stats,
        )
        .route(
            Operation::new(M::GET, "/api/projects", viewer, "Projects with their memory counts").ok::<ProjectList>(200),
            projects,
        )
        .route(
            Operation::new(M::GET, "/api/sources", viewer, "Sources with their memory counts").ok::<SourceList>(200),
            sources,
        )
        .route(
            Operation::new(M::GET, "/api/export", viewer, "Every live memory of the workspace").ok::<MemoryList>(200),
            export,
        )
        .route(
            Operation::new(M::POST, "/api/sessions", editor, "Open a session")
                .body::<SessionBody>()
                .ok::<SessionView>(201),
            create_session,
        )
        .route(
            Operation::new(M::POST, "/api/sessions/{id}/end", editor, "End a session")
                .ok::<SessionView>(200)
                .errors(&[400]),
            end_session,
        )
        .route(
            Operation::new(M::GET, "/api/connectors", viewer, "Connectors with their manifests and stored grants")
                .ok::<serde_json::Value>(200)
                .errors(&[503]),
            connectors,
        )
        .route(
            Operation::new(M::GET, "/api/connectors/sync-state", viewer, "Recent sync runs")
                .query::<SyncStatusArgs>()
                .ok::<Vec<serde_json::Value>>(200),
            sync_state,
        )
        .route(
            Operation::new(M::GET, "/api/connectors/{id}", viewer, "One connector's settings, capabilities and grants")
                .ok::<serde_json::Value>(200)
                .errors(&[404, 503]),
            connector_help,
        )
        .route(
            Operation::new(M::POST, "/api/connectors/{id}/sync", editor, "Sync a connector with its stored grants, through the gate")
                .body::<SyncBody>()
                .ok::<serde_json::Value>(200)
                .errors(&[403, 422, 503]),
            sync_connector,
        )
}

// ---- request and response types that only REST has ----

/// `/api/health`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// levh's version.
    pub version: String,
    /// Schema version of the store.
    pub schema_version: i64,
    /// `wal` when write-ahead logging is on.
    pub journal_mode: String,
    /// The embedder's model id.
    pub embedder: String,
    /// The caller's workspace.
    pub workspace: String,
    /// The caller's role.
    pub role: String,
}

/// PATCH body: at least one field.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    /// New content (3..32000 characters; secrets are redacted).
    pub content: Option<String>,
    /// New importance 0..1.
    pub importance: Option<f64>,
}

/// Feedback body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackBody {
    /// true: it helped (reinforces). false: it was wrong (weakens).
    pub helpful: bool,
}

/// Admit body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmitBody {
    /// Mark the new memory as replacing the neighbour that caused the hold.
    #[serde(default)]
    pub supersede: bool,
}

/// What an admission did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AdmitView {
    /// The candidate.
    pub held_id: String,
    /// The memory it became.
    pub memory_id: String,
    /// The memory it replaced.
    pub superseded: Option<String>,
}

/// Forgetting-curve query.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CurveQuery {
    /// Days ahead (1..3650, default 30).
    pub days: Option<u32>,
}

/// A forgetting curve.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CurveView {
    /// The memory.
    pub memory_id: String,
    /// One point per day.
    pub points: Vec<CurvePointView>,
}

/// One day of a forgetting curve.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CurvePointView {
    /// Days from now.
    pub day: u32,
    /// The instant (RFC 3339).
    pub at: String,
    /// Predicted retention with no recall in between.
    pub retention: f64,
}

/// Score-breakdown query.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ScoreQuery {
    /// Score against this query (similarity 1 without one).
    pub query: Option<String>,
}

/// An H-score and its terms (lower ranks first).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScoreView {
    /// The memory.
    pub memory_id: String,
    /// α·(1−relevance) + β·(1−retention) + γ·(1−importance) + δ·(1−frequency).
    pub score: f64,
    /// Relevance to the query, 0..1: BM25 and cosine fused as recall fuses them (1 without
    /// a query).
    pub relevance: f64,
    /// The semantic part: cosine to the query, 0..1 (1 without a query).
    pub similarity: f64,
    /// The lexical part: BM25 normalised by the query's best match, 0..1.
    pub lexical: f64,
    /// The raw BM25 score, when the query's words matched.
    pub bm25: Option<f64>,
    /// What a period named by the query ("in March") added.
    pub temporal: f64,
    /// Retention now.
    pub retention: f64,
    /// Importance.
    pub importance: f64,
    /// Frequency of recall.
    pub frequency: f64,
    /// The four weighted terms.
    pub terms: BTreeMap<String, f64>,
}

/// Session body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// The session's project.
    pub project: Option<String>,
}

/// Sync body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBody {
    /// The connector's settings. Paths and hosts must already be granted by a person.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    #[serde(default)]
    pub dry_run: bool,
}

// ---- plumbing ----

/// A JSON body whose errors become [`ApiError`]s naming the field.
pub(crate) struct Body<T>(T);

impl<T, S> axum::extract::FromRequest<S> for Body<T>
where
    Json<T>: axum::extract::FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let Json(value) = Json::<T>::from_request(request, state).await?;
        Ok(Self(value))
    }
}

/// A JSON body that may be left out (an empty body is the type's default).
pub(crate) struct OptionalBody<T>(T);

impl<T, S> axum::extract::FromRequest<S> for OptionalBody<T>
where
    T: serde::de::DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        serde_json::from_slice(&bytes)
            .map(Self)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
    }
}

/// A query string whose errors become [`ApiError`]s naming the field.
pub(crate) struct Params<T>(T);

impl<T, S> axum::extract::FromRequestParts<S> for Params<T>
where
    Query<T>: axum::extract::FromRequestParts<S, Rejection = QueryRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let Query(value) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(Self(value))
    }
}

/// The caller, as the auth layer established.
type Caller = Extension<Principal>;

fn scope(principal: &Principal, headers: &HeaderMap) -> Scope {
    principal.scope("http", client(headers))
}

/// The client name a caller gives in `X-LEVH-Client` (recorded as the source).
fn client(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-levh-client")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 64)
        .map(str::to_owned)
}

/// Runs an engine call off the async threads (SQLite blocks).
async fn engine<T, F>(state: &AppState, scope: Scope, call: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Levh, &Scope) -> Result<T, ApiError> + Send + 'static,
{
    let levh = state.levh.clone();
    tokio::task::spawn_blocking(move || call(&levh, &scope))
        .await
        .map_err(ApiError::internal)?
}

fn parse_id(text: &str) -> Result<MemoryId, ApiError> {
    memory_id("id", text).map_err(ApiError::bad_request)
}

fn parse_held_id(text: &str) -> Result<HeldId, ApiError> {
    text.parse::<HeldId>().map_err(|_| {
        ApiError::bad_request(format!(
            "invalid id: '{text}' is not a held candidate id (expected a UUID)"
        ))
    })
}

fn invalid(message: String) -> ApiError {
    ApiError::bad_request(message)
}

// ---- handlers ----

async fn health(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<Health>, ApiError> {
    let embedder = state.levh.embedder().model_id().to_owned();
    let store = state.store.clone();
    let (schema_version, journal_mode) = tokio::task::spawn_blocking(move || store.liveness())
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    Ok(Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        schema_version,
        journal_mode,
        embedder,
        workspace: principal.workspace.to_string(),
        role: principal.role.to_string(),
    }))
}

async fn openapi_json() -> Json<serde_json::Value> {
    Json(crate::openapi_document())
}

async fn create_memory(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Body(args): Body<StoreArgs>,
) -> Result<Response, ApiError> {
    let source = client(&headers).unwrap_or_else(|| "http".to_owned());
    let new = args.into_new_memory(source.clone()).map_err(invalid)?;
    let view = engine(&state, scope(&principal, &headers), move |levh, scope| {
        let outcome = levh.capture(scope, new)?;
        Ok(CaptureView::new(&outcome, source))
    })
    .await?;
    let status = if view.memory_id.is_some() {
        StatusCode::CREATED
    } else if view.held_id.is_some() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view)).into_response())
}

async fn list_memories(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Params(args): Params<ListArgs>,
) -> Result<Json<MemoryList>, ApiError> {
    let limit = args.limit.unwrap_or(20);
    if limit == 0 || limit > 1000 {
        return Err(invalid(format!(
            "invalid limit: {limit} is outside 1..1000"
        )));
    }
    let kind = kind(args.kind.as_deref()).map_err(invalid)?;
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let now = levh.now();
        let memories = levh.list(
            scope,
            MemoryFilter {
                project: args.project,
                kind,
                source: args.source,
                pinned: args.pinned,
                valid_at: Some(now),
                ..MemoryFilter::default()
            },
            Page {
                limit,
                offset: args.offset.unwrap_or(0),
            },
        )?;
        Ok(Json(MemoryList {
            memories: memories.iter().map(|m| MemoryView::new(m, now)).collect(),
        }))
    })
    .await
}

async fn fading(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Params(args): Params<FadingArgs>,
) -> Result<Json<FadingList>, ApiError> {
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let now = levh.now();
        let fading = levh.fading(scope, args.project, args.limit.unwrap_or(20))?;
        Ok(Json(FadingList {
            memories: fading
                .iter()
                .map(|f| MemoryView::new(&f.memory, now))
                .collect(),
        }))
    })
    .await
}

async fn get_memory(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    let id = parse_id(&id)?;
    engine(&state, principal.scope("http", None), move |levh, scope| {
        Ok(Json(MemoryView::new(&levh.get(scope, id)?, levh.now())))
    })
    .await
}

async fn update_memory(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    Body(body): Body<UpdateBody>,
) -> Result<Json<UpdateView>, ApiError> {
    let id = parse_id(&id)?;
    if body.content.is_none() && body.importance.is_none() {
        return Err(invalid(
            "empty update: give content and/or importance (nothing was changed)".into(),
        ));
    }
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        // Validate both before changing either, so a bad importance changes nothing.
        if let Some(importance) = body.importance
            && !(0.0..=1.0).contains(&importance)
        {
            return Err(invalid(format!(
                "invalid importance: {importance} is outside 0..1 (nothing was changed)"
            )));
        }
        let update = match body.content {
            Some(content) => Some(levh.update_content(scope, id, &content)?),
            None => None,
        };
        let memory = match body.importance {
            Some(importance) => levh.set_importance(scope, id, importance)?,
            None => levh.get(scope, id)?,
        };
        let now = levh.now();
        Ok(Json(match update {
            Some(update) => {
                let mut view = UpdateView::new(&update, now);
                view.memory = MemoryView::new(&memory, now);
                view
            }
            None => UpdateView {
                memory: MemoryView::new(&memory, now),
                redactions: Vec::new(),
            },
        }))
    })
    .await
}

async fn forget_memory(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = parse_id(&id)?;
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        levh.forget(scope, id)?;
        Ok(StatusCode::NO_CONTENT)
    })
    .await
}

async fn forgetting_curve(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
    Params(query): Params<CurveQuery>,
) -> Result<Json<CurveView>, ApiError> {
    let id = parse_id(&id)?;
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let points = levh.curve(scope, id, query.days.unwrap_or(30))?;
        Ok(Json(CurveView {
            memory_id: id.to_string(),
            points: points
                .into_iter()
                .map(|p| CurvePointView {
                    day: p.day,
                    at: p.at.to_string(),
                    retention: p.retention,
                })
                .collect(),
        }))
    })
    .await
}

async fn score_breakdown(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
    Params(query): Params<ScoreQuery>,
) -> Result<Json<ScoreView>, ApiError> {
    let id = parse_id(&id)?;
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let (score, relevance) = levh.score_breakdown(scope, id, query.query.as_deref())?;
        Ok(Json(ScoreView {
            memory_id: id.to_string(),
            score: score.score,
            relevance: score.relevance,
            similarity: relevance.map_or(1.0, |r| r.semantic),
            lexical: relevance.map_or(0.0, |r| r.lexical),
            bm25: relevance.and_then(|r| r.bm25),
            temporal: relevance.map_or(0.0, |r| r.temporal),
            retention: score.retention,
            importance: score.importance,
            frequency: score.frequency,
            terms: BTreeMap::from([
                ("relevance".into(), score.terms.relevance),
                ("retention".into(), score.terms.retention),
                ("importance".into(), score.terms.importance),
                ("frequency".into(), score.terms.frequency),
            ]),
        }))
    })
    .await
}

async fn change<F>(
    state: &AppState,
    principal: &Principal,
    headers: &HeaderMap,
    id: &str,
    call: F,
) -> Result<Json<MemoryView>, ApiError>
where
    F: FnOnce(&Levh, &Scope, MemoryId) -> levh_core::Result<levh_core::Memory> + Send + 'static,
{
    let id = parse_id(id)?;
    engine(state, scope(principal, headers), move |levh, scope| {
        let memory = call(levh, scope, id)?;
        Ok(Json(MemoryView::new(&memory, levh.now())))
    })
    .await
}

async fn reinforce(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    change(&state, &principal, &headers, &id, |levh, scope, id| {
        levh.reinforce(scope, id)
    })
    .await
}

async fn pin(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    change(&state, &principal, &headers, &id, |levh, scope, id| {
        levh.set_pinned(scope, id, true)
    })
    .await
}

async fn unpin(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<MemoryView>, ApiError> {
    change(&state, &principal, &headers, &id, |levh, scope, id| {
        levh.set_pinned(scope, id, false)
    })
    .await
}

async fn feedback(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    Body(body): Body<FeedbackBody>,
) -> Result<Json<MemoryView>, ApiError> {
    change(&state, &principal, &headers, &id, move |levh, scope, id| {
        levh.feedback(scope, id, body.helpful)
    })
    .await
}

async fn purge(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<PurgeView>, ApiError> {
    let id = parse_id(&id)?;
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        let report = levh.purge(scope, id)?;
        Ok(Json(PurgeView {
            memory_id: report.memory_id.to_string(),
            held_removed: report.held_removed,
            residue: report.residue,
        }))
    })
    .await
}

async fn held_list(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Params(args): Params<HeldListArgs>,
) -> Result<Json<HeldList>, ApiError> {
    let status = match args.status.as_deref() {
        None => HeldStatus::Held,
        Some(text) => HeldStatus::parse(text.trim()).ok_or_else(|| {
            invalid(format!(
                "invalid status: '{text}' is not held, admitted, discarded or expired"
            ))
        })?,
    };
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let held = levh.held_list(scope, Some(status))?;
        Ok(Json(HeldList {
            held: held.iter().map(HeldView::from).collect(),
            how_to_decide: "POST /api/memories/held/{id}/admit or /discard (admin token), `levh held`, or the dashboard".into(),
        }))
    })
    .await
}

async fn held_get(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Path(id): Path<String>,
) -> Result<Json<HeldView>, ApiError> {
    let id = parse_held_id(&id)?;
    engine(&state, principal.scope("http", None), move |levh, scope| {
        Ok(Json(HeldView::from(&levh.held_get(scope, id)?)))
    })
    .await
}

async fn held_admit(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    OptionalBody(body): OptionalBody<AdmitBody>,
) -> Result<Json<AdmitView>, ApiError> {
    let id = parse_held_id(&id)?;
    let supersede = body.supersede;
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        let admission = levh.held_admit(scope, id, supersede)?;
        Ok(Json(AdmitView {
            held_id: admission.held_id.to_string(),
            memory_id: admission.memory_id.to_string(),
            superseded: admission.superseded.map(|id| id.to_string()),
        }))
    })
    .await
}

async fn held_discard(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<HeldView>, ApiError> {
    let id = parse_held_id(&id)?;
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        Ok(Json(HeldView::from(&levh.held_discard(scope, id)?)))
    })
    .await
}

async fn evaluate_admission(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Body(args): Body<EvaluateArgs>,
) -> Result<Json<EvaluationView>, ApiError> {
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let evaluation = levh.evaluate(
            scope,
            NewMemory {
                content: args.content,
                project: args.project,
                ..NewMemory::default()
            },
        )?;
        Ok(Json(EvaluationView::from(&evaluation)))
    })
    .await
}

async fn audit_secrets(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<SecretsView>, ApiError> {
    engine(&state, principal.scope("http", None), |levh, scope| {
        Ok(Json(secrets_view(levh.audit_secrets(scope)?, false)))
    })
    .await
}

async fn redact_all(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
) -> Result<Json<SecretsView>, ApiError> {
    engine(&state, scope(&principal, &headers), |levh, scope| {
        Ok(Json(secrets_view(levh.redact_secrets(scope)?, true)))
    })
    .await
}

async fn recall_or_search(
    state: AppState,
    scope: Scope,
    args: RecallArgs,
    reinforce: bool,
) -> Result<Json<RecallView>, ApiError> {
    let request = args.into_request(reinforce).map_err(invalid)?;
    engine(&state, scope, move |levh, scope| {
        let output = levh.recall(scope, &request)?;
        Ok(Json(RecallView::new(&output, levh.now())))
    })
    .await
}

async fn recall(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Body(args): Body<RecallArgs>,
) -> Result<Json<RecallView>, ApiError> {
    recall_or_search(state, scope(&principal, &headers), args, true).await
}

async fn search(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Body(args): Body<RecallArgs>,
) -> Result<Json<RecallView>, ApiError> {
    recall_or_search(state, scope(&principal, &headers), args, false).await
}

async fn stats(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Params(args): Params<ProjectArgs>,
) -> Result<Json<StatsView>, ApiError> {
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let s = levh.stats(scope, args.project)?;
        Ok(Json(StatsView::from(s)))
    })
    .await
}

async fn projects(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<ProjectList>, ApiError> {
    engine(&state, principal.scope("http", None), |levh, scope| {
        let stats = levh.stats(scope, None)?;
        Ok(Json(ProjectList {
            projects: stats
                .by_project
                .into_iter()
                .filter(|(name, _)| name != "(none)")
                .map(|(name, memories)| NamedCount { name, memories })
                .collect(),
        }))
    })
    .await
}

async fn sources(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<SourceList>, ApiError> {
    engine(&state, principal.scope("http", None), |levh, scope| {
        let stats = levh.stats(scope, None)?;
        Ok(Json(SourceList {
            sources: stats
                .by_source
                .into_iter()
                .map(|(name, memories)| NamedCount { name, memories })
                .collect(),
        }))
    })
    .await
}

async fn export(
    State(state): State<AppState>,
    Extension(principal): Caller,
) -> Result<Json<MemoryList>, ApiError> {
    engine(&state, principal.scope("http", None), |levh, scope| {
        let now = levh.now();
        let mut memories = Vec::new();
        let limit = 1000;
        loop {
            let page = levh.list(
                scope,
                MemoryFilter::default(),
                Page {
                    limit,
                    offset: memories.len(),
                },
            )?;
            let done = page.len() < limit;
            memories.extend(page.iter().map(|m| MemoryView::new(m, now)));
            if done {
                break;
            }
        }
        Ok(Json(MemoryList { memories }))
    })
    .await
}

async fn create_session(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    OptionalBody(body): OptionalBody<SessionBody>,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    let project = body.project;
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        let session = levh.create_session(scope, project)?;
        Ok((StatusCode::CREATED, Json(SessionView::from(&session))))
    })
    .await
}

async fn end_session(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, ApiError> {
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        let session = levh.end_session(scope, &levh_core::SessionId::new(id))?;
        Ok(Json(SessionView::from(&session)))
    })
    .await
}

fn runtime(state: &AppState) -> Result<std::sync::Arc<dyn levh_mcp::Connectors>, ApiError> {
    state.connectors.clone().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server runs without the connector runtime",
        )
    })
}

async fn connectors(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let connectors = runtime(&state)?;
    tokio::task::spawn_blocking(move || connectors.list())
        .await
        .map_err(ApiError::internal)?
        .map(Json)
        .map_err(ApiError::internal)
}

async fn connector_help(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let connectors = runtime(&state)?;
    tokio::task::spawn_blocking(move || connectors.help(&id))
        .await
        .map_err(ApiError::internal)?
        .map(Json)
        .map_err(|message| ApiError::new(StatusCode::NOT_FOUND, message))
}

async fn sync_connector(
    State(state): State<AppState>,
    Extension(principal): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    OptionalBody(body): OptionalBody<SyncBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let connectors = runtime(&state)?;
    let request = levh_mcp::SyncRequest {
        id,
        config: body.config.into_iter().collect(),
        project: body.project,
        dry_run: body.dry_run,
    };
    engine(&state, scope(&principal, &headers), move |levh, scope| {
        let report = connectors
            .sync(levh, scope, request)
            .map_err(|message| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message))?;
        // A refused capability is the person's to grant: 403, with the line that names
        // the grant command. (The run is recorded either way.)
        if report.failure == Some(levh_core::sync::FetchFailure::Denied) {
            let why = report.errors.last().cloned().unwrap_or_default();
            return Err(ApiError::new(StatusCode::FORBIDDEN, why));
        }
        serde_json::to_value(report)
            .map(Json)
            .map_err(ApiError::internal)
    })
    .await
}

async fn sync_state(
    State(state): State<AppState>,
    Extension(principal): Caller,
    Params(args): Params<SyncStatusArgs>,
) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    engine(&state, principal.scope("http", None), move |levh, scope| {
        let runs = levh.sync_runs(scope, args.id.as_deref(), args.limit.unwrap_or(10))?;
        runs.iter()
            .map(|run| serde_json::to_value(run).map_err(ApiError::internal))
            .collect::<Result<Vec<_>, _>>()
            .map(Json)
    })
    .await
}
