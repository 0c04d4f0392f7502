//! Hardening, tried through the surface where each hole was found: updates judged by the
//! gate (REST, MCP, sync), interference on admission (the CLI, both embedder modes),
//! secrets outside content, future-dated memories read alike on every surface, a store
//! left untouched by a refusal, `levh doctor` on a store it cannot open.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use levh_core::NewMemory;
use levh_mcp::rmcp;
use levh_mcp::tokio;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{Harness, json, levh, ok, runtime, serve};

const T0: &str = "2026-03-02T09:00:00Z";

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// One JSON request to a real server: status and body.
fn request(method: &str, url: &str, body: Option<Value>) -> (u16, Value) {
    let agent = agent();
    let mut response = match (method, body) {
        ("GET", _) => agent.get(url).call().unwrap(),
        ("PATCH", Some(body)) => agent.patch(url).send_json(body).unwrap(),
        ("POST", Some(body)) => agent.post(url).send_json(body).unwrap(),
        ("POST", None) => agent.post(url).send_json(json!({})).unwrap(),
        other => panic!("no request helper for {other:?}"),
    };
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A client on a spawned `levh mcp stdio` with extra environment.
async fn mcp_stdio(
    home: &Path,
    env: &[(&str, &str)],
) -> (
    rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tokio::process::Child,
) {
    let mut command = levh(home);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut command = tokio::process::Command::from(command);
    command
        .args(["mcp", "stdio", "--profile", "full"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let client = ().serve((stdout, stdin)).await.unwrap();
    (client, child)
}

async fn tool(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
    arguments: Value,
) -> Value {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_ne!(result.is_error, Some(true), "{name}: {:?}", result.content);
    result.structured_content.unwrap()
}

fn ids(values: &[Value]) -> BTreeSet<String> {
    values
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Item 5: an update is judged like a capture, against every other memory.

#[test]
fn an_update_over_rest_is_rejected_held_or_applied_by_the_gate_and_a_held_update_admits_in_place() {
    let home = tempfile::tempdir().unwrap();
    let capture = |text: &str| -> String {
        let out = json(
            levh(home.path())
                .env("LEVH_NOW", T0)
                .args(["capture", text, "--json"]),
        );
        assert_eq!(out["verdict"], "admit", "{out}");
        out["memory_id"].as_str().unwrap().to_owned()
    };
    let branch = capture("The deploy branch is main.");
    let other = capture("Deploys happen on Tuesdays after the standup meeting.");
    let (mut server, address) = serve(home.path(), &[("LEVH_NOW", T0)]);
    let url = format!("http://{address}/api/memories/{other}");
    let content_of = |id: &str| {
        request("GET", &format!("http://{address}/api/memories/{id}"), None).1["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // An exact duplicate of another memory: rejected, nothing changes.
    let (status, body) = request(
        "PATCH",
        &url,
        Some(json!({"content": "The deploy branch is main.", "importance": 0.9})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["verdict"], &body["applied"]),
        (&json!("reject"), &json!(false)),
        "{body}"
    );
    assert!(body["reason"].as_str().unwrap().contains(&branch), "{body}");
    assert_eq!(
        content_of(&other),
        "Deploys happen on Tuesdays after the standup meeting."
    );
    assert_eq!(
        body["memory"]["importance"], 0.5,
        "importance waits for the content"
    );

    // Close to another memory: held for a person, naming the memory it would change.
    let (status, body) = request(
        "PATCH",
        &url,
        Some(json!({"content": "The deploy branch is prod."})),
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["verdict"], "review", "{body}");
    let held = body["held_id"].as_str().unwrap().to_owned();
    assert_eq!(
        content_of(&other),
        "Deploys happen on Tuesdays after the standup meeting."
    );
    let (_, queue) = request("GET", &format!("http://{address}/api/memories/held"), None);
    let waiting = &queue["held"][0];
    assert_eq!(
        (&waiting["id"], &waiting["updates"]),
        (&json!(held), &json!(other)),
        "{queue}"
    );
    // The same update again, while the first waits: a duplicate of the waiting one.
    let (_, again) = request(
        "PATCH",
        &url,
        Some(json!({"content": "The deploy branch is prod."})),
    );
    assert_eq!(again["verdict"], "reject", "{again}");
    assert!(again["reason"].as_str().unwrap().contains(&held), "{again}");

    // A person admits it: the memory keeps its id and takes the new content.
    let _ = server.kill();
    let _ = server.wait();
    let admitted = json(
        levh(home.path())
            .env("LEVH_NOW", T0)
            .args(["held", "admit", &held, "--json"]),
    );
    assert_eq!(
        (&admitted["memory_id"], &admitted["updated"]),
        (&json!(other), &json!(true)),
        "{admitted}"
    );
    let shown = json(levh(home.path()).args(["show", &other, "--json"]));
    assert_eq!(shown["content"], "The deploy branch is prod.");

    // An ordinary edit is applied, with its secret redacted.
    let (mut server, address) = serve(home.path(), &[("LEVH_NOW", T0)]);
    let (status, body) = request(
        "PATCH",
        &format!("http://{address}/api/memories/{branch}"),
        Some(json!({"content": "Release notes live in the wiki; token password=hunter2secret"})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["verdict"], &body["applied"]),
        (&json!("redact"), &json!(true)),
        "{body}"
    );
    assert!(
        !body["memory"]["content"]
            .as_str()
            .unwrap()
            .contains("hunter2secret")
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn an_update_over_mcp_and_a_changed_synced_item_pass_the_gate_too() {
    let harness = Harness::new();
    let branch = harness.capture("The deploy branch is main.");
    let other = harness.capture("Deploys happen on Tuesdays after the standup meeting.");
    runtime().block_on(async {
        let server = levh_mcp::LevhMcp::new(
            harness.levh.clone(),
            levh_core::Workspace::default(),
            levh_mcp::Profile::Admin,
        );
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let running = server.serve(server_io).await.unwrap();
            let _ = running.waiting().await;
        });
        let client = ().serve(client_io).await.unwrap();
        let rejected = tool(
            &client,
            "update_memory",
            json!({"id": other.to_string(), "content": "The deploy branch is main."}),
        )
        .await;
        assert_eq!(rejected["verdict"], "reject", "{rejected}");
        assert_eq!(rejected["applied"], false);
        let held = tool(
            &client,
            "update_memory",
            json!({"id": other.to_string(), "content": "The deploy branch is prod."}),
        )
        .await;
        assert_eq!(held["verdict"], "review", "{held}");
        assert!(held["held_id"].is_string(), "{held}");
    });
    assert_eq!(
        harness.levh.get(&harness.scope, other).unwrap().content,
        "Deploys happen on Tuesdays after the standup meeting."
    );
    let _ = branch;
}

// ---------------------------------------------------------------------------------------
// Item 7: a memory admitted close to older ones weakens them, from the held queue too.

fn interference_through_the_cli(levh_in: &dyn Fn(&Path) -> std::process::Command, mode: &str) {
    let home = tempfile::tempdir().unwrap();
    let at = |now: &str| {
        let mut command = levh_in(home.path());
        command.env("LEVH_NOW", now);
        command
    };
    let old = json(at(T0).args(["capture", "The deploy branch is main.", "--json"]));
    assert_eq!(old["verdict"], "admit", "{mode}: {old}");
    let old = old["memory_id"].as_str().unwrap().to_owned();
    let new = json(at(T0).args(["capture", "The deploy branch is prod.", "--json"]));
    // Held with word shingles (0.64 ≥ 0.50) and admitted by a person; MiniLM scores
    // the pair 0.86, under its review line (0.90), so the gate admits it directly: the
    // old fact is weakened either way.
    let new = match (mode, new["verdict"].as_str()) {
        ("hash", Some("review")) => {
            let held = new["held_id"].as_str().unwrap().to_owned();
            let admitted = json(at(T0).args(["held", "admit", &held, "--json"]));
            admitted["memory_id"].as_str().unwrap().to_owned()
        }
        ("local", Some("admit")) => new["memory_id"].as_str().unwrap().to_owned(),
        _ => panic!("{mode}: unexpected verdict for the one-fact update: {new}"),
    };
    let shown = |id: &str| json(at(T0).args(["show", id, "--json"]));
    let (old_stability, new_stability) = (
        shown(&old)["stability_hours"].as_f64().unwrap(),
        shown(&new)["stability_hours"].as_f64().unwrap(),
    );
    assert!(
        old_stability < new_stability && new_stability == 168.0,
        "{mode}: old {old_stability} h, new {new_stability} h"
    );
    let recalled =
        json(at("2026-03-03T09:00:00Z").args(["recall", "what is the deploy branch", "--json"]));
    let first = recalled[0]["id"]
        .as_str()
        .or(recalled["results"][0]["id"].as_str());
    assert_eq!(first, Some(new.as_str()), "{mode}: {recalled}");
}

#[test]
fn a_one_fact_update_admitted_from_the_held_queue_weakens_the_old_fact_hash_mode() {
    interference_through_the_cli(&|home| levh(home), "hash");
}

#[test]
fn a_one_fact_update_admitted_from_the_held_queue_weakens_the_old_fact_local_mode() {
    let Some(assets) = crate::embed::assets("interference, local mode") else {
        return;
    };
    interference_through_the_cli(
        &|home| {
            let mut command = assets.levh(home);
            command.env("LEVH_EMBEDDER", "local");
            command
        },
        "local",
    );
}

// ---------------------------------------------------------------------------------------
// Item 9: secrets nowhere — labels, metadata, client names, sessions; audit covers them.

#[test]
fn secrets_in_metadata_labels_client_names_and_sessions_are_redacted_and_audited() {
    const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let harness = Harness::new();
    let app = levh_http::router(levh_http::AppState::new(
        harness.levh.clone(),
        harness.store.clone(),
        levh_http::AuthConfig::default(),
    ));
    let send = |method: &str, uri: &str, body: Option<Value>, client: Option<&str>| {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let mut request = levh_http::axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json");
        if let Some(client) = client {
            request = request.header("x-levh-client", client);
        }
        let request = request
            .body(levh_http::axum::body::Body::from(
                body.map(|b| b.to_string()).unwrap_or_default(),
            ))
            .unwrap();
        let app = app.clone();
        runtime().block_on(async move {
            let response = app.oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            (
                status,
                serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
            )
        })
    };
    let (status, stored) = send(
        "POST",
        "/api/memories",
        Some(json!({
            "content": "The nightly export runs at 02:00",
            "project": format!("ops {TOKEN}"),
            "metadata": {"password": "hunter2secret", "links": [format!("https://x.example/?t={TOKEN}")]},
        })),
        Some(&format!("bot {TOKEN}")),
    );
    assert_eq!(status, 201, "{stored}");
    assert_eq!(stored["verdict"], "redact", "{stored}");
    let id = stored["memory_id"].as_str().unwrap();
    let (_, memory) = send("GET", &format!("/api/memories/{id}"), None, None);
    let (_, sources) = send("GET", "/api/sources", None, None);
    let (_, projects) = send("GET", "/api/projects", None, None);
    let (status, session) = send(
        "POST",
        "/api/sessions",
        Some(json!({"project": format!("p {TOKEN}")})),
        Some(&format!("agent {TOKEN}")),
    );
    assert_eq!(status, 201, "{session}");
    let everything = format!("{memory}{sources}{projects}{session}{stored}");
    assert!(!everything.contains(TOKEN), "{everything}");
    assert!(!everything.contains("hunter2secret"), "{everything}");
    assert!(
        everything.contains("[REDACTED:github-token]"),
        "{everything}"
    );
    let events: Vec<String> = harness.store.with_connection(|c| {
        let mut s = c
            .prepare("SELECT coalesce(client, '') || detail FROM events")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert!(!events.concat().contains(TOKEN), "{events:?}");

    // A URL password containing '@', and a private key cut short before its END line.
    let url = harness
        .levh
        .capture(
            &harness.scope,
            NewMemory {
                content: "The replica is postgres://app:p@ss@w0rd@db.internal/app".into(),
                ..NewMemory::default()
            },
        )
        .unwrap();
    let content = harness
        .levh
        .get(&harness.scope, url.memory_id.unwrap())
        .unwrap()
        .content;
    assert_eq!(
        content,
        "The replica is postgres://app:[REDACTED:url-password]@db.internal/app"
    );
    let pem = harness
        .levh
        .capture(
            &harness.scope,
            NewMemory {
                content: "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQyNTUxOQAAACD\n".into(),
                ..NewMemory::default()
            },
        )
        .unwrap();
    let content = harness
        .levh
        .get(&harness.scope, pem.memory_id.unwrap())
        .unwrap()
        .content;
    assert_eq!(content, "deploy key:\n[REDACTED:private-key]");

    // Written by other means (an old levh, a script): the audit finds secrets in every
    // field, and redaction clears them.
    let planted = harness.capture("The backup bucket is s3://backups-eu");
    harness.store.with_connection(|c| {
        c.execute(
            "UPDATE memories SET metadata = ?1, source = ?2 WHERE id = ?3",
            rusqlite::params![
                json!({"api_key": "k3y-V4lue-123"}).to_string(),
                format!("script {TOKEN}"),
                planted.to_string()
            ],
        )
        .unwrap();
    });
    let findings = harness.levh.audit_secrets(&harness.scope).unwrap();
    let finding = findings.iter().find(|f| f.memory_id == planted).unwrap();
    assert_eq!(finding.fields, ["source", "metadata"], "{finding:?}");
    harness.levh.redact_secrets(&harness.scope).unwrap();
    assert!(
        harness
            .levh
            .audit_secrets(&harness.scope)
            .unwrap()
            .is_empty()
    );
    let cleaned = harness.levh.get(&harness.scope, planted).unwrap();
    assert_eq!(cleaned.source, "script [REDACTED:github-token]");
    assert_eq!(cleaned.metadata, json!({"api_key": "[REDACTED:password]"}));
}

// ---------------------------------------------------------------------------------------
// Item 11: a message too large gets an answer; metadata is capped.

#[test]
fn an_mcp_stdio_message_over_the_line_limit_gets_an_error_not_a_hang_and_the_session_goes_on() {
    let home = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let (client, _child) = mcp_stdio(home.path(), &[]).await;
        let Value::Object(arguments) = json!({"content": "x".repeat(17 * 1024 * 1024)}) else {
            unreachable!()
        };
        let call = client.call_tool(
            CallToolRequestParams::new("store_memory".to_owned()).with_arguments(arguments),
        );
        let answer = tokio::time::timeout(std::time::Duration::from_secs(60), call)
            .await
            .expect("no answer to an oversized message: the client hangs");
        let error = answer
            .expect_err("an oversized message must fail")
            .to_string();
        assert!(
            error.contains("too large") && error.contains("16 MiB"),
            "{error}"
        );
        // The connection is still good.
        let stored = tool(
            &client,
            "store_memory",
            json!({"content": "The session survives a message too large"}),
        )
        .await;
        assert_eq!(stored["verdict"], "admit", "{stored}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn metadata_over_its_cap_is_refused_naming_the_cap() {
    let harness = Harness::new();
    let error = harness
        .levh
        .capture(
            &harness.scope,
            NewMemory {
                content: "A note with far too much metadata".into(),
                metadata: Some(json!({"blob": "m".repeat(100_000)})),
                ..NewMemory::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("metadata") && error.contains("64 KiB"),
        "{error}"
    );
    assert_eq!(harness.levh.stats(&harness.scope, None).unwrap().total, 0);
}

// ---------------------------------------------------------------------------------------
// Item 13: what levh knows about the future is read alike on every surface.

#[test]
fn future_dated_memories_are_listed_and_recalled_alike_by_cli_rest_and_mcp() {
    let home = tempfile::tempdir().unwrap();
    let capture = |args: &[&str]| -> String {
        let out = json(
            levh(home.path())
                .env("LEVH_NOW", T0)
                .arg("capture")
                .args(args)
                .arg("--json"),
        );
        assert_eq!(out["verdict"], "admit", "{out}");
        out["memory_id"].as_str().unwrap().to_owned()
    };
    let now = capture(&["The office wifi password rotates monthly"]);
    let future = capture(&[
        "Flight to Lisbon departs at 07:40 from gate B12",
        "--valid-from",
        "2026-03-20T07:40:00Z",
    ]);
    let ended = capture(&[
        "The old office on Hill Street had parking for twelve cars",
        "--valid-from",
        "2025-01-01",
        "--valid-to",
        "2026-02-01",
    ]);
    let expected: BTreeSet<String> = [now.clone(), future.clone()].into();

    let cli = json(
        levh(home.path())
            .env("LEVH_NOW", T0)
            .args(["list", "--json"]),
    );
    let cli = ids(cli["memories"].as_array().unwrap());

    let (mut server, address) = serve(home.path(), &[("LEVH_NOW", T0)]);
    let (_, rest) = request(
        "GET",
        &format!("http://{address}/api/memories?limit=100"),
        None,
    );
    let rest = ids(rest["memories"].as_array().unwrap());
    let (_, rest_recall) = request(
        "POST",
        &format!("http://{address}/api/search"),
        Some(json!({"query": "flight to lisbon"})),
    );
    let _ = server.kill();
    let _ = server.wait();

    let (mcp, mcp_recall) = runtime().block_on(async {
        let (client, _child) = mcp_stdio(home.path(), &[("LEVH_NOW", T0)]).await;
        let listed = tool(&client, "list_memories", json!({"limit": 100})).await;
        let recalled = tool(
            &client,
            "search_memory",
            json!({"query": "flight to lisbon"}),
        )
        .await;
        client.cancel().await.unwrap();
        (ids(listed["memories"].as_array().unwrap()), recalled)
    });
    assert_eq!(cli, expected, "CLI list");
    assert_eq!(rest, expected, "REST /api/memories");
    assert_eq!(mcp, expected, "MCP list_memories");
    assert!(!cli.contains(&ended));

    let cli_recall =
        json(
            levh(home.path())
                .env("LEVH_NOW", T0)
                .args(["recall", "flight to lisbon", "--json"]),
        );
    for (surface, answer) in [
        ("CLI recall", cli_recall.to_string()),
        ("REST search", rest_recall.to_string()),
        ("MCP search", mcp_recall.to_string()),
    ] {
        assert!(answer.contains(&future), "{surface}: {answer}");
    }
    // As of a time before the flight's validity starts, it is not yet valid.
    let before = json(levh(home.path()).env("LEVH_NOW", T0).args([
        "recall",
        "flight to lisbon",
        "--as-of",
        "2026-03-10",
        "--json",
    ]));
    assert!(!before.to_string().contains(&future), "{before}");
}

// ---------------------------------------------------------------------------------------
// Item 15: a refusal changes nothing; doctor reports on a store it cannot open.

#[test]
fn a_store_of_a_newer_schema_is_refused_before_its_file_changes() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("levh.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE t (x); PRAGMA user_version = 999;")
            .unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }
    let before = std::fs::read(&db).unwrap();
    let out = levh(home.path()).args(["stats"]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("upgrade levh"), "{stderr}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the file was rewritten"
    );
    assert!(!home.path().join("levh.db-wal").exists());
}

#[test]
fn doctor_reports_a_corrupt_store_naming_the_failed_check_and_the_error_once() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("levh.db"), vec![0x42u8; 8192]).unwrap();
    let out = levh(home.path()).args(["doctor"]).output().unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("✗ file") && stdout.contains("not an SQLite database"),
        "{stdout}"
    );
    assert!(stdout.contains("✗ open"), "{stdout}");
    // The same error from any other command says SQLite's words once.
    let out = levh(home.path()).args(["stats"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("file is not a database").count(),
        1,
        "{stderr}"
    );
    let out = levh(home.path())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false, "{report}");
    let failed: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["file", "open"], "{report}");
}

#[test]
fn a_zero_byte_store_file_is_named_when_a_new_store_starts_in_it() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("levh.db"), b"").unwrap();
    let out = ok(levh(home.path()).args(["stats"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("empty (0 bytes)"), "{stderr}");
    // Now a store: no warning the second time.
    let out = ok(levh(home.path()).args(["stats"]));
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
}

// ---------------------------------------------------------------------------------------
// Item 14: one rule for an admitted memory's world time.

#[test]
fn a_held_memory_holds_from_when_it_was_written_unless_it_retires_another_and_known_at_is_kept() {
    let home = tempfile::tempdir().unwrap();
    const HELD_AT: &str = "2026-03-02T09:00:00Z";
    const DECIDED_AT: &str = "2026-03-05T09:00:00Z";
    let at = |now: &str| {
        let mut command = levh(home.path());
        command.env("LEVH_NOW", now);
        command
    };
    let capture = |text: &str| json(at(HELD_AT).args(["capture", text, "--json"]));
    let old = capture("The deploy branch for atlas is main.");
    let old = old["memory_id"].as_str().unwrap().to_owned();
    let other = capture("The staging database for atlas runs on port 5432.");
    let other = other["memory_id"].as_str().unwrap().to_owned();
    let plain = capture("The staging database for atlas runs on port 6432.");
    let replacing = capture("The deploy branch for atlas is prod.");
    assert_eq!(
        (&plain["verdict"], &replacing["verdict"]),
        (&json!("review"), &json!("review"))
    );
    let admit = |held: &Value, extra: &[&str]| {
        let held = held["held_id"].as_str().unwrap();
        json(
            at(DECIDED_AT)
                .args(["held", "admit", held, "--json"])
                .args(extra),
        )
    };
    let plain = admit(&plain, &[]);
    let replacing = admit(&replacing, &["--supersede"]);
    let show = |id: &Value| json(at(DECIDED_AT).args(["show", id.as_str().unwrap(), "--json"]));
    // Nothing retired: the memory holds from when it was written.
    assert_eq!(show(&plain["memory_id"])["valid_from"], HELD_AT);
    assert!(show(&json!(other))["valid_to"].is_null());
    // Retiring another: both change at the decision, and the windows abut.
    assert_eq!(show(&replacing["memory_id"])["valid_from"], DECIDED_AT);
    assert_eq!(show(&json!(old))["valid_to"], DECIDED_AT);
    // What levh knew before the decision is still what it knew.
    let knew = json(at(DECIDED_AT).args([
        "recall",
        "atlas deploy branch",
        "--known-at",
        "2026-03-04T09:00:00Z",
        "--json",
    ]));
    assert!(knew.to_string().contains(&old), "{knew}");
}

#[test]
fn a_synced_file_edited_into_a_copy_of_another_is_held_not_applied_and_an_invisible_body_is_dropped()
 {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("branch.txt", "The deploy branch for atlas is main.");
    write(
        "days.txt",
        "Deploys happen on Tuesdays after the standup meeting.",
    );
    write("blank.txt", "\u{200b}\u{200b}\u{feff}\u{200b}");
    let sync = || {
        json(
            levh(home.path())
                .args(["sync", "local_files", "--json", "--config"])
                .arg(format!("directory={}", dir.path().display())),
        )
    };
    let first = sync();
    assert_eq!(first["failed"], 0, "{first}");
    let listed = json(levh(home.path()).args(["list", "--json"]));
    let all = listed.to_string();
    assert!(
        !all.contains('\u{200b}') && !all.contains("\\u200b"),
        "{all}"
    );

    // days.txt now says what branch.txt says (under its own title): the gate holds the
    // update for a person, and the memory of days.txt keeps its text meanwhile.
    write("days.txt", "The deploy branch for atlas is main.");
    let second = sync();
    assert_eq!(
        (&second["held"], &second["updated"]),
        (&json!(1), &json!(0)),
        "{second}"
    );
    let held = json(levh(home.path()).args(["held", "list", "--json"]));
    assert!(held["held"][0]["updates"].is_string(), "{held}");
    let listed = json(levh(home.path()).args(["list", "--json"]))["memories"].to_string();
    assert!(listed.contains("Deploys happen on Tuesdays"), "{listed}");
}

/// Edges an outsider tried through a real server and the CLI: a lower-case `bearer`
/// scheme is a token like any other; every answer says `nosniff`; a misspelt argument
/// over REST names the one meant; an invisible character inside a word does not make a
/// copy new to the gate, and content of nothing but blank "letters" or direction
/// overrides is refused like empty content.
#[test]
fn hostile_edges_bearer_case_nosniff_misspelt_arguments_and_invisible_characters() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    const TOKEN: &str = "operator-token-0123456789abcdef";
    let (mut server, address) = serve(home, &[("LEVH_EMBEDDER", "hash"), ("LEVH_TOKEN", TOKEN)]);
    let agent = agent();
    let health = |authorization: &str| {
        agent
            .get(format!("http://{address}/api/health"))
            .header("Authorization", authorization)
            .call()
            .unwrap()
    };
    let accepted = health(&format!("bearer {TOKEN}"));
    assert_eq!(accepted.status(), 200);
    assert_eq!(
        accepted.headers().get("x-content-type-options").unwrap(),
        "nosniff"
    );
    assert_eq!(health(&format!("BEARER {TOKEN}")).status(), 200);
    let refused = health("bearer not-the-token-at-all");
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers().get("x-content-type-options").unwrap(),
        "nosniff"
    );
    let mut misspelt = agent
        .post(format!("http://{address}/api/search"))
        .header("X-LEVH-Token", TOKEN)
        .send_json(json!({ "query": "deploys", "asof": "2026-01-01T00:00:00Z" }))
        .unwrap();
    assert_eq!(misspelt.status(), 400);
    let told = misspelt.body_mut().read_to_string().unwrap();
    assert!(told.contains("did you mean `as_of`?"), "{told}");
    server.kill().unwrap();
    server.wait().unwrap();

    let capture = |content: &str| -> Value {
        json(
            levh(home)
                .env("LEVH_EMBEDDER", "hash")
                .args(["capture", content, "--json"]),
        )
    };
    assert_eq!(
        capture("Deployments go out on tuesdays after the morning standup")["verdict"],
        "admit"
    );
    let hidden =
        capture("Deploy\u{200B}ments go out on tues\u{2060}days after the morning standup");
    assert_eq!(hidden["verdict"], "reject", "{hidden}");
    for blank in [
        "\u{2800}\u{2800}\u{2800}\u{2800}",
        "\u{3164}\u{3164}\u{3164}",
        "\u{202E}\u{202E}\u{202E}\u{202E}",
    ] {
        let refused = capture(blank);
        assert_eq!(refused["verdict"], "reject", "{blank:?}: {refused}");
        assert!(
            refused["reason"]
                .as_str()
                .unwrap()
                .contains("nothing visible"),
            "{refused}"
        );
    }
    let listed = json(
        levh(home)
            .env("LEVH_EMBEDDER", "hash")
            .args(["list", "--json"]),
    );
    assert_eq!(listed["memories"].as_array().unwrap().len(), 1, "{listed}");
}

/// Secrets an outsider slipped past the gate, each through the surface where it was
/// found: a metadata key and a kind over REST (refused without echoing the secret), a
/// token behind a `key_`/`x_` prefix, an indented or space-joined private key without
/// its END line, a token's label on the CLI, a synced file named after a token; then a
/// store written by other means (secrets in a kind, a held candidate, a synced item's id,
/// a token's label) is audited and stripped. The token never reaches the database file.
#[test]
fn secrets_in_keys_kinds_labels_prefixes_pem_bodies_and_source_ids_are_caught_and_audited() {
    const TOKEN: &str = "ghp_Qm7zKx2Lp9Vt4Rw8Yn3Bc6Hd1Jf5Gs0Ea9Ui";
    const AWS: &str = "AKIAQ4EXAMPLEKEY7ZZQ";
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let file_has = |needle: &str| -> bool {
        std::fs::read_dir(home).unwrap().flatten().any(|entry| {
            let path = entry.path();
            path.is_file()
                && path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("levh.db")
                && std::fs::read(&path)
                    .unwrap()
                    .windows(needle.len())
                    .any(|w| w == needle.as_bytes())
        })
    };

    let (mut server, address) = serve(home, &[("LEVH_EMBEDDER", "hash")]);
    let (status, stored) = request(
        "POST",
        &format!("http://{address}/api/memories"),
        Some(json!({
            "content": "The deploy bot reads its settings from the vault",
            "metadata": { (format!("token {TOKEN}")): "rotated monthly", "owner": "ops" },
        })),
    );
    assert_eq!(status, 201, "{stored}");
    assert!(!stored.to_string().contains(TOKEN), "{stored}");
    let lowercase_token = "xoxb-1234567890-abcdefghij";
    let (status, refused) = request(
        "POST",
        &format!("http://{address}/api/memories"),
        Some(json!({ "content": "A note of a strange kind", "kind": lowercase_token })),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused.to_string().contains("looks like a secret"),
        "{refused}"
    );
    assert!(!refused.to_string().contains(lowercase_token), "{refused}");
    server.kill().unwrap();
    server.wait().unwrap();

    let capture = |content: &str| -> Value {
        json(
            levh(home)
                .env("LEVH_EMBEDDER", "hash")
                .args(["capture", content, "--json"]),
        )
    };
    let prefixed = capture(&format!(
        "The old creds were key_{AWS} and x_{TOKEN} in the deploy script"
    ));
    assert_eq!(prefixed["verdict"], "redact", "{prefixed}");
    let indented = capture(
        "deploy key for the box:\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n    VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n",
    );
    assert_eq!(indented["verdict"], "redact", "{indented}");
    let joined = capture(
        "paste from chat: -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ AAAAMwAAAAtzc2gtZWQyNTUxOQAAACDxq7Kd",
    );
    assert_eq!(joined["verdict"], "redact", "{joined}");
    for body in [
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACDxq7Kd",
        AWS,
        TOKEN,
    ] {
        assert!(!file_has(body), "{body} reached the file");
    }

    let issued = json(levh(home).args([
        "token",
        "create",
        "--role",
        "viewer",
        "--label",
        &format!("ci runner {TOKEN}"),
        "--json",
    ]));
    assert!(!issued.to_string().contains(TOKEN), "{issued}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(format!("creds-{TOKEN}.md")),
        "Where the deploy credentials of the staging cluster are kept",
    )
    .unwrap();
    let synced = json(
        levh(home)
            .env("LEVH_EMBEDDER", "hash")
            .args(["sync", "local_files", "--json", "--config"])
            .arg(format!("directory={}", dir.path().display())),
    );
    assert!(!synced.to_string().contains(TOKEN), "{synced}");
    assert!(!file_has(TOKEN), "the synced file's name reached the file");
    let audit = json(levh(home).args(["audit-secrets", "--json"]));
    assert_eq!(audit["findings"], json!([]), "{audit}");
    assert_eq!(audit["elsewhere"], json!([]), "{audit}");

    // A store written by an older levh or a script: secrets in places the old audit
    // never read.
    let near = capture("The staging cluster is rebuilt every Sunday night at ten");
    assert_eq!(near["verdict"], "admit");
    let held = capture("The staging cluster is rebuilt every Saturday night at ten");
    assert_eq!(held["verdict"], "review", "{held}");
    let connection = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    connection
        .execute_batch(&format!(
            "UPDATE memories SET kind = 'note-{t}' WHERE id = '{m}';
             UPDATE held_candidates SET content = content || ' {t}';
             UPDATE sync_items SET source_id = 'file:creds-{t}.md';
             UPDATE tokens SET label = 'planted {t}';",
            t = TOKEN.to_lowercase(),
            m = near["memory_id"].as_str().unwrap(),
        ))
        .unwrap();
    drop(connection);
    let audit = json(levh(home).args(["audit-secrets", "--json"]));
    let places: Vec<String> = audit["elsewhere"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["place"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !audit.to_string().contains(&TOKEN.to_lowercase()),
        "{audit}"
    );
    for expected in ["kind", "held candidate", "synced item", "label"] {
        assert!(
            places.iter().any(|p| p.contains(expected)),
            "{expected} not in {places:?}"
        );
    }
    ok(levh(home).args(["redact-secrets"]));
    let audit = json(levh(home).args(["audit-secrets", "--json"]));
    assert_eq!(audit["elsewhere"], json!([]), "{audit}");
    assert!(
        !file_has(&TOKEN.to_lowercase()),
        "a planted secret stayed in the file"
    );
    // The synced file is still known: a second sync stores nothing new.
    let again = json(
        levh(home)
            .env("LEVH_EMBEDDER", "hash")
            .args(["sync", "local_files", "--json", "--config"])
            .arg(format!("directory={}", dir.path().display())),
    );
    assert!(!again.to_string().contains(TOKEN), "{again}");
}

/// A line that is not JSON, sent to the real `levh mcp stdio`, gets JSON-RPC's parse error
/// (-32700) for the id it shows, instead of silence and a client waiting forever; the
/// session goes on.
#[test]
fn an_mcp_stdio_message_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    use std::io::{BufRead as _, Write as _};
    let home = tempfile::tempdir().unwrap();
    let mut child = levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["mcp", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = received
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("no answer: the client would hang");
        serde_json::from_str(&line).unwrap()
    };
    writeln!(stdin, "{}", json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } }
    })).unwrap();
    assert_eq!(next()["id"], 1);
    writeln!(
        stdin,
        "{}",
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
    )
    .unwrap();
    writeln!(
        stdin,
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
    )
    .unwrap();
    let answer = next();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{answer}"
    );
    writeln!(
        stdin,
        "{}",
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" })
    )
    .unwrap();
    let listed = next();
    assert_eq!(listed["id"], 3, "{listed}");
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
    drop(stdin);
    child.wait().unwrap();
}

