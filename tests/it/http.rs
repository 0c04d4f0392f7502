//! `levh serve`: every REST route through `router(state).oneshot(...)` with its documented
//! errors; the auth matrix; two workspaces that never see each other on any surface
//! (REST, the live feed, MCP over HTTP); the WebSocket feed of a real `levh serve`
//! receiving a write made by a separate `levh capture`; the OpenAPI document.

use std::collections::BTreeSet;
use std::time::Duration;

use http_body_util::BodyExt;
use levh_core::{Role, Workspace};
use levh_http::axum::Router;
use levh_http::axum::body::Body;
use levh_http::axum::http::{Method, Request, StatusCode};
use levh_http::{AppState, AuthConfig};
use levh_mcp::tokio;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::{Harness, levh, ok, runtime};

const OPERATOR: &str = "operator-secret-0123456789abcdef";

fn app(harness: &Harness, operator: Option<&str>) -> Router {
    levh_http::router(AppState::new(
        harness.levh.clone(),
        harness.store.clone(),
        AuthConfig {
            operator_token: operator.map(str::to_owned),
            ..AuthConfig::default()
        },
    ))
}

/// The state of a server behind the operator token with /mcp mounted as the binary
/// mounts it: levh-mcp's service behind levh-http's auth.
fn with_mcp(harness: &Harness, profile: levh_mcp::Profile) -> AppState {
    let state = AppState::new(
        harness.levh.clone(),
        harness.store.clone(),
        AuthConfig {
            operator_token: Some(OPERATOR.into()),
            ..AuthConfig::default()
        },
    );
    let mcp = levh_mcp::http_service(
        harness.levh.clone(),
        profile,
        None,
        Some(harness.store.clone()),
        state.mcp_allowed_hosts(),
        levh_mcp::sessions::SessionLimits::default(),
        state.shutdown_token().child_token(),
    );
    state.with_mcp(mcp)
}

/// One request; returns the status and the JSON body (Null when empty).
async fn send(
    app: &Router,
    method: Method,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header("x-levh-token", token);
    }
    let request = match body {
        Some(body) => request
            .header("content-type", "application/json")
            .body(Body::from(body.to_string())),
        None => request.body(Body::empty()),
    }
    .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, value)
}

fn error_text(body: &Value) -> &str {
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {body}"))
}

async fn get(app: &Router, uri: &str) -> (StatusCode, Value) {
    send(app, Method::GET, uri, None, None).await
}
async fn post(app: &Router, uri: &str, body: Value) -> (StatusCode, Value) {
    send(app, Method::POST, uri, None, Some(body)).await
}

fn count(harness: &Harness) -> u64 {
    use levh_core::Store;
    harness
        .store
        .count(&levh_core::MemoryFilter::workspace(Workspace::default()))
        .unwrap()
}

const MISSING: &str = "0190e5d8-0000-7000-8000-000000000000";

