//! levh-http: `levh serve`. One process, one port: the REST API under `/api`, the live
//! activity feed at `/api/ws`, MCP over streamable HTTP at `/mcp`, and the OpenAPI
//! document at `/api/openapi.json`.
//!
//! Security (SPEC §8): every request is authenticated by [`auth`] into a
//! [`Principal`](levh_core::Principal) — a workspace and a role — and every engine call is
//! scoped to that workspace. Routes declare the role they need in one table
//! ([`routes::api`]), which also generates the OpenAPI document, so the two cannot drift.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod auth;
mod error;
mod feed;
mod openapi;
mod routes;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use levh_core::Levh;
use levh_mcp::{Connectors, LevhMcp, Profile};
use levh_store::SqliteStore;
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
    pub(crate) store: Arc<SqliteStore>,
    pub(crate) auth: Arc<auth::Auth>,
    pub(crate) connectors: Option<Arc<dyn Connectors>>,
    pub(crate) feed: feed::Feed,
    pub(crate) mcp_profile: Profile,
    pub(crate) shutdown: CancellationToken,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("mcp_profile", &self.mcp_profile)
            .field("connectors", &self.connectors.is_some())
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State over an engine and the store it runs on (tokens and the event log are read
    /// from the store directly).
    pub fn new(levh: Levh, store: Arc<SqliteStore>, auth: AuthConfig) -> Self {
        Self {
            feed: feed::Feed::new(store.clone()),
            levh,
            store,
            auth: Arc::new(auth::Auth::new(auth)),
            connectors: None,
            mcp_profile: Profile::default(),
            shutdown: CancellationToken::new(),
        }
    }

    /// Adds the connector runtime (sync routes and the MCP connector tools need it).
    pub fn with_connectors(mut self, connectors: Arc<dyn Connectors>) -> Self {
        self.connectors = Some(connectors);
        self
    }

    /// The MCP tool profile `/mcp` serves (default `work`).
    pub fn with_mcp_profile(mut self, profile: Profile) -> Self {
        self.mcp_profile = profile;
        self
    }

    /// Cancelled when the server shuts down (ends feeds and MCP sessions).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// The whole application: `/api/*`, `/api/ws`, `/mcp`, behind authentication and CORS.
pub fn router(state: AppState) -> Router {
    let mcp = {
        let levh = state.levh.clone();
        let connectors = state.connectors.clone();
        let profile = state.mcp_profile;
        levh_mcp::streamable_http_service(
            move || {
                let server = LevhMcp::for_http(levh.clone(), profile);
                match &connectors {
                    Some(connectors) => server.with_connectors(connectors.clone()),
                    None => server,
                }
            },
            state.auth.mcp_allowed_hosts(),
            state.shutdown.child_token(),
        )
    };
    routes::api()
        .into_router()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(auth::cors(&state.auth))
        .with_state(state)
}

/// The OpenAPI 3.1 document of the REST API.
pub fn openapi_document() -> serde_json::Value {
    openapi::document(&routes::api())
}

/// Serves `router(state)` on `listener` until `shutdown` resolves, then lets requests in
/// flight finish (graceful shutdown) and ends feeds and MCP sessions.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let token = state.shutdown.clone();
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            token.cancel();
        })
        .await
}
