//! Who is calling. A request presents a token (`X-LEVH-Token`, `Authorization: Bearer`,
//! or `?token=` for the WebSocket, which browsers cannot give headers); the token is
//! either the operator token (`LEVH_TOKEN`: admin of `default`) or one issued by
//! `levh token create` (bound to a workspace and a role). Without a token the caller is
//! the local person, admin of `default` — unless `LEVH_TOKEN` is set, in which case every
//! request must present one. Repeated failures from one client are answered 429.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use levh_core::{Principal, Role};
use subtle::ConstantTimeEq;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::{ApiError, AppState};

/// Failed attempts allowed per client within [`FAILURE_WINDOW`] before it is refused.
pub const MAX_FAILURES: usize = 10;
/// The window failed attempts are counted in.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// How the server authenticates, from `levh serve`'s environment.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// `LEVH_TOKEN`: when set, every request needs a token, and this one is admin of
    /// the default workspace.
    pub operator_token: Option<String>,
    /// Origins allowed by CORS besides localhost ones (`LEVH_CORS_ORIGINS`).
    pub cors_origins: Vec<String>,
    /// Bound to a non-loopback address: any `Host` is accepted unless `allowed_hosts`
    /// names some (the token is the guard against DNS rebinding then).
    pub public: bool,
    /// `LEVH_ALLOWED_HOSTS`: names (or `name:port`) accepted in `Host` besides loopback
    /// names, e.g. the name of a reverse proxy in front of levh.
    pub allowed_hosts: Vec<String>,
}

pub(crate) struct Auth {
    config: AuthConfig,
    failures: Mutex<HashMap<IpAddr, Vec<Instant>>>,
}

impl Auth {
    pub(crate) fn new(config: AuthConfig) -> Self {
        Self {
            config,
            failures: Mutex::default(),
        }
    }

    pub(crate) fn mcp_allowed_hosts(&self) -> Option<Vec<String>> {
        // The guard in front of /mcp already checked Host by the same rule; rmcp's own
        // check (loopback only by default) must not refuse what the rule allows. An
        // empty list allows every host.
        (self.config.public || !self.config.allowed_hosts.is_empty()).then(Vec::new)
    }

    /// Whether a request's `Host` is one this server answers to.
    pub(crate) fn host_allowed(&self, host: &str) -> bool {
        let name = crate::guard::host_name(host.trim());
        if crate::guard::is_loopback_name(name) {
            return true;
        }
        if self.config.allowed_hosts.is_empty() {
            return self.config.public;
        }
        self.config.allowed_hosts.iter().any(|allowed| {
            allowed.eq_ignore_ascii_case(host.trim()) || allowed.eq_ignore_ascii_case(name)
        })
    }

    /// Whether an `Origin` may write or open the feed: localhost origins and
    /// `LEVH_CORS_ORIGINS`, as CORS allows them.
    pub(crate) fn origin_allowed(&self, origin: &str) -> bool {
        is_local_origin(origin) || self.config.cors_origins.iter().any(|o| o == origin)
    }

    /// Seconds until `client` may try again, when it is over the limit.
    fn blocked_for(&self, client: IpAddr) -> Option<u64> {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let recent = failures.entry(client).or_default();
        recent.retain(|at| now.duration_since(*at) < FAILURE_WINDOW);
        (recent.len() >= MAX_FAILURES).then(|| {
            let oldest = recent[0];
            (FAILURE_WINDOW - now.duration_since(oldest))
                .as_secs()
                .max(1)
        })
    }

    fn record_failure(&self, client: IpAddr) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.entry(client).or_default().push(Instant::now());
    }

    fn is_operator(&self, secret: &str) -> bool {
        self.config
            .operator_token
            .as_deref()
            .is_some_and(|operator| bool::from(operator.as_bytes().ct_eq(secret.as_bytes())))
    }
}

/// The route a peer's share token may call, and only it.
pub(crate) const SHARE_BUNDLE_PATH: &str = "/api/share/bundle";

/// The peer whose share token authenticated the request (on its extensions).
#[derive(Debug, Clone)]
pub(crate) struct SharePeer(pub levh_api::share::Peer);

/// The credential a request presents.
enum Presented {
    /// A token secret.
    Token(String),
    /// An `Authorization` of another scheme (Basic, ...): a failed attempt, not "none".
    Other,
    /// None at all.
    Nothing,
}

