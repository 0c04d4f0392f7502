//! The dashboard: what a person uses instead of the CLI, served by `levh serve` at `/` on
//! the API's own port.
//!
//! **Approach: a small client over the REST API**, not server-rendered templates. Every
//! action the dashboard offers is an `/api` operation, with its role checked by the one
//! operation table (`levh-api`) — a second rendering path would be a second place to get
//! authorisation wrong. The pages are plain HTML, CSS and ES modules with no build step, so
//! `cargo install` needs no Node, no npm and no network: the files are embedded with
//! `include_bytes!`. The one third-party library, uPlot (charts, MIT), is vendored from the
//! npm registry at a pinned version with its licence (`assets/vendor/uplot/`).
//!
//! Every page is a URL of its own (`/`, `/feed`, `/search`, `/memories/{id}`, `/fading`,
//! `/held`, `/people`, `/people/{id}`, `/entities/{id}`, `/organizations`, `/timeline`,
//! `/graph`, `/decisions`, `/commitments`, `/review`, `/ask`, `/briefing`, `/meeting-prep`,
//! `/conflicts`, `/memories`, `/projects`, `/sessions`, `/agents`, `/connectors`, `/settings`): the server answers each with the same shell and the
//! client draws the page the path names, so bookmarks and reloads work.
//!
//! The files hold no data, so they are served without a token (the page asks for one when
//! the API answers 401); the Host/Origin guard of `levh-http` still applies to them.

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file: its path under `/assets/`, its type and bytes.
struct Asset {
    path: &'static str,
    mime: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $mime:literal) => {
        Asset {
            path: $path,
            mime: $mime,
            bytes: include_bytes!(concat!("../assets/", $path)),
        }
    };
}

const ASSETS: &[Asset] = &[
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("pages.js", "text/javascript; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!(
        "vendor/uplot/uPlot.iife.min.js",
        "text/javascript; charset=utf-8"
    ),
    asset!("vendor/uplot/uPlot.min.css", "text/css; charset=utf-8"),
];

const SHELL: &str = include_str!("../assets/index.html");

/// The page paths, each answered with the shell.
pub const PAGES: &[&str] = &[
    "/",
    "/feed",
    "/search",
    "/memories",
    "/memories/{id}",
    "/projects",
    "/sessions",
    "/agents",
    "/fading",
    "/review",
    "/held",
    "/people",
    "/people/{id}",
    "/entities/{id}",
    "/organizations",
    "/timeline",
    "/graph",
    "/decisions",
    "/commitments",
    "/ask",
    "/briefing",
    "/meeting-prep",
    "/conflicts",
    "/connectors",
    "/settings",
];

/// Only this origin's scripts and styles; the API and the feed's WebSocket on the same
/// host; no framing (clickjacking a Forget button).
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
     connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The dashboard's routes, to merge into the server's router (behind its guard).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let mut router = Router::new();
    for page in PAGES {
        router = router.route(page, get(shell));
    }
    router.route("/assets/{*path}", get(asset))
}

async fn shell() -> Response {
    let mut response =
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], SHELL).into_response();
    secure(&mut response);
    response
}

async fn asset(axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.path == path) {
        Some(found) => {
            let mut response = (
                [
                    (header::CONTENT_TYPE, found.mime),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                found.bytes,
            )
                .into_response();
            secure(&mut response);
            response
        }
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json")],
            format!("{{\"error\":\"no dashboard file /assets/{path}\"}}"),
        )
            .into_response(),
    }
}

fn secure(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_the_shell_and_scripts_name_is_embedded() {
        let mut named = Vec::new();
        for text in std::iter::once(SHELL).chain(
            ASSETS
                .iter()
                .filter(|a| a.path.ends_with(".js") && !a.path.starts_with("vendor/"))
                .map(|a| std::str::from_utf8(a.bytes).unwrap()),
        ) {
            for piece in text.split(['"', '\'']) {
                if let Some(path) = piece.strip_prefix("/assets/") {
                    named.push(path.to_owned());
                } else if let Some(path) = piece.strip_prefix("./") {
                    named.push(path.to_owned());
                }
            }
        }
        assert!(!named.is_empty());
        for path in named {
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "{path} is named but not embedded"
            );
        }
    }
}
