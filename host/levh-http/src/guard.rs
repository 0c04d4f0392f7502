//! What a web page must not be able to make the user's browser do. levh serves on
//! loopback without a token by default, so any page the user visits could otherwise:
//!
//! - read the store through a DNS name that rebinds to 127.0.0.1 (the browser then sends
//!   `Host: evil.example:PORT`): every request's `Host` must be a loopback name, or one
//!   `LEVH_ALLOWED_HOSTS` lists (a server on a public address behind a token accepts any);
//! - write with a "simple" cross-site request, which the browser sends without asking
//!   (CORS only hides the answer): a POST must carry `Content-Type: application/json` or a
//!   token header, both of which make the browser ask first; and a state-changing request
//!   or a WebSocket upgrade that names an `Origin` must name an allowed one (the same list
//!   CORS allows).
//!
//! Requests without `Host` or `Origin` (curl, the CLI, other programs) are not a browser's
//! and pass; they meet authentication next.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, AppState};

/// Middleware, before authentication.
pub(crate) async fn same_site(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let auth = &state.auth;
    let headers = request.headers();
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or_default();
        if !auth.host_allowed(host) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "host {host:?} is not one this server answers to (it serves localhost, \
                     127.0.0.1 and [::1]; LEVH_ALLOWED_HOSTS adds names). Nothing was read or changed."
                ),
            )
            .into_response();
        }
    }
    let method = request.method().clone();
    let writes = !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS);
    let upgrade = request.uri().path() == "/api/ws";
    if (writes || upgrade)
        && let Some(origin) = headers.get(header::ORIGIN)
    {
        let origin = origin.to_str().unwrap_or_default();
        if !auth.origin_allowed(origin) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "origin {origin:?} may not {} (allowed: localhost origins and \
                     LEVH_CORS_ORIGINS). Nothing was changed.",
                    if upgrade {
                        "open the live feed"
                    } else {
                        "change anything here"
                    }
                ),
            )
            .into_response();
        }
    }
    if method == Method::POST && !carries_token(&request) && !is_json(&request) {
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a POST needs Content-Type: application/json (an empty body is fine) or a token \
             header: browsers send other types cross-site without asking. Nothing was changed.",
        )
        .into_response();
    }
    next.run(request).await
}

/// A token header (never sent cross-site without a preflight the server refuses).
fn carries_token(request: &Request) -> bool {
    let headers = request.headers();
    headers.contains_key("x-levh-token") || headers.contains_key(header::AUTHORIZATION)
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The host part of a `Host` header: `[::1]:7777` → `[::1]`, `localhost:7777` →
/// `localhost`.
pub(crate) fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}

/// Loopback names, as `Host` carries them.
pub(crate) fn is_loopback_name(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]"
    )
}
