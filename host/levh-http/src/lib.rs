//! levh-http: `levh serve`. One process, one port: the REST API under `/api`, the live
//! activity feed at `/api/ws`, the OpenAPI document at `/api/openapi.json`, and whatever
//! service the binary mounts at `/mcp` (MCP over streamable HTTP, from levh-mcp — this
//! crate depends on neither it nor the store).
//!
//! Every route is an adapter over one levh-api operation ([`routes`]): the operation
//! validates and runs; the route extracts, and maps the operation's error to a status.
//!
//! Security (SPEC §8): every request is authenticated by [`auth`] into a
//! [`Principal`](levh_core::Principal) — a workspace and a role — and every engine call is
//! scoped to that workspace. Each route takes its role from levh-api's operation table,
//! which MCP checks its tools against too.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod auth;
mod error;
mod feed;
mod guard;
mod openapi;
mod routes;

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use levh_core::sync::Connectors;
use levh_core::{Levh, ServerStore};
use tokio_util::sync::CancellationToken;

pub use auth::AuthConfig;
// Re-exported so the binary and the tests speak the same axum.
pub use axum;
pub use error::ApiError;
pub use feed::FeedEvent;

/// Everything a request handler needs. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub(crate) levh: Levh,
    /// Tokens, liveness and the event log (the store, behind a core trait).
    pub(crate) server: Arc<dyn ServerStore>,
    pub(crate) auth: Arc<auth::Auth>,
    pub(crate) connectors: Option<Arc<dyn Connectors>>,
    pub(crate) feed: feed::Feed,
    pub(crate) mcp: Option<Router>,
    /// The dashboard's pages and files (served without a token: they hold no data).
    pub(crate) pages: Option<Router>,
    /// How the server was started, for the Settings page.
    pub(crate) facts: Arc<levh_api::settings::ServerFacts>,
    pub(crate) shutdown: CancellationToken,
    /// This instance's identity and peers, when it serves bundles to peers
    /// (`GET /api/share/bundle`, with a token of `levh peer grant`).
    pub(crate) share: Option<levh_api::share::ShareHome>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("connectors", &self.connectors.is_some())
            .field("mcp", &self.mcp.is_some())
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State over an engine and what the server reads besides memories (tokens, the
    /// event log: the store, as a [`ServerStore`]).
    pub fn new(levh: Levh, server: Arc<dyn ServerStore>, auth: AuthConfig) -> Self {
        Self {
            feed: feed::Feed::new(server.clone()),
            levh,
            server,
            auth: Arc::new(auth::Auth::new(auth)),
            connectors: None,
            mcp: None,
            pages: None,
            facts: Arc::default(),
            shutdown: CancellationToken::new(),
            share: None,
        }
    }

    /// Serves bundles to the peers of the home `share` (`levh peer grant`): each peer's
    /// token fetches bundles of the projects it was granted, and nothing else.
    pub fn with_share(mut self, share: levh_api::share::ShareHome) -> Self {
        self.share = Some(share);
        self
    }

    /// Adds the connector runtime (the sync routes need it).
    pub fn with_connectors(mut self, connectors: Arc<dyn Connectors>) -> Self {
        self.connectors = Some(connectors);
        self
    }

    /// Mounts `service` at `/mcp`, behind the same authentication: the request reaching
    /// it carries the caller's [`Principal`](levh_core::Principal) in its extensions.
    pub fn with_mcp<S>(mut self, service: S) -> Self
    where
        S: tower_service::Service<Request, Error = Infallible> + Clone + Send + Sync + 'static,
        S::Response: IntoResponse + 'static,
        S::Future: Send + 'static,
    {
        self.mcp = Some(Router::new().nest_service("/mcp", service));
        self
    }

    /// Serves `pages` (the dashboard) beside the API, behind the same Host/Origin guard.
    /// Its paths need no token: the files hold no data, and every call they make is an
    /// `/api` request that does.
    pub fn with_pages(mut self, pages: Router) -> Self {
        self.pages = Some(pages);
        self
    }

    /// What the Settings page says about how the server was started (its binary, home,
    /// embedder mode, scorer, MCP profile).
    pub fn with_facts(mut self, facts: levh_api::settings::ServerFacts) -> Self {
        self.facts = Arc::new(facts);
        self
    }

    /// The hosts an `/mcp` service should accept (DNS-rebinding guard): `None` keeps the
    /// service's loopback-only default; an empty list allows every host (a public server
    /// behind a token).
    pub fn mcp_allowed_hosts(&self) -> Option<Vec<String>> {
        self.auth.mcp_allowed_hosts()
    }

    /// Cancelled when the server shuts down (ends feeds and MCP sessions).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// The whole application: `/api/*`, `/api/ws`, `/mcp` when mounted, behind
/// authentication and CORS, each request in a span, each failure logged once.
pub fn router(state: AppState) -> Router {
    let mut app = routes::api().into_router().with_state(state.clone());
    if let Some(mcp) = state.mcp.clone() {
        app = app.merge(mcp);
    }
    if let Some(pages) = state.pages.clone() {
        app = app.merge(pages);
    }
    app.fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(axum::middleware::from_fn(error::log_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::same_site,
        ))
        .layer(auth::cors(&state.auth))
        // Every answer, refusals included: a browser never guesses a type from content
        // (a memory's text served as JSON must not be sniffed into HTML).
        .layer(
            tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                axum::http::header::X_CONTENT_TYPE_OPTIONS,
                axum::http::HeaderValue::from_static("nosniff"),
            ),
        )
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(|request: &Request| {
                tracing::info_span!(
                    "request",
                    method = %request.method(),
                    path = %request.uri().path(),
                )
            }),
        )
}