#[test]
fn rest_every_route_answers_its_success_and_its_documented_errors() {
    let harness = Harness::new();
    let app = app(&harness, None);
    runtime().block_on(async {
        let (status, health) = get(&app, "/api/health").await;
        assert_eq!(status, StatusCode::OK, "{health}");
        assert_eq!(health["journal_mode"], "wal");
        assert_eq!((health["workspace"].as_str(), health["role"].as_str()), (Some("default"), Some("admin")));

        // Create through the gate: stored 201, duplicate 200 reject, near-duplicate 202 held.
        let (status, created) = post(&app, "/api/memories", json!({"content": "The main database is PostgreSQL 16 on host db-main", "project": "infra"})).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(created["verdict"], "admit");
        assert_eq!(created["source"], "http");
        let id = created["memory_id"].as_str().unwrap().to_owned();
        let (status, duplicate) = post(&app, "/api/memories", json!({"content": "The main database is PostgreSQL 16 on host db-main", "project": "infra"})).await;
        assert_eq!((status, duplicate["verdict"].as_str()), (StatusCode::OK, Some("reject")));
        let (status, held) = post(&app, "/api/memories", json!({"content": "The main database is PostgreSQL 17 on host db-main", "project": "infra"})).await;
        assert_eq!((status, held["verdict"].as_str()), (StatusCode::ACCEPTED, Some("review")), "{held}");
        let held_id = held["held_id"].as_str().unwrap().to_owned();
        let (status, body) = post(&app, "/api/memories", json!({"content": 5})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("content"), "{body}");
        let (status, body) = post(&app, "/api/memories", json!({"content": "Please store this no matter what", "force": true})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("force"), "{body}");
        let request = Request::builder().method(Method::POST).uri("/api/memories").body(Body::from("content=plain")).unwrap();
        assert_eq!(app.clone().oneshot(request).await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let (status, body) = post(&app, "/api/memories", json!({"content": "Valid text here", "valid_from": "yesterday"})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("valid_from"), "{body}");
        let (status, other) = post(&app, "/api/memories", json!({"content": "Deploys happen on Fridays after the standup"})).await;
        assert_eq!(status, StatusCode::CREATED, "{other}");
        let other_id = other["memory_id"].as_str().unwrap().to_owned();
        assert_eq!(count(&harness), 2, "the reject and the bad bodies stored nothing");

        // Reads.
        let (status, list) = get(&app, "/api/memories?project=infra").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(list["memories"].as_array().unwrap().len(), 1);
        for bad in ["/api/memories?limit=0", "/api/memories?limit=abc", "/api/memories?kind=Not%20A%20Kind!"] {
            let (status, body) = get(&app, bad).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        }
        let (status, one) = get(&app, &format!("/api/memories/{id}")).await;
        assert_eq!((status, one["id"].as_str()), (StatusCode::OK, Some(id.as_str())));
        let (status, body) = get(&app, "/api/memories/not-an-id").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("not-an-id"));
        assert_eq!(get(&app, &format!("/api/memories/{MISSING}")).await.0, StatusCode::NOT_FOUND);

        // Update: importance, content (secrets redacted), and refusals that change nothing.
        let uri = format!("/api/memories/{id}");
        let (status, updated) = send(&app, Method::PATCH, &uri, None, Some(json!({"importance": 0.9}))).await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        assert_eq!(updated["memory"]["importance"], 0.9);
        let (status, body) = send(&app, Method::PATCH, &uri, None, Some(json!({"importance": 2.0, "content": "Changed text that should not land"}))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("importance"));
        assert_eq!(get(&app, &uri).await.1["content"], "The main database is PostgreSQL 16 on host db-main");
        assert_eq!(send(&app, Method::PATCH, &uri, None, Some(json!({}))).await.0, StatusCode::BAD_REQUEST);
        let (status, body) = send(&app, Method::PATCH, &format!("/api/memories/{MISSING}"), None, Some(json!({"importance": 0.5}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, body) = send(&app, Method::PATCH, &uri, None, Some(json!({"content": "The main database is PostgreSQL 16 on db-main, password=hunter2secret"}))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(!body["memory"]["content"].as_str().unwrap().contains("hunter2secret"));
        assert!(!body["redactions"].as_array().unwrap().is_empty());

        // Curves and scores.
        let (status, curve) = get(&app, &format!("{uri}/forgetting-curve?days=7")).await;
        assert_eq!(status, StatusCode::OK);
        let points = curve["points"].as_array().unwrap();
        assert_eq!((points[0]["day"].as_u64(), points.last().unwrap()["day"].as_u64()), (Some(0), Some(7)));
        assert_eq!(get(&app, &format!("{uri}/forgetting-curve?days=0")).await.0, StatusCode::BAD_REQUEST);
        assert_eq!(get(&app, &format!("/api/memories/{MISSING}/forgetting-curve")).await.0, StatusCode::NOT_FOUND);
        let (status, score) = get(&app, &format!("{uri}/score-breakdown")).await;
        assert_eq!(status, StatusCode::OK, "{score}");
        assert_eq!(score["similarity"], 1.0);
        let sum: f64 = score["terms"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
        assert!((sum - score["score"].as_f64().unwrap()).abs() < 1e-9);
        let (_, scored) = get(&app, &format!("{uri}/score-breakdown?query=weather%20in%20Oslo")).await;
        assert!(scored["similarity"].as_f64().unwrap() < 1.0);
        assert_eq!(get(&app, &format!("{uri}/score-breakdown?query=%20")).await.0, StatusCode::BAD_REQUEST);
        assert_eq!(get(&app, &format!("/api/memories/{MISSING}/score-breakdown")).await.0, StatusCode::NOT_FOUND);

        // State changes.
        for action in ["reinforce", "pin", "unpin"] {
            let (status, body) = post(&app, &format!("{uri}/{action}"), json!({})).await;
            assert_eq!(status, StatusCode::OK, "{action}: {body}");
            assert_eq!(post(&app, &format!("/api/memories/{MISSING}/{action}"), json!({})).await.0, StatusCode::NOT_FOUND);
            assert_eq!(post(&app, &format!("/api/memories/nope/{action}"), json!({})).await.0, StatusCode::BAD_REQUEST);
        }
        let (status, body) = post(&app, &format!("{uri}/feedback"), json!({"helpful": true})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = post(&app, &format!("{uri}/feedback"), json!({})).await;
        assert!(status.is_client_error() && error_text(&body).contains("helpful"), "{body}");
        assert_eq!(get(&app, "/api/memories/fading").await.0, StatusCode::OK);

        // Recall reinforces, search does not; both validate.
        let (status, recall) = post(&app, "/api/recall", json!({"query": "database host"})).await;
        assert_eq!(status, StatusCode::OK, "{recall}");
        assert_eq!(recall["results"][0]["id"], id.as_str());
        assert!(!recall["reinforced"].as_array().unwrap().is_empty());
        let (_, search) = post(&app, "/api/search", json!({"query": "database host"})).await;
        assert_eq!(search["results"][0]["id"], id.as_str());
        assert!(search["reinforced"].as_array().unwrap().is_empty());
        let (status, body) = post(&app, "/api/recall", json!({"limit": 3})).await;
        assert!(status.is_client_error() && error_text(&body).contains("query"), "{body}");
        assert_eq!(post(&app, "/api/search", json!({"query": "x", "limit": 0})).await.0, StatusCode::BAD_REQUEST);

        // Workspace views.
        let (_, stats) = get(&app, "/api/stats").await;
        assert_eq!(stats["total"], 2);
        let (_, projects) = get(&app, "/api/projects").await;
        assert_eq!(projects["projects"][0]["name"], "infra");
        let (_, sources) = get(&app, "/api/sources").await;
        assert_eq!(sources["sources"][0]["name"], "http");
        let (_, export) = get(&app, "/api/export").await;
        assert_eq!(export["memories"].as_array().unwrap().len(), 2);
        let (status, evaluation) = post(&app, "/api/memories/evaluate-admission", json!({"content": "The main database is PostgreSQL 16 on host db-main, password=[REDACTED:password]"})).await;
        assert_eq!(status, StatusCode::OK, "{evaluation}");
        assert!(evaluation["verdict"].is_string());
        assert_eq!(post(&app, "/api/memories/evaluate-admission", json!({})).await.0, StatusCode::BAD_REQUEST);
        assert_eq!(get(&app, "/api/memories/audit-secrets").await.0, StatusCode::OK);
        assert_eq!(post(&app, "/api/memories/redact-all", json!({})).await.0, StatusCode::OK);

        // The held queue: list, show, admit once (409 the second time), discard.
        let (_, queue) = get(&app, "/api/memories/held").await;
        assert_eq!(queue["held"][0]["id"], held_id.as_str());
        assert_eq!(get(&app, "/api/memories/held?status=maybe").await.0, StatusCode::BAD_REQUEST);
        assert_eq!(get(&app, &format!("/api/memories/held/{held_id}")).await.0, StatusCode::OK);
        assert_eq!(get(&app, "/api/memories/held/xyz").await.0, StatusCode::BAD_REQUEST);
        assert_eq!(get(&app, &format!("/api/memories/held/{MISSING}")).await.0, StatusCode::NOT_FOUND);
        let (status, admitted) = post(&app, &format!("/api/memories/held/{held_id}/admit"), json!({"supersede": true})).await;
        assert_eq!(status, StatusCode::OK, "{admitted}");
        assert_eq!(admitted["superseded"], id.as_str());
        let (status, body) = post(&app, &format!("/api/memories/held/{held_id}/admit"), json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(error_text(&body).contains("already decided"));
        assert_eq!(post(&app, &format!("/api/memories/held/{held_id}/discard"), json!({})).await.0, StatusCode::CONFLICT);
        assert_eq!(post(&app, &format!("/api/memories/held/{MISSING}/admit"), json!({})).await.0, StatusCode::NOT_FOUND);
        assert_eq!(post(&app, &format!("/api/memories/held/{MISSING}/discard"), json!({})).await.0, StatusCode::NOT_FOUND);
        let (_, another) = post(&app, "/api/memories", json!({"content": "Deploys happen on Fridays after the daily standup"})).await;
        let another_held = another["held_id"].as_str().expect("a second near-duplicate is held");
        let (status, discarded) = post(&app, &format!("/api/memories/held/{another_held}/discard"), json!({})).await;
        assert_eq!((status, discarded["status"].as_str()), (StatusCode::OK, Some("discarded")));

        // Sessions.
        let (status, session) = post(&app, "/api/sessions", json!({"project": "infra"})).await;
        assert_eq!(status, StatusCode::CREATED, "{session}");
        let session_id = session["session_id"].as_str().unwrap();
        let (status, ended) = post(&app, &format!("/api/sessions/{session_id}/end"), json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert!(ended["ended_at"].is_string(), "{ended}");
        assert_eq!(post(&app, "/api/sessions/no-such-session/end", json!({})).await.0, StatusCode::BAD_REQUEST);

        // Connectors: sync runs are read from the store; the runtime is the binary's.
        let (status, runs) = get(&app, "/api/connectors/sync-state").await;
        assert_eq!((status, runs), (StatusCode::OK, json!([])));
        assert_eq!(get(&app, "/api/connectors").await.0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(get(&app, "/api/connectors/files").await.0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(post(&app, "/api/connectors/files/sync", json!({})).await.0, StatusCode::SERVICE_UNAVAILABLE);

        // Forget (204, then 404) and purge.
        assert_eq!(send(&app, Method::DELETE, &format!("/api/memories/{other_id}"), None, None).await.0, StatusCode::NO_CONTENT);
        assert_eq!(get(&app, &format!("/api/memories/{other_id}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(send(&app, Method::DELETE, &format!("/api/memories/{other_id}"), None, None).await.0, StatusCode::NOT_FOUND);
        let (status, purged) = post(&app, &format!("{uri}/purge"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{purged}");
        assert_eq!(purged["residue"], json!([]));
        assert_eq!(post(&app, &format!("{uri}/purge"), json!({})).await.0, StatusCode::NOT_FOUND);

        let (status, document) = get(&app, "/api/openapi.json").await;
        assert_eq!((status, document["openapi"].as_str()), (StatusCode::OK, Some("3.1.0")));
        let (status, _) = get(&app, "/api/nothing-here").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    });
}

#[test]
fn rest_auth_matrix_no_wrong_viewer_editor_admin_tokens() {
    let harness = Harness::new();
    let now = harness.levh.now();
    let default = Workspace::default();
    let token = |role| {
        harness
            .store
            .create_token(&default, role, None, now)
            .unwrap()
            .secret
    };
    let (viewer, editor, admin) = (token(Role::Viewer), token(Role::Editor), token(Role::Admin));
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        harness.capture("The main database is PostgreSQL 16 on host db-main");
        let hold = |harness: &Harness| {
            harness
                .levh
                .capture(
                    &harness.scope,
                    levh_core::NewMemory {
                        content: format!(
                            "The main database is PostgreSQL 17 on host db-main {}",
                            count(harness)
                        ),
                        ..Default::default()
                    },
                )
                .unwrap()
                .held_id
                .unwrap()
                .to_string()
        };
        let read = |t| send(&app, Method::GET, "/api/memories", t, None);
        assert_eq!(read(None).await.0, StatusCode::UNAUTHORIZED);
        let (status, body) = read(Some("levh_0000")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(error_text(&body).contains("not valid"));
        let bearer = Request::builder()
            .uri("/api/memories")
            .header("authorization", format!("Bearer {viewer}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            app.clone().oneshot(bearer).await.unwrap().status(),
            StatusCode::OK
        );

        let write = |content: &'static str, token| {
            let app = app.clone();
            async move {
                send(
                    &app,
                    Method::POST,
                    "/api/memories",
                    Some(token),
                    Some(json!({"content": content})),
                )
                .await
                .0
            }
        };
        let purge = |token, id: String| {
            let app = app.clone();
            async move {
                send(
                    &app,
                    Method::POST,
                    &format!("/api/memories/{id}/purge"),
                    Some(token),
                    None,
                )
                .await
                .0
            }
        };
        let decide = |token, held: String| {
            let app = app.clone();
            async move {
                send(
                    &app,
                    Method::POST,
                    &format!("/api/memories/held/{held}/admit"),
                    Some(token),
                    None,
                )
                .await
                .0
            }
        };
        for (name, token, can_write, can_admin, fact, victim) in [
            (
                "viewer",
                viewer.as_str(),
                false,
                false,
                "Viewers should never manage to store this sentence",
                "The coffee machine on floor two is broken",
            ),
            (
                "editor",
                editor.as_str(),
                true,
                false,
                "Editors keep the release checklist in the wiki",
                "Parking permits renew every January",
            ),
            (
                "admin",
                admin.as_str(),
                true,
                true,
                "The office closes early on the last Friday of each month",
                "Invoices go to accounts payable by email",
            ),
            (
                "operator",
                OPERATOR,
                true,
                true,
                "Backups are encrypted with age and rotated weekly",
                "The staging cluster sleeps at night to save money",
            ),
        ] {
            assert_eq!(read(Some(token)).await.0, StatusCode::OK, "{name} reads");
            let wrote = write(fact, token).await;
            assert_eq!(
                wrote,
                if can_write {
                    StatusCode::CREATED
                } else {
                    StatusCode::FORBIDDEN
                },
                "{name} writes"
            );
            let victim = harness.capture(victim);
            let held = hold(&harness);
            let expected = if can_admin {
                StatusCode::OK
            } else {
                StatusCode::FORBIDDEN
            };
            assert_eq!(
                purge(token, victim.to_string()).await,
                expected,
                "{name} purges"
            );
            assert_eq!(
                decide(token, held.clone()).await,
                expected,
                "{name} decides"
            );
            if !can_admin {
                // Refused means unchanged.
                assert!(harness.levh.get(&harness.scope, victim).is_ok());
                assert_eq!(
                    harness
                        .levh
                        .held_get(&harness.scope, held.parse().unwrap())
                        .unwrap()
                        .status,
                    levh_core::HeldStatus::Held
                );
            }
        }
        // A viewer may search but not recall (recall reinforces: a write).
        assert_eq!(
            send(
                &app,
                Method::POST,
                "/api/search",
                Some(&viewer),
                Some(json!({"query": "database"}))
            )
            .await
            .0,
            StatusCode::OK
        );
        let (status, body) = send(
            &app,
            Method::POST,
            "/api/recall",
            Some(&viewer),
            Some(json!({"query": "database"})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(error_text(&body).contains("needs role editor"), "{body}");
        // A revoked token stops at once.
        let tokens = harness.store.list_tokens().unwrap();
        let viewer_id = &tokens.iter().find(|t| t.role == Role::Viewer).unwrap().id;
        harness.store.revoke_token(viewer_id, now).unwrap();
        assert_eq!(read(Some(&viewer)).await.0, StatusCode::UNAUTHORIZED);
    });
}

#[test]
fn rest_repeated_failures_are_rate_limited_per_client() {
    let harness = Harness::new();
    let admin = harness
        .store
        .create_token(&Workspace::default(), Role::Admin, None, harness.levh.now())
        .unwrap()
        .secret;
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        for _ in 0..levh_http::auth::MAX_FAILURES {
            assert_eq!(
                send(&app, Method::GET, "/api/stats", Some("levh_guess"), None)
                    .await
                    .0,
                StatusCode::UNAUTHORIZED
            );
        }
        // A valid token is never locked out by another process's failures ...
        assert_eq!(
            send(&app, Method::GET, "/api/stats", Some(&admin), None)
                .await
                .0,
            StatusCode::OK
        );
        // ... while the next failure from that client is refused outright.
        let request = Request::builder()
            .uri("/api/stats")
            .header("x-levh-token", "levh_another_guess")
            .body(Body::empty())
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        let retry: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry));
    });
}

#[test]
fn rest_cors_allows_localhost_origins_only() {
    let harness = Harness::new();
    let app = app(&harness, None);
    runtime().block_on(async {
        for (origin, allowed) in [
            ("http://localhost:5173", true),
            ("http://127.0.0.1:7777", true),
            ("https://evil.example", false),
        ] {
            let request = Request::builder()
                .method(Method::OPTIONS)
                .uri("/api/memories")
                .header("origin", origin)
                .header("access-control-request-method", "POST")
                .body(Body::empty())
                .unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            let echoed = response
                .headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(
                echoed.as_deref() == Some(origin),
                allowed,
                "{origin}: {echoed:?}"
            );
        }
    });
}

/// MCP over streamable HTTP, by hand: initialize, then a call in the session.
struct McpSession {
    session: Option<String>,
    token: String,
}

async fn mcp_post(
    app: &Router,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("x-levh-token", token);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    // The answer is JSON or an SSE stream whose data lines hold JSON-RPC messages.
    let value = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .unwrap_or(Value::Null)
    });
    (status, session, value)
}

impl McpSession {
    async fn open(app: &Router, token: &str) -> Self {
        let (status, session, answer) = mcp_post(app, token, None, json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "http-test", "version": "1"}}
        })).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        let this = Self {
            session,
            token: token.to_owned(),
        };
        let (status, _, _) = mcp_post(
            app,
            token,
            this.session.as_deref(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert!(status.is_success(), "{status}");
        this
    }

    async fn call(&self, app: &Router, tool: &str, arguments: Value) -> Value {
        let (status, _, answer) = mcp_post(app, &self.token, self.session.as_deref(), json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}
        })).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        answer["result"].clone()
    }

    async fn read(&self, app: &Router, uri: &str) -> Value {
        let (_, _, answer) = mcp_post(
            app,
            &self.token,
            self.session.as_deref(),
            json!({
                "jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}
            }),
        )
        .await;
        answer
    }
}

#[test]
fn two_workspaces_never_see_each_other_on_rest_feed_or_mcp() {
    let harness = Harness::new();
    let now = harness.levh.now();
    let alpha = harness
        .store
        .create_token(&Workspace::new("alpha").unwrap(), Role::Admin, None, now)
        .unwrap()
        .secret;
    let beta = harness
        .store
        .create_token(&Workspace::new("beta").unwrap(), Role::Admin, None, now)
        .unwrap()
        .secret;
    let beta_viewer = harness
        .store
        .create_token(&Workspace::new("beta").unwrap(), Role::Viewer, None, now)
        .unwrap()
        .secret;
    let state = with_mcp(&harness, levh_mcp::Profile::default());
    let app = levh_http::router(state.clone());
    runtime().block_on(async {
        // The feed: one socket per workspace on a real server on 127.0.0.1:0.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(levh_http::serve(listener, state, std::future::pending()));
        let connect = |token: String| async move {
            let (socket, _) =
                tokio_tungstenite::connect_async(format!("ws://{address}/api/ws?token={token}"))
                    .await
                    .unwrap();
            socket
        };
        let mut alpha_feed = connect(alpha.clone()).await;
        let mut beta_feed = connect(beta.clone()).await;
        let refused = tokio_tungstenite::connect_async(format!("ws://{address}/api/ws")).await;
        assert!(
            refused.is_err(),
            "a socket without a token is refused when LEVH_TOKEN is set"
        );

        let secret_plan = "Alpha's launch is on Tuesday in Lisbon";
        let (status, stored) = send(
            &app,
            Method::POST,
            "/api/memories",
            Some(&alpha),
            Some(json!({"content": secret_plan, "pin": true})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
        let alpha_id = stored["memory_id"].as_str().unwrap().to_owned();
        let (_, held) = send(
            &app,
            Method::POST,
            "/api/memories",
            Some(&alpha),
            Some(json!({"content": "Alpha's launch is on Tuesday in Lisbon at noon"})),
        )
        .await;
        let alpha_held = held["held_id"].as_str().expect("held").to_owned();
        let (status, _) = send(
            &app,
            Method::POST,
            "/api/memories",
            Some(&beta),
            Some(json!({"content": "Beta ships the mobile app in March"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);

        // The entity index: alpha's person, organization and project, never beta's.
        let (status, ana) = send(
            &app,
            Method::POST,
            "/api/memories",
            Some(&alpha),
            Some(json!({"content": "Ana confirmed the venue by mail from ana@lisbon-labs.pt", "project": "lisbon-launch"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{ana}");
        let (_, alpha_people) = send(&app, Method::GET, "/api/people", Some(&alpha), None).await;
        assert_eq!(alpha_people["people"][0]["emails"][0], "ana@lisbon-labs.pt", "{alpha_people}");
        let ana_entity = alpha_people["people"][0]["id"].as_str().unwrap().to_owned();

        use futures_like::next_text;
        let first_alpha: Value = serde_json::from_str(&next_text(&mut alpha_feed).await).unwrap();
        assert_eq!(
            (
                first_alpha["workspace"].as_str(),
                first_alpha["memory_id"].as_str()
            ),
            (Some("alpha"), Some(alpha_id.as_str()))
        );
        // Beta's first event is its own write: alpha's two were filtered out.
        let first_beta: Value = serde_json::from_str(&next_text(&mut beta_feed).await).unwrap();
        assert_eq!(first_beta["workspace"], "beta", "{first_beta}");
        assert!(!first_beta.to_string().contains(&alpha_id));

        // REST: nothing of alpha's through any route with beta's token.
        let as_beta = |method, uri: String, body| {
            let app = app.clone();
            let beta = beta.clone();
            async move { send(&app, method, &uri, Some(&beta), body).await }
        };
        for uri in [
            format!("/api/memories/{alpha_id}"),
            format!("/api/memories/{alpha_id}/forgetting-curve"),
            format!("/api/memories/{alpha_id}/score-breakdown"),
            format!("/api/memories/held/{alpha_held}"),
        ] {
            assert_eq!(
                as_beta(Method::GET, uri.clone(), None).await.0,
                StatusCode::NOT_FOUND,
                "{uri}"
            );
        }
        for action in ["reinforce", "pin", "unpin", "purge"] {
            assert_eq!(
                as_beta(
                    Method::POST,
                    format!("/api/memories/{alpha_id}/{action}"),
                    None
                )
                .await
                .0,
                StatusCode::NOT_FOUND,
                "{action}"
            );
        }
        assert_eq!(
            as_beta(
                Method::POST,
                format!("/api/memories/held/{alpha_held}/admit"),
                None
            )
            .await
            .0,
            StatusCode::NOT_FOUND
        );
        for uri in [
            format!("/api/entities/{ana_entity}"),
            "/api/entities/ana@lisbon-labs.pt".to_owned(),
            "/api/entities/lisbon-labs.pt".to_owned(),
            format!("/api/timeline?person={ana_entity}"),
        ] {
            assert_eq!(
                as_beta(Method::GET, uri.clone(), None).await.0,
                StatusCode::NOT_FOUND,
                "{uri}"
            );
        }
        assert_eq!(
            as_beta(
                Method::POST,
                "/api/entities/merge".into(),
                Some(json!({"into": ana_entity, "from": "ana@lisbon-labs.pt"}))
            )
            .await
            .0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            as_beta(Method::DELETE, format!("/api/memories/{alpha_id}"), None)
                .await
                .0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            as_beta(
                Method::PATCH,
                format!("/api/memories/{alpha_id}"),
                Some(json!({"importance": 1.0}))
            )
            .await
            .0,
            StatusCode::NOT_FOUND
        );
        for (method, uri, body) in [
            (Method::GET, "/api/memories", None),
            (Method::GET, "/api/export", None),
            (Method::GET, "/api/memories/held", None),
            (Method::GET, "/api/stats", None),
            (Method::GET, "/api/projects", None),
            (Method::GET, "/api/memories/fading", None),
            (Method::GET, "/api/people", None),
            (Method::GET, "/api/organizations", None),
            (Method::GET, "/api/entities", None),
            (Method::GET, "/api/graph", None),
            (Method::GET, "/api/timeline?range=last%2030%20days", None),
            (Method::GET, "/api/commitments", None),
            (Method::GET, "/api/decisions", None),
            (Method::POST, "/api/entities/reindex", None),
            (
                Method::POST,
                "/api/search",
                Some(json!({"query": "launch Tuesday Lisbon"})),
            ),
            (
                Method::POST,
                "/api/recall",
                Some(json!({"query": "launch Tuesday Lisbon"})),
            ),
        ] {
            let (status, body) = as_beta(method, uri.into(), body).await;
            assert_eq!(status, StatusCode::OK, "{uri}");
            let text = body.to_string();
            assert!(
                !text.contains(&alpha_id) && !text.to_lowercase().contains("lisbon"),
                "{uri} leaked: {text}"
            );
        }
        let (_, alpha_sees) = send(
            &app,
            Method::POST,
            "/api/search",
            Some(&alpha),
            Some(json!({"query": "launch Tuesday Lisbon"})),
        )
        .await;
        assert_eq!(alpha_sees["results"][0]["id"], alpha_id.as_str());

        // MCP over HTTP: the session's workspace is the token's.
        let beta_mcp = McpSession::open(&app, &beta).await;
        for (tool, arguments) in [
            ("search_memory", json!({"query": "launch Tuesday Lisbon"})),
            ("recall_memory", json!({"query": "launch Tuesday Lisbon"})),
            ("list_memories", json!({})),
            ("get_context", json!({})),
            ("list_people", json!({})),
            ("list_organizations", json!({})),
            ("list_entities", json!({})),
            ("entity_graph", json!({})),
            ("timeline", json!({"range": "last 30 days"})),
            ("about_entity", json!({"entity": ana_entity})),
        ] {
            let result = beta_mcp.call(&app, tool, arguments).await;
            let text = result.to_string();
            assert!(
                !text.contains(&alpha_id) && !text.to_lowercase().contains("lisbon"),
                "{tool} leaked: {text}"
            );
        }
        let result = beta_mcp
            .call(&app, "pin_memory", json!({"id": alpha_id}))
            .await;
        assert_eq!(result["isError"], true, "{result}");
        let read = beta_mcp
            .read(&app, &format!("levh://memory/{alpha_id}"))
            .await;
        assert!(
            read["error"].is_object() && !read.to_string().contains("Lisbon"),
            "{read}"
        );
        let alpha_mcp = McpSession::open(&app, &alpha).await;
        let found = alpha_mcp
            .call(
                &app,
                "search_memory",
                json!({"query": "launch Tuesday Lisbon"}),
            )
            .await;
        assert!(found.to_string().contains(&alpha_id), "{found}");
        // A viewer's MCP session cannot write.
        let viewer_mcp = McpSession::open(&app, &beta_viewer).await;
        let refused = viewer_mcp
            .call(
                &app,
                "store_memory",
                json!({"content": "A viewer trying to write a memory"}),
            )
            .await;
        assert_eq!(refused["isError"], true);
        assert!(
            refused.to_string().contains("needs role editor"),
            "{refused}"
        );
        // A stolen session id does not carry its owner's workspace: scope is per request.
        let hijack = McpSession {
            session: alpha_mcp.session.clone(),
            token: beta.clone(),
        };
        let result = hijack
            .call(
                &app,
                "search_memory",
                json!({"query": "launch Tuesday Lisbon"}),
            )
            .await;
        assert!(!result.to_string().contains(&alpha_id), "{result}");
        // Without a token, /mcp is closed too.
        let (status, _, _) = mcp_post(
            &app,
            "wrong-token",
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        server.abort();
    });
}

/// Reading the next text frame of a socket, with a deadline.
pub(crate) mod futures_like {
    use std::time::Duration;

    use futures_util::StreamExt;
    use levh_mcp::tokio;
    use tokio_tungstenite::tungstenite::Message;

    pub async fn next_text<S>(socket: &mut tokio_tungstenite::WebSocketStream<S>) -> String
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let read = async {
            loop {
                match socket.next().await {
                    Some(Ok(Message::Text(text))) => return text.to_string(),
                    Some(Ok(_)) => continue,
                    other => panic!("feed closed: {other:?}"),
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("no feed event within 10 s")
    }
}

#[test]
fn serve_feed_receives_a_write_from_a_separate_capture_process() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve(home.path());
    runtime().block_on(async {
        let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/api/ws"))
            .await
            .unwrap();
        let output = ok(levh(home.path()).args([
            "capture",
            "--json",
            "The release train leaves every second Thursday",
        ]));
        let captured: Value = serde_json::from_slice(&output.stdout).unwrap();
        let event: Value =
            serde_json::from_str(&futures_like::next_text(&mut socket).await).unwrap();
        assert_eq!(event["kind"], "store", "{event}");
        assert_eq!(event["surface"], "cli");
        assert_eq!(
            event["memory_id"], captured["memory_id"],
            "{event} vs {captured}"
        );
        assert!(
            !event.to_string().contains("release train"),
            "events carry ids, never content"
        );
        // A feed opened later starts with the recent history — that same event, once —
        // and then live events, each once.
        let (mut late, _) = tokio_tungstenite::connect_async(format!("ws://{address}/api/ws"))
            .await
            .unwrap();
        let first: Value = serde_json::from_str(&futures_like::next_text(&mut late).await).unwrap();
        assert_eq!(first["seq"], event["seq"], "{first}");
        assert_eq!(first["memory_id"], captured["memory_id"]);
        let output = ok(levh(home.path()).args([
            "capture",
            "--json",
            "The freeze before a release train starts on Tuesday",
        ]));
        let second: Value = serde_json::from_slice(&output.stdout).unwrap();
        let next: Value = serde_json::from_str(&futures_like::next_text(&mut late).await).unwrap();
        assert_eq!(next["memory_id"], second["memory_id"], "{next}");
        assert!(next["seq"].as_i64() > first["seq"].as_i64());
    });
    // Graceful shutdown on SIGTERM: exits 0.
    let pid = server.id().to_string();
    ok(std::process::Command::new("kill").args(["-TERM", &pid]));
    let status = wait_with_deadline(&mut server, Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

/// Presence over the live feed: an agent's `levh mcp stdio` (another process) that
/// connects is announced on a `levh serve`'s feed and listed by `GET /api/presence` as
/// connected, with its client and project; one killed without a word is listed as gone
/// (its process is), and one that closes says it ended.
#[test]
fn serve_presence_shows_mcp_stdio_sessions_connected_killed_and_closed() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve(home.path());
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let presence = || -> Value {
        agent
            .get(format!("http://{address}/api/presence"))
            .call()
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap()
    };
    let session_of = |view: &Value, client: &str| -> Option<Value> {
        view["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["client"] == client)
            .cloned()
    };
    // Presence is written off the agent's request path: wait until it shows.
    let until = |what: &dyn Fn(&Value) -> bool| -> Value {
        let start = std::time::Instant::now();
        loop {
            let view = presence();
            if what(&view) {
                return view;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "presence never showed it: {view}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    runtime().block_on(async {
        let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/api/ws"))
            .await
            .unwrap();
        let (cursor, _cursor_process) =
            crate::mcp::spawn_stdio_with(home.path(), "cursor", &[]).await;
        let (claude, mut claude_process) =
            crate::mcp::spawn_stdio_with(home.path(), "claude-code", &[]).await;
        let started: Value =
            serde_json::from_str(&futures_like::next_text(&mut socket).await).unwrap();
        assert_eq!(started["kind"], "session-start", "{started}");
        assert_eq!(started["surface"], "mcp", "{started}");
        let recalled = cursor
            .call_tool(
                levh_mcp::rmcp::model::CallToolRequestParams::new("recall_memory").with_arguments(
                    json!({"query": "release train", "project": "atlas"})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .unwrap();
        assert_ne!(recalled.is_error, Some(true), "{recalled:?}");
        let view = until(&|view| {
            session_of(view, "cursor").is_some_and(|s| s["project"] == "atlas")
                && session_of(view, "claude-code").is_some()
        });
        assert_eq!(view["connected"], 2, "{view}");
        let cursor_now = session_of(&view, "cursor").unwrap();
        assert_eq!(
            (
                cursor_now["connected"].as_bool(),
                cursor_now["transport"].as_str(),
                cursor_now["calls"].as_u64()
            ),
            (Some(true), Some("stdio"), Some(1)),
            "{cursor_now}"
        );
        // Killed: no word from it, its process is gone.
        claude_process.start_kill().unwrap();
        claude_process.wait().await.unwrap();
        drop(claude);
        let view =
            until(&|view| session_of(view, "claude-code").is_some_and(|s| s["connected"] == false));
        assert_eq!(view["connected"], 1, "{view}");
        assert!(session_of(&view, "claude-code").unwrap()["ended_at"].is_string());
        // Closed: it says it ended, and the feed says so too.
        cursor.cancel().await.unwrap();
        let view =
            until(&|view| session_of(view, "cursor").is_some_and(|s| s["connected"] == false));
        assert_eq!(view["connected"], 0, "{view}");
        let ended = loop {
            let event: Value =
                serde_json::from_str(&futures_like::next_text(&mut socket).await).unwrap();
            if event["kind"] == "session-end" {
                break event;
            }
        };
        assert_eq!(ended["client"], "cursor", "{ended}");
        assert_eq!(ended["detail"]["calls"], 1, "{ended}");
    });
    // Bad report arguments are named.
    let lenient: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    for (query, named) in [
        ("/api/reports/usage?limit=5", "the recall report's"),
        ("/api/reports/recalls?limit=0", "invalid limit: 0"),
        (
            "/api/reports/recalls?since=yesterday",
            "invalid since: 'yesterday'",
        ),
        ("/api/reports/usage?token=nope", "no token 'nope'"),
    ] {
        let mut answer = lenient
            .get(format!("http://{address}{query}"))
            .call()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 400, "{query}");
        let body: Value = answer.body_mut().read_json().unwrap();
        assert!(
            body["error"].as_str().unwrap().contains(named),
            "{query}: {body}"
        );
    }
    server.kill().unwrap();
    server.wait().unwrap();
}

fn wait_with_deadline(
    child: &mut std::process::Child,
    deadline: Duration,
) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < deadline, "levh serve did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_refuses_a_public_address_without_a_token() {
    let home = tempfile::tempdir().unwrap();
    let output = levh(home.path())
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0") && stderr.contains("LEVH_TOKEN"),
        "{stderr}"
    );
    assert!(
        !home.path().join("levh.db").exists(),
        "refused before opening anything"
    );
    let output = levh(home.path())
        .env("LEVH_TOKEN", "short")
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("too short"));
}

#[test]
fn token_cli_creates_lists_and_revokes_without_showing_secrets_again() {
    let home = tempfile::tempdir().unwrap();
    let created: Value = serde_json::from_slice(
        &ok(levh(home.path()).args([
            "token",
            "create",
            "--workspace",
            "team",
            "--role",
            "editor",
            "--label",
            "ci",
            "--json",
        ]))
        .stdout,
    )
    .unwrap();
    let secret = created["secret"].as_str().unwrap();
    assert_eq!(
        (created["workspace"].as_str(), created["role"].as_str()),
        (Some("team"), Some("editor"))
    );
    let listed =
        String::from_utf8(ok(levh(home.path()).args(["token", "list", "--json"])).stdout).unwrap();
    assert!(listed.contains(created["id"].as_str().unwrap()) && !listed.contains(secret));
    let bad = levh(home.path())
        .args(["token", "create", "--role", "owner"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("viewer, editor or admin"));
    ok(levh(home.path()).args(["token", "revoke", created["id"].as_str().unwrap()]));
    let again = levh(home.path())
        .args(["token", "revoke", created["id"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        !again.status.success() && String::from_utf8_lossy(&again.stderr).contains("no live token")
    );
}

#[test]
fn openapi_document_validates_and_lists_every_route_of_the_router() {
    let document = levh_http::openapi_document();
    let text = document.to_string();
    oas3::from_json(&text).expect("a valid OpenAPI 3.1 document");
    // Every $ref points at a schema the document defines.
    let schemas = document["components"]["schemas"].as_object().unwrap();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let target = reference.split('"').next().unwrap();
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target}"));
        assert!(schemas.contains_key(name), "dangling {target}");
    }
    let mut documented = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            assert!(
                operation["responses"]
                    .as_object()
                    .is_some_and(|r| !r.is_empty()),
                "{method} {path}"
            );
            documented.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    let expected: BTreeSet<String> = [
        "GET /api/health",
        "GET /api/openapi.json",
        "GET /api/ws",
        "POST /api/memories",
        "POST /api/memories:batch",
        "POST /api/memories:move",
        "POST /api/memories:upsert",
        "GET /api/memories:get",
        "POST /api/mistakes",
        "GET /api/mistakes",
        "POST /api/check-action",
        "POST /api/checkpoints",
        "GET /api/continue",
        "POST /api/goals",
        "POST /api/goals:update",
        "GET /api/goals",
        "GET /api/memories",
        "GET /api/memories/{id}/entities",
        "GET /api/agents",
        "GET /api/reports/recalls",
        "GET /api/reports/usage",
        "GET /api/presence",
        "GET /api/memories/fading",
        "GET /api/memories/{id}",
        "PATCH /api/memories/{id}",
        "DELETE /api/memories/{id}",
        "GET /api/memories/{id}/forgetting-curve",
        "GET /api/memories/{id}/score-breakdown",
        "POST /api/memories/{id}/reinforce",
        "POST /api/memories/{id}/review",
        "POST /api/memories/{id}/pin",
        "POST /api/memories/{id}/unpin",
        "POST /api/memories/{id}/feedback",
        "POST /api/memories/{id}/purge",
        "GET /api/memories/held",
        "GET /api/memories/held/{id}",
        "POST /api/memories/held/{id}/admit",
        "POST /api/memories/held/{id}/discard",
        "POST /api/memories/evaluate-admission",
        "GET /api/memories/audit-secrets",
        "POST /api/memories/redact-all",
        "POST /api/recall",
        "POST /api/search",
        "GET /api/stats",
        "GET /api/projects",
        "GET /api/review",
        "GET /api/sources",
        "GET /api/export",
        "GET /api/share/bundle",
        "GET /api/sessions",
        "POST /api/sessions",
        "POST /api/sessions/{id}/end",
        "POST /api/sessions/{id}/summarize",
        "POST /api/consolidations",
        "POST /api/consolidations/{id}/undo",
        "GET /api/memories/{id}/consolidated",
        "POST /api/memories/{id}/attachments",
        "GET /api/memories/{id}/attachments",
        "GET /api/memories/{id}/related",
        "GET /api/context",
        "GET /api/connectors",
        "GET /api/connectors/sync-state",
        "GET /api/connectors/{id}",
        "POST /api/connectors/{id}/sync",
        "GET /api/memories/{id}/history",
        "GET /api/settings",
        "GET /api/tokens",
        "POST /api/tokens",
        "DELETE /api/tokens/{id}",
        "POST /api/connectors/{id}/grants",
        "POST /api/connectors/{id}/revoke",
        "GET /api/decisions",
        "POST /api/commitments/{id}/done",
        "GET /api/timeline",
        "GET /api/people",
        "GET /api/organizations",
        "GET /api/entities",
        "GET /api/entities/{entity}",
        "GET /api/graph",
        "POST /api/entities/merge",
        "POST /api/entities/reindex",
        "GET /api/commitments",
        "POST /api/ask",
        "GET /api/briefing",
        "GET /api/meeting-prep",
        "GET /api/memories/{id}/trust",
        "GET /api/conflicts",
        "POST /api/conflicts/detect",
        "POST /api/conflicts/{id}/resolve",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(documented, expected);

    // And every documented operation is routed: the router answers it with something
    // other than "no such route" (an empty 404) or 405.
    let harness = Harness::new();
    let app = app(&harness, None);
    runtime().block_on(async {
        for operation in &documented {
            let (method, path) = operation.split_once(' ').unwrap();
            let uri = path.replace("{id}", MISSING);
            let (status, body) = send(&app, method.parse().unwrap(), &uri, None, None).await;
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{operation}");
            // An unknown path answers a JSON 404 "no route ..." (and once answered empty).
            let unrouted = status == StatusCode::NOT_FOUND
                && (body.is_null()
                    || body["error"]
                        .as_str()
                        .is_some_and(|e| e.starts_with("no route")));
            assert!(!unrouted, "{operation} is not routed");
        }
    });
}

#[test]
fn rest_search_takes_min_similarity_and_names_it_when_out_of_range() {
    runtime().block_on(async {
        let harness = Harness::new();
        harness.capture("prekubernetes and postkubernetes tooling");
        let app = app(&harness, None);
        let (status, loose) = post(
            &app,
            "/api/search",
            json!({"query": "kubernetes", "min_similarity": 0.0}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{loose}");
        assert_eq!(loose["results"].as_array().unwrap().len(), 1, "{loose}");
        assert!(loose["results"][0]["relevance"].as_f64().unwrap() > 0.0);
        let (_, strict) = post(
            &app,
            "/api/search",
            json!({"query": "kubernetes", "min_similarity": 0.99}),
        )
        .await;
        assert_eq!(strict["results"], json!([]), "{strict}");
        let (status, body) = post(
            &app,
            "/api/recall",
            json!({"query": "kubernetes", "min_similarity": 1.5}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("min_similarity"), "{body}");
    });
}

/// `levh serve --port 0` in `home`; the child and the address it printed.
fn serve(home: &std::path::Path) -> (std::process::Child, String) {
    crate::support::serve(home, &[])
}

#[test]
fn a_denied_sync_over_rest_is_403_naming_the_grant_command() {
    let home = tempfile::tempdir().unwrap();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("plan.txt"),
        "The migration runs on Saturday night",
    )
    .unwrap();
    let (mut server, address) = serve(home.path());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let sync = || {
        let mut response = agent
            .post(format!("http://{address}/api/connectors/local_files/sync"))
            .send_json(json!({"config": {"directory": notes.path()}}))
            .unwrap();
        let status = response.status().as_u16();
        let body: Value = response.body_mut().read_json().unwrap();
        (status, body)
    };
    let (status, body) = sync();
    assert_eq!(status, 403, "{body}");
    let text = error_text(&body);
    assert!(
        text.contains("denied") && text.contains("levh connector grant local_files"),
        "{text}"
    );
    // A person grants it; the same request now syncs.
    ok(levh(home.path())
        .args(["connector", "grant", "local_files"])
        .arg(notes.path()));
    let (status, body) = sync();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["admitted"], 1, "{body}");
    let _ = server.kill();
    let _ = server.wait();
}

/// Who may call what is decided once, in levh-api's operation table: every REST route and
/// every MCP tool serves an operation of it, together they serve all of it, and a viewer
/// token is refused by both surfaces exactly where the table asks for more than a viewer.
#[test]
fn rest_and_mcp_enforce_the_one_operation_table() {
    use levh_api::Operation;

    let routes = levh_http::route_operations();
    let tools: Vec<(String, Operation)> = levh_mcp::LevhMcp::all_tools()
        .iter()
        .map(|tool| {
            let operation = levh_mcp::tools::operation_of(&tool.name)
                .unwrap_or_else(|| panic!("tool {} has no operation", tool.name));
            (tool.name.to_string(), operation)
        })
        .collect();
    let served: BTreeSet<Operation> = routes
        .iter()
        .map(|(_, _, op)| *op)
        .chain(tools.iter().map(|(_, op)| *op))
        .collect();
    let all: BTreeSet<Operation> = Operation::ALL.iter().copied().collect();
    assert_eq!(
        served, all,
        "an operation no surface serves, or one missing from ALL"
    );
    for (name, operation) in &tools {
        assert_eq!(levh_mcp::required_role(name), operation.role(), "{name}");
    }

    let harness = Harness::new();
    let now = harness.levh.now();
    let viewer = harness
        .store
        .create_token(&Workspace::default(), Role::Viewer, None, now)
        .unwrap()
        .secret;
    let app = levh_http::router(with_mcp(&harness, levh_mcp::Profile::Full));
    runtime().block_on(async {
        for (method, path, operation) in &routes {
            let uri = path.replace("{id}", MISSING);
            let (status, body) = send(
                &app,
                method.parse().unwrap(),
                &uri,
                Some(&viewer),
                (method != "GET").then(|| json!({})),
            )
            .await;
            let refused =
                status == StatusCode::FORBIDDEN && error_text(&body).contains("this needs role");
            assert_eq!(
                refused,
                operation.role() > Role::Viewer,
                "{method} {path} ({operation}, {}): {status} {body}",
                operation.role()
            );
        }
        let session = McpSession::open(&app, &viewer).await;
        for (name, operation) in &tools {
            let result = session.call(&app, name, json!({})).await;
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            let refused = result["isError"] == true && text.contains("needs role");
            assert_eq!(
                refused,
                operation.role() > Role::Viewer,
                "{name} ({operation}, {}): {result}",
                operation.role()
            );
        }
    });
}

/// The session-start context and related memories, which only MCP had, answer over REST
/// too, from the same operations.
#[test]
fn rest_serves_the_context_and_related_memories() {
    let harness = Harness::new();
    let app = app(&harness, None);
    runtime().block_on(async {
        let (_, rule) = post(&app, "/api/memories", json!({"content": "Always run the migrations before deploying", "pin": true})).await;
        let (_, first) = post(&app, "/api/memories", json!({"content": "The staging database runs PostgreSQL on host db-staging", "project": "infra"})).await;
        let (status, second) = post(&app, "/api/memories", json!({"content": "The on-call pager for the database team rotates every Monday", "project": "infra"})).await;
        assert_eq!(status, StatusCode::CREATED, "{second}");
        let (status, context) = get(&app, "/api/context?project=infra&max_tokens=200").await;
        assert_eq!(status, StatusCode::OK, "{context}");
        assert_eq!(context["pinned"][0]["id"], rule["memory_id"], "{context}");
        assert!(context["text"].as_str().unwrap().contains("Always run the migrations"), "{context}");
        assert_eq!(context["essentials"].as_array().unwrap().len(), 2, "{context}");
        let (status, body) = get(&app, "/api/context?max_tokens=0").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error_text(&body).contains("max_tokens"), "{body}");

        let id = first["memory_id"].as_str().unwrap();
        let (status, related) = get(&app, &format!("/api/memories/{id}/related?limit=1")).await;
        assert_eq!(status, StatusCode::OK, "{related}");
        assert_eq!(related["memory_id"], id);
        let related = related["related"].as_array().unwrap();
        assert_eq!(related.len(), 1);
        assert!([&rule["memory_id"], &second["memory_id"]].contains(&&related[0]["id"]), "{related:?}");
        let (status, _) = get(&app, &format!("/api/memories/{MISSING}/related")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    });
}

/// No token and Basic auth are failed attempts too: they count towards the limit.
#[test]
fn rest_counts_missing_and_basic_credentials_as_failures() {
    let harness = Harness::new();
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        for attempt in 0..levh_http::auth::MAX_FAILURES {
            let request = Request::builder().uri("/api/stats");
            let request = if attempt % 2 == 0 {
                request
            } else {
                request.header("authorization", "Basic b3BlcmF0b3I6Z3Vlc3M=")
            };
            let response = app
                .clone()
                .oneshot(request.body(Body::empty()).unwrap())
                .await
                .unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "attempt {attempt}"
            );
        }
        let (status, _) = send(&app, Method::GET, "/api/stats", None, None).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        let (status, _) = send(&app, Method::GET, "/api/stats", Some(OPERATOR), None).await;
        assert_eq!(status, StatusCode::OK, "the operator token still works");
    });
}

/// One request with headers as a browser would send them; returns status and body.
async fn browser(
    app: &Router,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// What any web page could make the user's browser do to the default server (loopback,
/// no token) is refused: reading through a rebinding DNS name, "simple" cross-site
/// writes, a foreign page opening the live feed.
#[test]
fn rest_refuses_dns_rebinding_cross_site_writes_and_foreign_feed_origins() {
    let harness = Harness::new();
    harness.capture("The main database is PostgreSQL 16 on host db-main");
    let app = app(&harness, None);
    runtime().block_on(async {
        // 1. Host: loopback names (any port) are served; a rebinding name is not.
        for host in [
            "localhost:7777",
            "127.0.0.1:7777",
            "[::1]:7777",
            "localhost",
        ] {
            let (status, body) =
                browser(&app, Method::GET, "/api/export", &[("host", host)], "").await;
            assert_eq!(status, StatusCode::OK, "{host}: {body}");
        }
        for uri in ["/api/export", "/api/ws", "/mcp", "/api/health"] {
            let (status, body) =
                browser(&app, Method::GET, uri, &[("host", "evil.example:7777")], "").await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{uri}: {body}");
            assert!(error_text(&body).contains("evil.example"), "{body}");
        }
        // 2. Simple cross-site writes (no preflight) are refused and change nothing.
        let before = count(&harness);
        let (status, body) = browser(
            &app,
            Method::POST,
            "/api/sessions",
            &[("content-type", "text/plain")],
            "{}",
        )
        .await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        assert!(error_text(&body).contains("application/json"), "{body}");
        let form = [("content-type", "application/x-www-form-urlencoded")];
        let (status, _) =
            browser(&app, Method::POST, "/api/memories/redact-all", &form, "a=b").await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let (status, _) = browser(
            &app,
            Method::POST,
            "/api/memories",
            &form,
            "content=Deploys+happen+on+Fridays",
        )
        .await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let (status, _) = browser(
            &app,
            Method::POST,
            "/api/connectors/local_files/sync",
            &[],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(count(&harness), before);
        // JSON from a foreign origin is refused; from a local page, or with no Origin, it works.
        let json_from =
            |origin: &'static str| [("content-type", "application/json"), ("origin", origin)];
        let (status, body) = browser(
            &app,
            Method::POST,
            "/api/memories",
            &json_from("https://evil.example"),
            r#"{"content": "Deploys happen on Fridays after the standup"}"#,
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(error_text(&body).contains("evil.example"), "{body}");
        assert_eq!(count(&harness), before);
        let (status, body) = browser(
            &app,
            Method::POST,
            "/api/memories",
            &json_from("http://localhost:5173"),
            r#"{"content": "Deploys happen on Fridays after the standup"}"#,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = browser(
            &app,
            Method::POST,
            "/api/sessions",
            &[("content-type", "application/json")],
            "",
        )
        .await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "an empty JSON body is fine: {body}"
        );
        let (status, body) = browser(
            &app,
            Method::DELETE,
            &format!("/api/memories/{MISSING}"),
            &[("origin", "https://evil.example")],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        // 3. The feed: a foreign page may not open it.
        let upgrade = |origin: &'static str| {
            [
                ("origin", origin),
                ("connection", "upgrade"),
                ("upgrade", "websocket"),
                ("sec-websocket-version", "13"),
                ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ]
        };
        let (status, body) = browser(
            &app,
            Method::GET,
            "/api/ws",
            &upgrade("https://evil.example"),
            "",
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        let (status, _) = browser(
            &app,
            Method::GET,
            "/api/ws",
            &upgrade("http://localhost:5173"),
            "",
        )
        .await;
        assert_ne!(status, StatusCode::FORBIDDEN);
    });
    // LEVH_ALLOWED_HOSTS adds names; others stay refused.
    let app = levh_http::router(AppState::new(
        harness.levh.clone(),
        harness.store.clone(),
        AuthConfig {
            allowed_hosts: vec!["memory.lan".into()],
            ..AuthConfig::default()
        },
    ));
    runtime().block_on(async {
        let (status, _) = browser(
            &app,
            Method::GET,
            "/api/export",
            &[("host", "memory.lan:7777")],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = browser(
            &app,
            Method::GET,
            "/api/export",
            &[("host", "evil.example")],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    });
}

/// Bad requests that once got a 500, an empty body or a wrong answer get a 400 (or 404,
/// 405) naming what was wrong.
#[test]
fn rest_names_what_was_wrong_instead_of_failing_or_guessing() {
    let harness = Harness::new();
    let app = app(&harness, None);
    runtime().block_on(async {
        let (status, body) = post(&app, "/api/memories", json!({"content": "Deploys happen on Fridays after the standup", "session_id": "no-such-session"})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_text(&body).contains("session_id"), "{body}");
        assert_eq!(count(&harness), 0);
        let (status, body) = get(&app, "/api/memories?offset=18446744073709551615").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_text(&body).contains("offset"), "{body}");
        let (status, body) = get(&app, "/api/no-such-thing").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(error_text(&body).contains("/api/no-such-thing"), "{body}");
        let (status, body) = send(&app, Method::PATCH, "/api/stats", None, Some(json!({}))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert!(error_text(&body).contains("PATCH"), "{body}");
        let (status, body) = post(&app, "/api/search", json!({"query": "deploys", "known_at": "9999-12-31T23:59:59Z"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // Nothing visible is not a memory, on any surface; NULs inside text are dropped.
        for content in ["\u{200B}\u{200B}\u{200B}\u{200B}", "\u{0}\u{0}\u{0}\u{0}", "\u{FEFF} \u{2060} "] {
            let (status, body) = post(&app, "/api/memories", json!({"content": content})).await;
            assert_eq!((status, body["verdict"].as_str()), (StatusCode::OK, Some("reject")), "{content:?}: {body}");
            assert!(body["reason"].as_str().unwrap().starts_with("empty"), "{body}");
        }
        assert_eq!(count(&harness), 0);
        let (status, body) = post(&app, "/api/memories", json!({"content": "Deploys\u{0} happen on Fridays after the standup"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let id = body["memory_id"].as_str().unwrap();
        let (_, memory) = get(&app, &format!("/api/memories/{id}")).await;
        assert_eq!(memory["content"], "Deploys happen on Fridays after the standup");
    });
}

/// A memory's page shows what happened to it: its events from the log, newest first, with
/// the surface and the content-free detail, inside the caller's workspace only.
#[test]
fn rest_shows_a_memorys_history_from_the_event_log() {
    let harness = Harness::new();
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        let call = |method: Method, uri: String, body: Option<Value>| {
            let app = app.clone();
            async move { send(&app, method, &uri, Some(OPERATOR), body).await }
        };
        let (status, created) = call(
            Method::POST,
            "/api/memories".into(),
            Some(json!({"content": "The atlas release train leaves every second Tuesday"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let id = created["memory_id"].as_str().unwrap().to_owned();
        let uri = format!("/api/memories/{id}");
        for action in ["reinforce", "pin"] {
            assert_eq!(
                call(Method::POST, format!("{uri}/{action}"), Some(json!({})))
                    .await
                    .0,
                StatusCode::OK
            );
        }
        let (status, _) = call(Method::PATCH, uri.clone(), Some(json!({"importance": 0.8}))).await;
        assert_eq!(status, StatusCode::OK);

        let (status, history) = call(Method::GET, format!("{uri}/history"), None).await;
        assert_eq!(status, StatusCode::OK, "{history}");
        assert_eq!(history["memory_id"], id.as_str());
        let kinds: Vec<&str> = history["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["importance", "pin", "reinforce", "store"],
            "{history}"
        );
        let seqs: Vec<i64> = history["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["seq"].as_i64().unwrap())
            .collect();
        assert!(
            seqs.windows(2).all(|w| w[0] > w[1]),
            "newest first: {seqs:?}"
        );
        for event in history["events"].as_array().unwrap() {
            assert_eq!(event["surface"], "http", "{event}");
            assert!(event["detail"].is_object(), "{event}");
            assert!(
                !event.to_string().contains("release train"),
                "no content in the history: {event}"
            );
        }
        let (_, one) = call(Method::GET, format!("{uri}/history?limit=1"), None).await;
        assert_eq!(one["events"].as_array().unwrap().len(), 1);
        assert_eq!(one["events"][0]["kind"], "importance");

        for (bad, status) in [
            (format!("{uri}/history?limit=0"), StatusCode::BAD_REQUEST),
            (format!("{uri}/history?color=red"), StatusCode::BAD_REQUEST),
            (
                "/api/memories/nope/history".to_owned(),
                StatusCode::BAD_REQUEST,
            ),
            (
                format!("/api/memories/{MISSING}/history"),
                StatusCode::NOT_FOUND,
            ),
        ] {
            let (got, body) = call(Method::GET, bad.clone(), None).await;
            assert_eq!(got, status, "{bad}: {body}");
        }

        // Another workspace's admin finds no such memory, and so no history.
        let other = harness
            .store
            .create_token(
                &Workspace::new("other").unwrap(),
                Role::Admin,
                None,
                harness.levh.now(),
            )
            .unwrap()
            .secret;
        let (status, body) = send(
            &app,
            Method::GET,
            &format!("{uri}/history"),
            Some(&other),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    });
}

/// An admin manages the workspace's tokens over REST, as the Settings page does: the secret
/// is in the creating answer only, the token works at once and stops at revocation, and
/// another workspace's tokens are neither listed nor revocable. Settings name the store,
/// the embedder and a configuration per MCP client.
#[test]
fn rest_issues_lists_and_revokes_the_workspaces_tokens_and_shows_the_settings() {
    let harness = Harness::new();
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        let admin = |method: Method, uri: &str, body: Option<Value>| {
            let (app, uri) = (app.clone(), uri.to_owned());
            async move { send(&app, method, &uri, Some(OPERATOR), body).await }
        };
        let (status, issued) = admin(
            Method::POST,
            "/api/tokens",
            Some(json!({"role": "viewer", "label": "grafana password=hunter2secret"})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{issued}");
        let secret = issued["secret"].as_str().unwrap().to_owned();
        let id = issued["id"].as_str().unwrap().to_owned();
        assert!(
            secret.starts_with("levh_") && id.starts_with("tok_"),
            "{issued}"
        );
        assert_eq!(
            (issued["role"].as_str(), issued["workspace"].as_str()),
            (Some("viewer"), Some("default"))
        );
        assert!(
            !issued["label"].as_str().unwrap().contains("hunter2secret"),
            "a label is redacted: {issued}"
        );

        // The secret works at once, as the role it was issued with.
        let (status, health) = send(&app, Method::GET, "/api/health", Some(&secret), None).await;
        assert_eq!(
            (status, health["role"].as_str()),
            (StatusCode::OK, Some("viewer")),
            "{health}"
        );
        let (status, body) = send(&app, Method::GET, "/api/tokens", Some(&secret), None).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "a viewer does not see tokens: {body}"
        );
        let (status, body) = send(
            &app,
            Method::POST,
            "/api/tokens",
            Some(&secret),
            Some(json!({"role": "admin"})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "nor issue one: {body}");

        // Another workspace's token is not listed and cannot be revoked from here.
        let foreign = harness
            .store
            .create_token(
                &Workspace::new("other").unwrap(),
                Role::Admin,
                Some("theirs"),
                harness.levh.now(),
            )
            .unwrap();
        let (status, list) = admin(Method::GET, "/api/tokens", None).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        let ids: Vec<&str> = list["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [id.as_str()], "{list}");
        assert!(
            !list.to_string().contains(&secret) && list["tokens"][0].get("secret").is_none(),
            "{list}"
        );
        let (status, body) = admin(
            Method::DELETE,
            &format!("/api/tokens/{}", foreign.info.id),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, _) = send(
            &app,
            Method::GET,
            "/api/health",
            Some(&foreign.secret),
            None,
        )
        .await;
        assert_eq!(
            status,
            StatusCode::OK,
            "the other workspace's token still works"
        );

        // Refusals name the field and store nothing.
        for (body, field) in [
            (json!({"role": "owner"}), "role"),
            (json!({"role": "viewer", "label": "x".repeat(201)}), "label"),
            (json!({"role": "viewer", "workspace": "other"}), "workspace"),
            (json!({}), "role"),
        ] {
            let (status, answer) = admin(Method::POST, "/api/tokens", Some(body.clone())).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
            assert!(error_text(&answer).contains(field), "{body}: {answer}");
        }
        assert_eq!(
            admin(Method::GET, "/api/tokens", None).await.1["tokens"]
                .as_array()
                .unwrap()
                .len(),
            1
        );

        // Revoked: it stops working at once, and is listed as revoked.
        let (status, list) = admin(Method::DELETE, &format!("/api/tokens/{id}"), None).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert!(list["tokens"][0]["revoked_at"].is_string(), "{list}");
        assert_eq!(
            send(&app, Method::GET, "/api/health", Some(&secret), None)
                .await
                .0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            admin(Method::DELETE, &format!("/api/tokens/{id}"), None)
                .await
                .0,
            StatusCode::NOT_FOUND
        );

        let (status, settings) = admin(Method::GET, "/api/settings", None).await;
        assert_eq!(status, StatusCode::OK, "{settings}");
        assert_eq!(settings["store"]["journal_mode"], "wal");
        assert_eq!(settings["store"]["full_text_in_step"], true);
        assert_eq!(
            settings["embedder"]["model"],
            harness.levh.embedder().model_id()
        );
        assert_eq!(settings["mcp"]["http_path"], "/mcp");
        let clients: Vec<&str> = settings["mcp"]["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["client"].as_str().unwrap())
            .collect();
        assert_eq!(
            clients,
            [
                "claude",
                "claude_code",
                "cursor",
                "windsurf",
                "vscode",
                "cline"
            ]
        );
        let vscode = &settings["mcp"]["clients"][4]["config"]["servers"]["levh"];
        assert_eq!(
            vscode["args"],
            json!(["mcp", "stdio", "--profile", "work"]),
            "{vscode}"
        );
        // Beside it, the package runner's form (levh installed from PyPI).
        let runner = &settings["mcp"]["clients"][4]["runner_config"]["servers"]["levh"];
        assert_eq!(runner["command"], "uvx", "{runner}");
        assert_eq!(
            runner["args"],
            json!(["levh-rs", "mcp", "stdio", "--profile", "work"]),
            "{runner}"
        );
        // Whole-file facts only: no counts that would span workspaces.
        assert!(settings["store"].get("memories").is_none(), "{settings}");
    });
}

/// Grants are the machine's, not a workspace's: over REST only the operator (or the local
/// person without a token) gives or takes them, as the dashboard's Connectors page does; a
/// workspace's own admin token is refused. What is granted is what a sync may then read.
#[test]
fn rest_grants_and_revokes_a_connectors_directory_for_the_operator_only() {
    let home = tempfile::tempdir().unwrap();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("plan.txt"),
        "The migration runs on Saturday night",
    )
    .unwrap();
    let directory = notes.path().canonicalize().unwrap().display().to_string();
    let (mut server, address) = crate::support::serve(home.path(), &[("LEVH_TOKEN", OPERATOR)]);
    let workspace_admin = crate::support::json(
        levh(home.path()).args(["token", "create", "--role", "admin", "--json"]),
    )["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let call = |token: &str, path: &str, body: Value| {
        let mut response = agent
            .post(format!("http://{address}{path}"))
            .header("Authorization", &format!("Bearer {token}"))
            .send_json(body)
            .unwrap();
        let status = response.status().as_u16();
        (status, response.body_mut().read_json::<Value>().unwrap())
    };
    let sync = || {
        call(
            OPERATOR,
            "/api/connectors/local_files/sync",
            json!({"config": {"directory": directory}}),
        )
    };
    let grant = json!({"directory": directory});

    let (status, body) = call(
        &workspace_admin,
        "/api/connectors/local_files/grants",
        grant.clone(),
    );
    assert_eq!(status, 403, "{body}");
    assert!(error_text(&body).contains("machine's"), "{body}");
    assert_eq!(sync().0, 403, "the refused grant stored nothing");

    for (body, status, words) in [
        (json!({"directory": "notes"}), 400, "absolute"),
        (
            json!({"directory": "/no/such/dir/here"}),
            400,
            "not a directory",
        ),
        (
            json!({"directory": directory, "host": "example.org"}),
            400,
            "exactly one",
        ),
        (json!({}), 400, "exactly one"),
        (json!({"path": directory}), 400, "path"),
    ] {
        let (got, answer) = call(OPERATOR, "/api/connectors/local_files/grants", body.clone());
        assert_eq!(got, status, "{body}: {answer}");
        assert!(error_text(&answer).contains(words), "{body}: {answer}");
    }
    let (status, body) = call(OPERATOR, "/api/connectors/nope/grants", grant.clone());
    assert_eq!(status, 404, "{body}");

    let (status, help) = call(
        OPERATOR,
        "/api/connectors/local_files/grants",
        grant.clone(),
    );
    assert_eq!(status, 200, "{help}");
    assert_eq!(help["granted_paths"], json!([directory]), "{help}");
    let (status, report) = sync();
    assert_eq!(
        (status, report["admitted"].as_u64()),
        (200, Some(1)),
        "{report}"
    );

    let (status, body) = call(
        &workspace_admin,
        "/api/connectors/local_files/revoke",
        grant.clone(),
    );
    assert_eq!(status, 403, "{body}");
    let (status, help) = call(
        OPERATOR,
        "/api/connectors/local_files/revoke",
        grant.clone(),
    );
    assert_eq!(status, 200, "{help}");
    assert_eq!(help["granted_paths"], json!([]), "{help}");
    assert_eq!(sync().0, 403, "revoked: the sync is denied again");
    let (status, body) = call(OPERATOR, "/api/connectors/local_files/revoke", grant);
    assert_eq!(status, 404, "{body}");

    // A host grant, for a connector that asks for one.
    let (status, help) = call(
        OPERATOR,
        "/api/connectors/github/grants",
        json!({"host": "https://api.github.com"}),
    );
    assert_eq!(status, 200, "{help}");
    assert_eq!(
        help["granted_hosts"].as_array().map(Vec::len),
        Some(1),
        "{help}"
    );
    let (status, help) = call(
        OPERATOR,
        "/api/connectors/github/revoke",
        json!({"host": "api.github.com"}),
    );
    assert_eq!(status, 200, "{help}");
    assert_eq!(help["granted_hosts"], json!([]), "{help}");
    let _ = server.kill();
    let _ = server.wait();
}

/// Decisions and commitments read out of stored memories, over REST and MCP from the same
/// operations: the sentence, when and where; a question, someone else's promise or an open
/// choice is neither.
#[test]
fn rest_and_mcp_list_the_decisions_and_commitments_the_memories_state() {
    let harness = Harness::new();
    let app = levh_http::router(with_mcp(&harness, levh_mcp::Profile::Work));
    runtime().block_on(async {
        let store = |content: &str, valid_from: &str| {
            let body = json!({"content": content, "valid_from": valid_from, "project": "atlas"});
            let app = app.clone();
            async move { send(&app, Method::POST, "/api/memories", Some(OPERATOR), Some(body)).await }
        };
        let (status, body) = store("Standup: we decided to move the atlas release to Tuesday. I'll send the changelog by Friday.", "2026-03-04T09:00:00Z").await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = store("Toplantı özeti: ödeme ekranını nisana ertelemeye karar verdik. Raporu yarın göndereceğim.", "2026-03-05T09:00:00Z").await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = store("Will you send the slides? Mei will review the deck. We still need to decide on the venue.", "2026-03-06T09:00:00Z").await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        let (status, decisions) = send(&app, Method::GET, "/api/decisions?project=atlas", Some(OPERATOR), None).await;
        assert_eq!(status, StatusCode::OK, "{decisions}");
        let sentences: Vec<&str> = decisions["decisions"].as_array().unwrap().iter().map(|d| d["sentence"].as_str().unwrap()).collect();
        assert_eq!(sentences, [
            "Toplantı özeti: ödeme ekranını nisana ertelemeye karar verdik.",
            "Standup: we decided to move the atlas release to Tuesday.",
        ], "newest first: {decisions}");
        assert_eq!(decisions["decisions"][1]["at"], "2026-03-04T09:00:00Z");

        let (status, commitments) = send(&app, Method::GET, "/api/commitments", Some(OPERATOR), None).await;
        assert_eq!(status, StatusCode::OK, "{commitments}");
        let found: Vec<(&str, &str)> = commitments["commitments"].as_array().unwrap().iter()
            .map(|c| (c["sentence"].as_str().unwrap(), c["due"].as_str().unwrap_or("-")))
            .collect();
        // 2026-03-04 is a Wednesday: "by Friday" is the 6th; "yarın" written on the 5th is the 6th too.
        assert_eq!(found.len(), 2, "{commitments}");
        assert!(found.contains(&("I'll send the changelog by Friday.", "2026-03-06")), "{commitments}");
        assert!(found.contains(&("Raporu yarın göndereceğim.", "2026-03-06")), "{commitments}");

        let (status, body) = send(&app, Method::GET, "/api/decisions?from=yesterday", Some(OPERATOR), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_text(&body).contains("from"), "{body}");
        let (_, later) = send(&app, Method::GET, "/api/decisions?from=2026-03-05", Some(OPERATOR), None).await;
        assert_eq!(later["decisions"].as_array().unwrap().len(), 1, "{later}");

        // MCP (work profile) answers from the same operations.
        let session = McpSession::open(&app, OPERATOR).await;
        let result = session.call(&app, "list_decisions", json!({"project": "atlas"})).await;
        assert_eq!(result["structuredContent"]["decisions"].as_array().map(Vec::len), Some(2), "{result}");
        let result = session.call(&app, "list_commitments", json!({})).await;
        assert_eq!(result["structuredContent"]["commitments"].as_array().map(Vec::len), Some(2), "{result}");
    });
}

/// `POST /api/memories:batch`: each item its own verdict in order, an invalid item named
/// by its index while the rest are stored, secrets redacted in content and metadata, the
/// editor role required, and a batch too large or too long refused whole.
#[test]
fn rest_batch_gives_each_item_its_verdict_and_refuses_what_is_too_much() {
    let harness = Harness::new();
    let now = harness.levh.now();
    let default = Workspace::default();
    let token = |role| {
        harness
            .store
            .create_token(&default, role, None, now)
            .unwrap()
            .secret
    };
    let (viewer, editor) = (token(Role::Viewer), token(Role::Editor));
    let app = app(&harness, Some(OPERATOR));
    runtime().block_on(async {
        let batch = json!({"memories": [
            {"content": "The payroll export runs on the first Monday of every month."},
            {"content": "The payroll export runs on the first Monday of every month."},
            {"content": "The payroll export runs on the first Tuesday of every month."},
            {"content": "Vendor portal login", "metadata": {"url": "https://ops:s3cretpass@portal.example.com"}},
            {"content": "A date that is no date", "valid_to": "next week"},
        ]});
        let post_as = |token, body| {
            send(
                &app,
                Method::POST,
                "/api/memories:batch",
                Some(token),
                Some(body),
            )
        };
        let (status, body) = post_as(&viewer, batch.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(count(&harness), 0);

        let (status, body) = post_as(&editor, batch).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let verdicts: Vec<&str> = body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["outcome"]["verdict"].as_str().unwrap_or("error"))
            .collect();
        assert_eq!(verdicts, ["admit", "reject", "review", "redact", "error"]);
        let first = body["results"][0]["outcome"]["memory_id"].as_str().unwrap();
        assert_eq!(body["results"][1]["outcome"]["nearest"]["id"], first);
        let error = body["results"][4]["error"].as_str().unwrap();
        assert!(
            error.starts_with("memories[4]: invalid valid_to"),
            "{error}"
        );
        assert_eq!(
            (
                &body["admitted"],
                &body["held"],
                &body["rejected"],
                &body["redacted"],
                &body["failed"]
            ),
            (&json!(1), &json!(1), &json!(1), &json!(1), &json!(1))
        );
        assert_eq!(count(&harness), 2);
        let redacted = body["results"][3]["outcome"]["memory_id"].as_str().unwrap();
        let (_, memory) = send(
            &app,
            Method::GET,
            &format!("/api/memories/{redacted}"),
            Some(&editor),
            None,
        )
        .await;
        assert!(
            !memory["metadata"].to_string().contains("s3cretpass"),
            "{memory}"
        );

        let too_many: Vec<Value> = (0..1001)
            .map(|n| json!({"content": format!("Item number {n} of a batch too large")}))
            .collect();
        let (status, body) = post_as(&editor, json!({"memories": too_many})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_text(&body).contains("1..1000"), "{body}");
        let (status, body) = post_as(&editor, json!({"memories": []})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let long = "word ".repeat(8_000);
        let too_long: Vec<Value> = (0..1000).map(|_| json!({"content": long})).collect();
        let (status, body) = post_as(&editor, json!({"memories": too_long})).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert!(error_text(&body).contains("32 MiB"), "{body}");
        // Every route with its own limit is named (an attachment's is not the 2 MiB).
        assert!(error_text(&body).contains("10 MiB file as base64"), "{body}");
        assert_eq!(count(&harness), 2, "nothing of a refused batch is stored");
    });
}

/// `GET /api/memories?after=ID` pages by keyset: each page starts after the last memory of
/// the one before, newest first, none skipped or repeated; `after` with `offset`, or an
/// id that is not one, is refused naming `after`.
#[test]
fn rest_lists_memories_a_page_at_a_time_after_the_last_one_read() {
    let home = tempfile::tempdir().unwrap();
    for n in 0..5 {
        crate::support::ok(
            levh(home.path()).args(["capture", &crate::support::distinct_sentence(n)]),
        );
    }
    let (mut server, address) = crate::support::serve(home.path(), &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let get = |query: &str| -> (u16, serde_json::Value) {
        let mut response = agent
            .get(format!("http://{address}/api/memories?{query}"))
            .call()
            .unwrap();
        (
            response.status().as_u16(),
            response.body_mut().read_json().unwrap(),
        )
    };
    let ids = |page: &serde_json::Value| -> Vec<String> {
        page["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, all) = get("limit=10");
    let all = ids(&all);
    assert_eq!(all.len(), 5);
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(id) => format!("limit=2&after={id}"),
            None => "limit=2".to_owned(),
        };
        let (status, page) = get(&query);
        assert_eq!(status, 200, "{page}");
        let page = ids(&page);
        if page.is_empty() {
            break;
        }
        after = page.last().cloned();
        paged.extend(page);
    }
    assert_eq!(paged, all, "keyset pages are the list, in order");
    let (status, body) = get(&format!("after={}&offset=1", all[0]));
    assert_eq!(status, 400);
    assert!(body.to_string().contains("after"), "{body}");
    let (status, body) = get("after=not-an-id");
    assert_eq!(status, 400);
    assert!(body.to_string().contains("after"), "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}