/// A full disk is a condition a person can fix, said as such: `507 Insufficient Storage`
/// naming it, nothing stored — not an opaque 500. (SQLite's `max_page_count` makes the
/// store full exactly as a full disk does: the write fails with SQLITE_FULL.)
#[test]
fn a_full_disk_is_a_507_saying_so_and_nothing_is_stored() {
    let harness = Harness::new();
    harness.capture("The store has room for this one");
    let app = levh_http::router(levh_http::AppState::new(
        harness.levh.clone(),
        harness.store.clone(),
        levh_http::AuthConfig::default(),
    ));
    harness.store.with_connection(|c| {
        // No free page left to write into, and no page more to take.
        c.execute_batch("VACUUM").unwrap();
        let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
        c.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
            .unwrap();
    });
    let body = json!({ "content": format!("A long note that needs new pages: {}", "lorem ipsum dolor ".repeat(1700)) });
    let (status, answer) = runtime().block_on(async move {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let request = levh_http::axum::http::Request::builder()
            .method("POST")
            .uri("/api/memories")
            .header("content-type", "application/json")
            .body(levh_http::axum::body::Body::from(body.to_string()))
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
        )
    });
    assert_eq!(status, 507, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("disk holding levh's store is full"),
        "{answer}"
    );
    assert_eq!(harness.levh.stats(&harness.scope, None).unwrap().total, 1);
}

