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
            let response = json_rpc_error(
                http::StatusCode::SERVICE_UNAVAILABLE,
                -32000,
                format!(
                    "too many MCP sessions: this server keeps at most {} at once; idle ones end after a while, try again then",
                    self.max_sessions
                ),
                Some("30"),
            );
            return Box::pin(std::future::ready(Ok(response)));
        }
        // rmcp answers a body that is not JSON with a plain-text 415; JSON-RPC's answer is
        // a parse error (-32700), which clients know how to read.
        let sent_json = request.method() == http::Method::POST
            && request
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            if !(sent_json && response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE) {
                return Ok(response);
            }
            let said = response
                .into_body()
                .collect()
                .await
                .map(|body| String::from_utf8_lossy(&body.to_bytes()).into_owned())
                .unwrap_or_default();
            Ok(json_rpc_error(
                http::StatusCode::BAD_REQUEST,
                -32700,
                format!(
                    "parse error: the request body is not valid JSON-RPC ({said}); nothing was done"
                ),
                None,
            ))
        })
    }
}

/// A JSON-RPC error response (no `id`: the request's could not be read).
fn json_rpc_error(
    status: http::StatusCode,
    code: i64,
    message: String,
    retry_after: Option<&'static str>,
) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    let mut response = http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json");
    if let Some(seconds) = retry_after {
        response = response.header(http::header::RETRY_AFTER, seconds);
    }
    response
        .body(Full::new(Bytes::from(body.to_string())).boxed())
        .expect("a fixed response is valid")
}