fn presented(request: &Request) -> Presented {
    let headers = request.headers();
    if let Some(value) = headers.get("x-levh-token").and_then(|v| v.to_str().ok()) {
        return Presented::Token(value.trim().to_owned());
    }
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` is Bearer.
        let token = value.to_str().ok().and_then(|v| {
            let (scheme, token) = v.trim_start().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)
        });
        return match token {
            Some(token) => Presented::Token(token.trim().to_owned()),
            None => Presented::Other,
        };
    }
    // Only the socket may carry the token in its URL: URLs end up in logs and history.
    if request.uri().path() == "/api/ws"
        && let Some(token) = request.uri().query().and_then(|query| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| *key == "token")
                .map(|(_, value)| value.to_owned())
        })
    {
        return Presented::Token(token);
    }
    Presented::Nothing
}

fn too_many(client: IpAddr, retry_after: u64) -> Response {
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "too many failed authentication attempts from {client}; try again in {retry_after} s"
        ),
    )
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&retry_after.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// Middleware: turns the request's token into a [`Principal`] on its extensions, or
/// answers 401 / 429.
pub(crate) async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Pre-flight requests carry no credentials; CORS answers them.
    if request.method() == axum::http::Method::OPTIONS {
        return next.run(request).await;
    }
    // The dashboard's pages and files hold no data; what they show comes from /api.
    let path = request.uri().path();
    if state.pages.is_some() && !path.starts_with("/api") && !path.starts_with("/mcp") {
        return next.run(request).await;
    }
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let auth = &state.auth;
    // A valid token is never refused: only failures count, and only a client over the
    // limit is refused — so no local process can lock the others out by failing.
    let refused = |message: &str| {
        if let Some(retry_after) = auth.blocked_for(client) {
            return too_many(client, retry_after);
        }
        auth.record_failure(client);
        unauthorized(message)
    };
    let principal = match presented(&request) {
        Presented::Token(secret) if auth.is_operator(&secret) => Principal::operator(),
        Presented::Token(secret) if secret.starts_with(levh_api::share::SHARE_TOKEN_PREFIX) => {
            let share = state.share.clone();
            let found = tokio::task::spawn_blocking(move || {
                share
                    .map(|share| share.peers())
                    .transpose()
                    .map(|peers| peers.and_then(|p| p.with_share_token(&secret).cloned()))
            })
            .await;
            let peer = match found {
                Ok(Ok(Some(peer))) => peer,
                Ok(Ok(None)) => {
                    tracing::warn!(%client, "rejected an unknown share token");
                    return refused(
                        "the share token is not valid (unknown, or granted again since)",
                    );
                }
                Ok(Err(error)) => return ApiError::from(error).into_response(),
                Err(error) => return ApiError::internal(error).into_response(),
            };
            // A share token reads bundles of what was granted and nothing else: every
            // other route — writes, lists, the dashboard's calls, MCP — is refused.
            if request.uri().path() != SHARE_BUNDLE_PATH {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "this is peer {}'s share token: it only fetches bundles (GET {SHARE_BUNDLE_PATH}) (nothing was changed)",
                        peer.name
                    ),
                )
                .into_response();
            }
            let Some(grant) = peer.grant.clone() else {
                return refused("the share token is not valid");
            };
            let Ok(workspace) = levh_core::Workspace::new(&grant.workspace) else {
                return ApiError::internal(format!(
                    "peer {}'s grant names no valid workspace",
                    peer.name
                ))
                .into_response();
            };
            request.extensions_mut().insert(SharePeer(peer.clone()));
            Principal {
                workspace,
                role: Role::Viewer,
                name: Some(format!("peer:{}", peer.name)),
            }
        }
        Presented::Token(secret) => {
            let server = state.server.clone();
            let found =
                tokio::task::spawn_blocking(move || server.principal_for_token(&secret)).await;
            match found {
                Ok(Ok(Some(principal))) => principal,
                Ok(Ok(None)) => {
                    tracing::warn!(%client, "rejected an unknown or revoked token");
                    return refused("the token is not valid (unknown or revoked)");
                }
                Ok(Err(error)) => return ApiError::internal(error).into_response(),
                Err(error) => return ApiError::internal(error).into_response(),
            }
        }
        Presented::Other => {
            return refused(
                "only a token is accepted: send X-LEVH-Token or Authorization: Bearer (not Basic)",
            );
        }
        Presented::Nothing if auth.config.operator_token.is_some() => {
            return refused(
                "this server requires a token: send X-LEVH-Token or Authorization: Bearer (?token= on /api/ws)",
            );
        }
        Presented::Nothing => Principal::local(),
    };
    request.extensions_mut().insert(principal);
    next.run(request).await
}

fn unauthorized(message: &str) -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"levh\""),
    );
    response
}

/// Route-layer middleware: refuses callers below `needed` with 403.
pub(crate) async fn require(needed: Role, request: Request, next: Next) -> Response {
    match request.extensions().get::<Principal>() {
        Some(principal) if principal.role >= needed => next.run(request).await,
        Some(principal) => ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "this needs role {needed}; the token is {} in workspace {} (nothing was changed)",
                principal.role, principal.workspace
            ),
        )
        .into_response(),
        None => unauthorized("no credentials"),
    }
}

/// CORS: localhost origins (any port) and the ones `LEVH_CORS_ORIGINS` lists.
pub(crate) fn cors(auth: &Auth) -> CorsLayer {
    let extra = auth.config.cors_origins.clone();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            // The same rule as Auth::origin_allowed (which needs the Auth, not a clone).
            origin
                .to_str()
                .is_ok_and(|origin| is_local_origin(origin) || extra.iter().any(|o| o == origin))
        }))
        .allow_methods([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::PATCH,
            axum::http::Method::DELETE,
        ])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            header::HeaderName::from_static("x-levh-token"),
        ])
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with any port.
pub fn is_local_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if rest.starts_with('[') {
        rest.split_inclusive(']').next().unwrap_or(rest)
    } else {
        rest.split(':').next().unwrap_or(rest)
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_origins_are_local() {
        for local in [
            "http://localhost",
            "http://localhost:5173",
            "https://127.0.0.1:7777",
            "http://[::1]:8080",
        ] {
            assert!(is_local_origin(local), "{local}");
        }
        for foreign in [
            "http://localhost.evil.com",
            "http://127.0.0.1.nip.io",
            "https://example.com",
            "file://",
            "null",
        ] {
            assert!(!is_local_origin(foreign), "{foreign}");
        }
    }

    #[test]
    fn a_client_is_blocked_after_too_many_failures_and_others_are_not() {
        let auth = Auth::new(AuthConfig::default());
        let bad = IpAddr::from([10, 0, 0, 1]);
        for _ in 0..MAX_FAILURES - 1 {
            auth.record_failure(bad);
        }
        assert_eq!(auth.blocked_for(bad), None);
        auth.record_failure(bad);
        let wait = auth.blocked_for(bad).unwrap();
        assert!((1..=60).contains(&wait));
        assert_eq!(auth.blocked_for(IpAddr::from([10, 0, 0, 2])), None);
    }
}
