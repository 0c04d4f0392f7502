//! MCP over HTTP keeps a session per client that said `initialize`: each costs memory
//! (~77 KB) for as long as it lives. Sessions end after [`SessionLimits::idle`] without a
//! request (rmcp's session keep-alive), and at most [`SessionLimits::max_sessions`] live at
//! once: past that, a new `initialize` is refused with 503 and a JSON-RPC error saying
//! why, while clients that have a session go on.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::LevhMcp;

/// How many MCP sessions over HTTP may live at once, and how long one lives unused.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Most sessions at once (default 1,000: ~77 MB).
    pub max_sessions: usize,
    /// A session without a request for this long ends (default 5 minutes); its client
    /// starts a new one with `initialize`.
    pub idle: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 1_000,
            idle: Duration::from_secs(300),
        }
    }
}

/// The MCP service with its sessions counted and capped.
#[derive(Clone)]
pub struct CappedSessions {
    inner: StreamableHttpService<LevhMcp, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    max_sessions: usize,
}

impl CappedSessions {
    pub(crate) fn new(
        inner: StreamableHttpService<LevhMcp, LocalSessionManager>,
        manager: Arc<LocalSessionManager>,
        max_sessions: usize,
    ) -> Self {
        Self {
            inner,
            manager,
            max_sessions,
        }
    }

    /// Sessions alive now.
    pub fn live(&self) -> usize {
        // A writer holds the lock only to insert or remove one entry: if it is busy right
        // now, count the new session as allowed rather than wait.
        self.manager
            .sessions
            .try_read()
            .map_or(0, |sessions| sessions.len())
    }
}

impl std::fmt::Debug for CappedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CappedSessions")
            .field("live", &self.live())
            .field("max_sessions", &self.max_sessions)
            .finish_non_exhaustive()
    }
}

type Response = http::Response<BoxBody<Bytes, Infallible>>;

impl<B> tower_service::Service<http::Request<B>> for CappedSessions
where
    StreamableHttpService<LevhMcp, LocalSessionManager>: tower_service::Service<
            http::Request<B>,
            Response = Response,
            Error = Infallible,
            Future = futures_core::future::BoxFuture<'static, Result<Response, Infallible>>,
        >,
{
    type Response = Response;
    type Error = Infallible;
    type Future = futures_core::future::BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        tower_service::Service::<http::Request<B>>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        // A POST without a session id is an `initialize`: the one request that makes one.
        let opens_session = request.method() == http::Method::POST
            && !request.headers().contains_key("mcp-session-id");
        if opens_session && self.live() >= self.max_sessions {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {
                    "code": -32000,
                    "message": format!(
                        "too many MCP sessions: this server keeps at most {} at once; idle ones end after a while, try again then",
                        self.max_sessions
                    ),
                },
            });
            let response = http::Response::builder()
                .status(http::StatusCode::SERVICE_UNAVAILABLE)
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::RETRY_AFTER, "30")
                .body(Full::new(Bytes::from(body.to_string())).boxed())
                .expect("a fixed response is valid");
            return Box::pin(std::future::ready(Ok(response)));
        }
        self.inner.call(request)
    }
}