/// Times at the edge of year 9999: a date on the last day and an instant in its last
/// hours are both the end of time, accepted alike; every read (list, export, timeline)
/// answers; a stored time past the end (an older levh wrote the end of time a few
/// nanoseconds too late) reads as the end instead of failing the whole list, and
/// `levh doctor` counts it.
#[test]
fn times_at_the_end_of_year_9999_are_accepted_alike_and_never_break_a_read() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let cli = || {
        let mut command = levh(home);
        command.env("LEVH_EMBEDDER", "hash");
        command
    };
    let by_date = json(cli().args([
        "capture",
        "A lease that never ends, by date",
        "--valid-to",
        "9999-12-31",
        "--json",
    ]));
    assert_eq!(by_date["verdict"], "admit", "{by_date}");
    let by_instant = json(cli().args([
        "capture",
        "A plan that starts at the very end",
        "--valid-from",
        "9999-12-31T12:00:00Z",
        "--json",
    ]));
    assert_eq!(by_instant["verdict"], "admit", "{by_instant}");
    let listed = json(cli().args(["list", "--json"]));
    let ends: Vec<&Value> = listed["memories"].as_array().unwrap().iter().collect();
    assert_eq!(ends.len(), 2, "{listed}");
    assert!(
        listed.to_string().contains("9999-12-30T22:00:00Z"),
        "{listed}"
    );
    ok(cli().args(["timeline", "--json"]));
    let (mut server, address) = serve(home, &[("LEVH_EMBEDDER", "hash")]);
    let (status, export) = request("GET", &format!("http://{address}/api/export"), None);
    assert_eq!(status, 200, "{export}");
    server.kill().unwrap();
    server.wait().unwrap();

    // What an older levh wrote: the end of time in nanoseconds, stored as microseconds
    // past the last one a read accepts.
    let connection = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    connection
        .execute(
            "UPDATE memories SET valid_to = 253402207200999999 WHERE id = ?1",
            [by_date["memory_id"].as_str().unwrap()],
        )
        .unwrap();
    drop(connection);
    let listed = json(cli().args(["list", "--json"]));
    assert_eq!(listed["memories"].as_array().unwrap().len(), 2, "{listed}");
    ok(cli().args(["timeline", "--json"]));
    let doctor = cli().args(["doctor", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let times = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "times")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(times["ok"], false, "{report}");
    assert!(
        times["detail"].as_str().unwrap().starts_with("1 memories"),
        "{report}"
    );
}
