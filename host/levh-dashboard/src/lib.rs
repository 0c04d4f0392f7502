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
//! `/conflicts`, `/memories`, `/projects`, `/sessions`, `/agents`, `/work`, `/connectors`, `/settings`): the server answers each with the same shell and the
//! client draws the page the path names, so bookmarks and reloads work.
//!
//! Every word the pages show is a message in a catalogue, one ES module per language
//! (`assets/strings/en.js`, complete), looked up by key through `assets/i18n.js`: a
//! translation is one file (i18n.js says how to add it). A test below holds the keys the
//! scripts and the shell use and the keys the English catalogue defines to the same set.
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
    asset!("i18n.js", "text/javascript; charset=utf-8"),
    // The words, one catalogue per language (i18n.js says how to add one).
    asset!("strings/en.js", "text/javascript; charset=utf-8"),
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
    "/work",
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

    /// The text of an embedded file.
    fn embedded(path: &str) -> &'static str {
        let asset = ASSETS
            .iter()
            .find(|a| a.path == path)
            .unwrap_or_else(|| panic!("{path} is not embedded"));
        std::str::from_utf8(asset.bytes).unwrap()
    }

    /// Every message key the dashboard uses is in the English catalogue, and every key the
    /// catalogue defines is used: a page never shows a bare key, and a translator never
    /// translates a message nobody sees. Used: `t("key"…)` and `tParts("key"…)` in the
    /// scripts (always a literal key, so this test sees them all), `data-i18n="key"` and
    /// `data-i18n-attr="attribute:key;…"` in the shell. Defined: the lines
    /// `  "key": …` of strings/en.js (its format, described at its top).
    #[test]
    fn every_message_key_used_is_in_the_english_catalogue_and_every_one_there_is_used() {
        use std::collections::BTreeSet;

        let mut used = BTreeSet::new();
        let scripts = ASSETS.iter().filter(|a| {
            a.path.ends_with(".js")
                && !a.path.starts_with("vendor/")
                && !a.path.starts_with("strings/")
                && a.path != "i18n.js"
        });
        for asset in scripts {
            let text = std::str::from_utf8(asset.bytes).unwrap();
            for call in ["t(", "tParts("] {
                let mut from = 0;
                while let Some(found) = text[from..].find(call) {
                    let at = from + found;
                    from = at + call.len();
                    // `t(` inside a longer name (`split(`, `get(`) is another function.
                    let before = text[..at].chars().next_back();
                    if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                        continue;
                    }
                    let rest = &text[from..];
                    let key = rest
                        .strip_prefix('"')
                        .and_then(|quoted| quoted.split_once('"'))
                        .map(|(key, _)| key)
                        .unwrap_or_else(|| {
                            let line = text[..at].matches('\n').count() + 1;
                            panic!("{}:{line}: {call}…) without a literal \"key\"", asset.path)
                        });
                    used.insert(key.to_owned());
                }
            }
        }
        for piece in SHELL.split("data-i18n=\"").skip(1) {
            let (key, _) = piece.split_once('"').unwrap();
            used.insert(key.to_owned());
        }
        for piece in SHELL.split("data-i18n-attr=\"").skip(1) {
            let (pairs, _) = piece.split_once('"').unwrap();
            for pair in pairs.split(';') {
                let (_, key) = pair
                    .split_once(':')
                    .unwrap_or_else(|| panic!("data-i18n-attr pair without a colon: {pair}"));
                used.insert(key.trim().to_owned());
            }
        }
        assert!(used.len() > 100, "only {} keys found in use", used.len());

        let mut defined = BTreeSet::new();
        let mut inside = false;
        for (n, line) in embedded("strings/en.js").lines().enumerate() {
            if line == "export default {" {
                inside = true;
            } else if line == "};" {
                inside = false;
            } else if inside {
                let entry = line.trim();
                if entry.is_empty() || entry.starts_with("//") {
                    continue;
                }
                let (key, _) = line
                    .strip_prefix("  \"")
                    .and_then(|rest| rest.split_once("\": "))
                    .unwrap_or_else(|| {
                        panic!("strings/en.js:{}: not a `  \"key\": …` line: {line}", n + 1)
                    });
                assert!(
                    line.ends_with(',') && !key.contains(char::is_whitespace),
                    "strings/en.js:{}: one message a line, ending with a comma: {line}",
                    n + 1
                );
                assert!(
                    defined.insert(key.to_owned()),
                    "strings/en.js:{}: {key} is defined twice",
                    n + 1
                );
            }
        }

        let missing: Vec<_> = used.difference(&defined).collect();
        assert!(
            missing.is_empty(),
            "used but not in strings/en.js: {missing:?}"
        );
        let unused: Vec<_> = defined.difference(&used).collect();
        assert!(
            unused.is_empty(),
            "in strings/en.js but never used: {unused:?}"
        );
    }
}