/// An unknown path: a JSON error like every other, naming what was asked for.
async fn no_route(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        format!(
            "no route {method} {} (GET /api/openapi.json lists every route)",
            uri.path()
        ),
    )
}

/// A known path asked with a method it does not take.
async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not take {method} (GET /api/openapi.json lists its methods)",
            uri.path()
        ),
    )
}

/// The OpenAPI 3.1 document of the REST API.
pub fn openapi_document() -> serde_json::Value {
    openapi::document(&routes::api())
}

/// The operation and role of every REST route, as `(method, path, operation)`: for the
/// test that checks the router against levh-api's operation table.
pub fn route_operations() -> Vec<(String, String, levh_api::Operation)> {
    routes::api()
        .routes
        .iter()
        .map(|route| {
            (
                route.method.to_string(),
                route.path.to_owned(),
                route.operation,
            )
        })
        .collect()
}

/// Most connections served at once. Past it, new connections wait in the kernel's
/// backlog until one closes, instead of taking a descriptor each: 1,100 clients that never
/// finished their headers once used up a 1,024-descriptor limit and locked everyone out,
/// before any token was checked.
pub const MAX_CONNECTIONS: usize = 512;

/// How long a client may take to send a request's headers, and how long a kept-alive
/// connection may sit idle before its next request: then it is closed. Long answers (the
/// live feed, MCP's event streams) are not cut: the limit is on reading a request.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves `router(state)` on `listener` until `shutdown` resolves, then lets requests in
/// flight finish (graceful shutdown) and ends feeds and MCP sessions.
///
/// At most [`MAX_CONNECTIONS`] at once, each closed when its headers take longer than
/// [`HEADER_READ_TIMEOUT`] or it idles that long between requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with_limits(
        listener,
        state,
        shutdown,
        MAX_CONNECTIONS,
        HEADER_READ_TIMEOUT,
    )
    .await
}

/// [`serve`] with chosen limits (tests use small ones).
pub async fn serve_with_limits(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    max_connections: usize,
    header_read_timeout: std::time::Duration,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};

    let feeds = state.shutdown.clone();
    let app = router(state);
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections));
    let closing = CancellationToken::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors (EMFILE) or a connection reset before it was
                    // taken: wait a moment rather than spin, and go on serving.
                    tracing::warn!(%error, "accepting a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let service = hyper::service::service_fn(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(remote));
                let mut app = app.clone();
                // A router is always ready: no poll_ready needed before call.
                tower_service::Service::call(&mut app, request)
            },
        );
        let connection = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        let closing = closing.clone();
        tokio::spawn(async move {
            let _slot = slot;
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, %remote, "connection ended");
                    }
                }
                () = closing.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                }
            }
        });
    }
    // Feeds and MCP sessions end, connections finish what they were answering, and the
    // server returns once every slot is free again.
    feeds.cancel();
    closing.cancel();
    drop(listener);
    let _ = slots
        .acquire_many(u32::try_from(max_connections).unwrap_or(u32::MAX))
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The OpenAPI document, as clients and generators read it. A change here changes
    /// the REST contract.
    #[test]
    fn openapi_document_is_the_rest_contract() {
        // Keys sorted: serde_json keeps insertion order only when some crate of the build
        // enables `preserve_order`, which differs between -p and --workspace.
        insta::with_settings!({ sort_maps => true }, {
            insta::assert_json_snapshot!("openapi", super::openapi_document());
        });
    }
}
