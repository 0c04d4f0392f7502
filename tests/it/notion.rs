//! The notion connector against a loopback API server, through `levh sync`: the server
//! answers in the shapes the Notion API uses (`2022-06-28`), and records what it was sent.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::api_server::{ApiServer, Reply, Seen};
use crate::support::{json, levh, ok};

/// The integration token the tests store; it must never reach levh's own files or output.
const TOKEN: &str = "secret_Nt0kEn4levhTests9qZ7xW2";

const DB: &str = "d9824bdc-8445-4327-be8b-5b47500af6ce";
const MISSING_DB: &str = "0b1d2c3e-0000-4000-8000-00000000dead";
const ATLAS: &str = "59833787-2cf9-4fdf-8782-e53db20768a5";
const HIRING: &str = "7c1b2f9e-4d3a-4b8e-9f21-0a6e5d4c3b2a";
const BUDGET: &str = "a1e4c2d0-8b7f-4e6a-b5c3-9d2e1f0a7b6c";
/// Notion's `next_cursor` after the first query page.
const PAGE_TWO: &str = "e8f9a7b6-1c2d-4e3f-8a9b-0c1d2e3f4a5b";

fn rich(text: &str) -> Value {
    json!([{
        "type": "text",
        "text": { "content": text, "link": null },
        "annotations": { "bold": false, "italic": false, "strikethrough": false,
                         "underline": false, "code": false, "color": "default" },
        "plain_text": text,
        "href": null
    }])
}

fn user(id: &str) -> Value {
    json!({ "object": "user", "id": id })
}

/// A database row as `POST /v1/databases/{id}/query` returns it.
fn page(id: &str, title: &str, edited: &str, status: &str, extra: Value) -> Value {
    let mut properties = json!({
        "Name": { "id": "title", "type": "title", "title": rich(title) },
        "Status": { "id": "%5EOE%40", "type": "status",
                    "status": { "id": "1", "name": status, "color": "blue" } },
        "Done": { "id": "Kx%3D", "type": "checkbox", "checkbox": false }
    });
    if let Value::Object(extra) = extra {
        properties.as_object_mut().unwrap().extend(extra);
    }
    json!({
        "object": "page",
        "id": id,
        "created_time": "2026-02-27T08:00:00.000Z",
        "last_edited_time": edited,
        "created_by": user("ee5f0f84-409a-440f-983a-a5315961c6e4"),
        "last_edited_by": user("ee5f0f84-409a-440f-983a-a5315961c6e4"),
        "cover": null,
        "icon": null,
        "parent": { "type": "database_id", "database_id": DB },
        "archived": false,
        "in_trash": false,
        "properties": properties,
        "url": format!("https://www.notion.so/{}", id.replace('-', "")),
        "public_url": null
    })
}

fn pages() -> Vec<Value> {
    vec![
        page(
            ATLAS,
            "Atlas launch plan",
            "2026-03-01T10:00:00.000Z",
            "In progress",
            json!({
                "Owner": { "id": "p%3F", "type": "people", "people": [{
                    "object": "user", "id": "0c3e9826-b8f7-4f73-927d-2caaf86f1103",
                    "name": "Ada Lovelace", "avatar_url": null, "type": "person",
                    "person": { "email": "ada@example.com" } }] },
                "Due": { "id": "d%40", "type": "date",
                         "date": { "start": "2026-03-20", "end": null, "time_zone": null } }
            }),
        ),
        page(
            HIRING,
            "Hiring loop for the platform team",
            "2026-03-02T11:30:00.000Z",
            "Not started",
            json!({
                "Tags": { "id": "t", "type": "multi_select", "multi_select": [
                    { "id": "a", "name": "hiring", "color": "green" },
                    { "id": "b", "name": "platform", "color": "gray" }] }
            }),
        ),
        page(
            BUDGET,
            "Quarterly budget review",
            "2026-03-03T09:15:00.000Z",
            "Done",
            json!({ "Amount": { "id": "n", "type": "number", "number": 125000 } }),
        ),
    ]
}

fn block(id: &str, kind: &str, body: Value) -> Value {
    json!({
        "object": "block",
        "id": id,
        "parent": { "type": "page_id", "page_id": ATLAS },
        "created_time": "2026-02-27T08:00:00.000Z",
        "last_edited_time": "2026-03-01T10:00:00.000Z",
        "created_by": user("ee5f0f84-409a-440f-983a-a5315961c6e4"),
        "last_edited_by": user("ee5f0f84-409a-440f-983a-a5315961c6e4"),
        "has_children": false,
        "archived": false,
        "in_trash": false,
        "type": kind,
        kind: body
    })
}

fn blocks(page_id: &str) -> Vec<Value> {
    match page_id {
        ATLAS => vec![
            block(
                "b1",
                "heading_2",
                json!({ "rich_text": rich("Launch checklist"), "color": "default", "is_toggleable": false }),
            ),
            block(
                "b2",
                "paragraph",
                json!({ "rich_text": rich("Atlas ships to the beta cohort behind a feature flag."), "color": "default" }),
            ),
            block(
                "b3",
                "to_do",
                json!({ "rich_text": rich("Write the rollback runbook"), "checked": true, "color": "default" }),
            ),
            block(
                "b4",
                "to_do",
                json!({ "rich_text": rich("Brief customer support"), "checked": false, "color": "default" }),
            ),
            block(
                "b5",
                "image",
                json!({ "caption": [], "type": "external", "external": { "url": "https://example.com/chart.png" } }),
            ),
        ],
        HIRING => vec![
            block(
                "b6",
                "bulleted_list_item",
                json!({ "rich_text": rich("Two backend engineers by April"), "color": "default" }),
            ),
            block(
                "b7",
                "quote",
                json!({ "rich_text": rich("Bar raiser joins every loop."), "color": "default" }),
            ),
        ],
        _ => vec![block(
            "b8",
            "callout",
            json!({
            "rich_text": rich("Cloud spend is twelve percent over plan."),
            "icon": { "type": "emoji", "emoji": "💡" }, "color": "gray_background" }),
        )],
    }
}

fn list(results: Vec<Value>, next: Option<&str>, kind: &str) -> Value {
    json!({
        "object": "list",
        "results": results,
        "next_cursor": next,
        "has_more": next.is_some(),
        "type": kind,
        kind: {}
    })
}

fn error(status: u16, code: &str, message: &str) -> Reply {
    Reply::status(
        status,
        json!({ "object": "error", "status": status, "code": code, "message": message }),
    )
}

fn body(seen: &Seen) -> Value {
    serde_json::from_str(&seen.body).unwrap_or(Value::Null)
}

/// The Notion API for one shared database (two query pages of results, or only the pages
/// edited on or after a filter's time) and one that is not shared with the integration.
fn notion(seen: &Seen) -> Reply {
    let path = seen.path();
    if path == format!("/v1/databases/{DB}/query") && seen.method == "POST" {
        let request = body(seen);
        let all = pages();
        if let Some(since) = request.pointer("/filter/last_edited_time/on_or_after") {
            let since = since.as_str().unwrap();
            let newer = all
                .into_iter()
                .filter(|p| p["last_edited_time"].as_str().unwrap() >= since)
                .collect();
            return Reply::json(list(newer, None, "page_or_database"));
        }
        return match request["start_cursor"].as_str() {
            None => Reply::json(list(all[..2].to_vec(), Some(PAGE_TWO), "page_or_database")),
            Some(PAGE_TWO) => Reply::json(list(all[2..].to_vec(), None, "page_or_database")),
            Some(other) => error(
                400,
                "validation_error",
                &format!("start_cursor {other} is invalid"),
            ),
        };
    }
    if path == format!("/v1/databases/{MISSING_DB}/query") {
        return error(
            404,
            "object_not_found",
            &format!(
                "Could not find database with ID: {MISSING_DB}. Make sure the relevant pages and databases are shared with your integration."
            ),
        );
    }
    if let Some(rest) = path.strip_prefix("/v1/blocks/")
        && let Some(id) = rest.strip_suffix("/children")
        && seen.method == "GET"
    {
        return Reply::json(list(blocks(id), None, "block"));
    }
    error(400, "invalid_request_url", "Invalid request URL.")
}

/// A home where notion may reach `server` and holds [`TOKEN`].
fn home_for(server: &ApiServer) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args(["connector", "grant", "notion", "--host", &server.authority]));
    store_token(home.path());
    home
}

fn store_token(home: &Path) {
    let mut child = levh(home)
        .args(["connector", "secret", "set", "notion"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{TOKEN}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
}

/// `levh sync notion --json` against `server`: the report and the whole output.
fn sync(home: &Path, server: &ApiServer, databases: &str) -> (Value, Output) {
    let out = levh(home)
        .args(["sync", "notion", "--json", "--config"])
        .arg(format!("base_url={}", server.base))
        .args(["-c", &format!("database_ids={databases}")])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, out)
}

fn errors(report: &Value) -> Vec<String> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

fn memories(home: &Path) -> Vec<Value> {
    json(levh(home).args(["list", "--json"]))["memories"]
        .as_array()
        .unwrap()
        .clone()
}

fn memory(all: &[Value], source_id: &str) -> Value {
    all.iter()
        .find(|m| m["metadata"]["source_id"] == source_id)
        .unwrap_or_else(|| panic!("no memory for {source_id}: {all:?}"))
        .clone()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn notion_databases_sync_with_the_hosts_token_and_resync_incrementally() {
    let server = ApiServer::start(notion);
    let home = home_for(&server);
    let databases = format!("{DB},{MISSING_DB}");
    let (report, out) = sync(home.path(), &server, &databases);
    assert!(out.status.success(), "{report}");
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["admitted"], 3, "{report}");
    assert_eq!(report["fetched"], 3, "{report}");
    let errors = errors(&report);
    assert_eq!(report["failed"], 1, "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(&format!("{MISSING_DB}: ")) && errors[0].contains("404"),
        "the unshared database is one line, the run goes on: {errors:?}"
    );

    let all = memories(home.path());
    assert_eq!(all.len(), 3);
    let atlas = memory(&all, ATLAS);
    assert_eq!(
        atlas["content"],
        "Atlas launch plan\n\
         Done: No\n\
         Due: 2026-03-20\n\
         Owner: Ada Lovelace\n\
         Status: In progress\n\
         \n\
         ## Launch checklist\n\
         Atlas ships to the beta cohort behind a feature flag.\n\
         [x] Write the rollback runbook\n\
         [ ] Brief customer support"
    );
    assert_eq!(atlas["metadata"]["title"], "Atlas launch plan");
    assert_eq!(atlas["kind"], "document");
    assert_eq!(atlas["source"], "connector:notion");
    assert_eq!(atlas["valid_from"], "2026-03-01T10:00:00Z");
    assert_eq!(
        atlas["metadata"]["source_uri"],
        "https://www.notion.so/598337872cf94fdf8782e53db20768a5"
    );
    assert_eq!(atlas["metadata"]["database_id"], DB);
    assert_eq!(atlas["metadata"]["properties"]["Status"], "In progress");
    assert_eq!(
        atlas["metadata"]["last_edited_time"],
        "2026-03-01T10:00:00.000Z"
    );
    assert_eq!(atlas["metadata"]["people"][0]["name"], "Ada Lovelace");
    assert_eq!(atlas["metadata"]["people"][0]["role"], "owner");
    let hiring = memory(&all, HIRING);
    assert_eq!(
        hiring["metadata"]["title"],
        "Hiring loop for the platform team"
    );
    assert!(
        hiring["content"]
            .as_str()
            .unwrap()
            .ends_with("Tags: hiring, platform\n\n- Two backend engineers by April\n> Bar raiser joins every loop."),
        "{hiring}"
    );
    assert_eq!(hiring["valid_from"], "2026-03-02T11:30:00Z");
    let budget = memory(&all, BUDGET);
    assert!(
        budget["content"]
            .as_str()
            .unwrap()
            .contains("Amount: 125000\n")
            && budget["content"]
                .as_str()
                .unwrap()
                .ends_with("💡 Cloud spend is twelve percent over plan."),
        "{budget}"
    );
    assert_eq!(budget["valid_from"], "2026-03-03T09:15:00Z");

    let seen = server.seen();
    // Two query pages of the shared database, one refused query, three pages' blocks.
    assert_eq!(seen.len(), 6, "{seen:#?}");
    for request in &seen {
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            request.header("authorization"),
            Some(bearer.as_str()),
            "{request:?}"
        );
        assert_eq!(
            request.header("notion-version"),
            Some("2022-06-28"),
            "{request:?}"
        );
    }
    let queries: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(queries.len(), 3);
    assert_eq!(queries[0].header("content-type"), Some("application/json"));
    let first = body(queries[0]);
    assert_eq!(first["page_size"], 100);
    assert_eq!(
        first["sorts"],
        json!([{ "timestamp": "last_edited_time", "direction": "ascending" }])
    );
    assert!(
        first.get("filter").is_none() && first.get("start_cursor").is_none(),
        "{first}"
    );
    assert_eq!(body(queries[1])["start_cursor"], PAGE_TWO);
    assert!(
        seen.iter()
            .any(|s| s.url == format!("/v1/blocks/{ATLAS}/children?page_size=100")),
        "{seen:#?}"
    );

    // The token lives in the plugin's credential file only.
    for file in ["levh.db", "levh.db-wal"] {
        if let Ok(bytes) = std::fs::read(home.path().join(file)) {
            assert!(!contains(&bytes, TOKEN), "the token is in {file}");
        }
    }
    assert!(!contains(&out.stderr, TOKEN) && !contains(&out.stdout, TOKEN));
    let status = ok(levh(home.path()).args(["sync", "status", "--json"]));
    assert!(!contains(&status.stdout, TOKEN));

    // Again: only pages edited on or after the high-water mark are asked for.
    let before = server.seen().len();
    let (again, out) = sync(home.path(), &server, &databases);
    assert!(out.status.success(), "{again}");
    assert_eq!(again["status"], "ok", "{again}");
    assert_eq!(
        (
            again["admitted"].as_u64(),
            again["unchanged"].as_u64(),
            again["failed"].as_u64()
        ),
        (Some(0), Some(1), Some(1)),
        "{again}"
    );
    let seen = server.seen();
    let query = seen[before..]
        .iter()
        .find(|s| s.path() == format!("/v1/databases/{DB}/query"))
        .unwrap();
    assert_eq!(
        body(query)["filter"],
        json!({ "timestamp": "last_edited_time",
                "last_edited_time": { "on_or_after": "2026-03-03T09:15:00.000Z" } })
    );
    assert!(body(query).get("start_cursor").is_none());
    assert_eq!(memories(home.path()).len(), 3);
}

#[test]
fn a_rate_limit_fails_the_run_with_its_wait_and_the_next_run_resumes_without_duplicates() {
    let limited = Arc::new(AtomicBool::new(true));
    let server = {
        let limited = limited.clone();
        ApiServer::start(move |seen| {
            if body(seen)["start_cursor"] == PAGE_TWO && limited.swap(false, Ordering::SeqCst) {
                return error(
                    429,
                    "rate_limited",
                    "You have been rate limited. Please try again in a few minutes.",
                )
                .header("Retry-After", "7");
            }
            notion(seen)
        })
    };
    let home = home_for(&server);
    let (report, out) = sync(home.path(), &server, DB);
    assert!(!out.status.success());
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(
        report["admitted"], 2,
        "the first query page is stored: {report}"
    );
    let errors = errors(&report);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("rate limited") && e.contains("retry after 7 s")),
        "{errors:?}"
    );
    let runs = json(levh(home.path()).args(["sync", "status", "--json"]));
    assert_eq!(runs[0]["status"], "failed", "{runs}");

    let before = server.seen().len();
    let (again, out) = sync(home.path(), &server, DB);
    assert!(out.status.success(), "{again}");
    assert_eq!(again["status"], "ok", "{again}");
    assert_eq!(
        again["admitted"], 1,
        "only the page the limit held back: {again}"
    );
    let seen = server.seen();
    let resumed = seen[before..].iter().find(|s| s.method == "POST").unwrap();
    assert_eq!(
        body(resumed)["start_cursor"],
        PAGE_TWO,
        "resumed, not restarted"
    );
    let all = memories(home.path());
    let mut ids: Vec<&str> = all
        .iter()
        .map(|m| m["metadata"]["source_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut expected = [ATLAS, HIRING, BUDGET];
    expected.sort_unstable();
    assert_eq!(ids, expected, "each page once");
}

#[test]
fn a_refused_token_fails_the_run_and_says_how_to_store_one() {
    let server = ApiServer::start(|_| error(401, "unauthorized", "API token is invalid."));
    let home = home_for(&server);
    let (report, out) = sync(home.path(), &server, DB);
    assert!(!out.status.success());
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["admitted"], 0);
    let errors = errors(&report);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("notion refused the token (401")
                && e.contains("levh connector secret set notion")),
        "{errors:?}"
    );
    assert!(!contains(&out.stdout, TOKEN) && !contains(&out.stderr, TOKEN));
}

#[test]
fn a_redirect_to_a_host_that_was_not_granted_is_denied() {
    let port = Arc::new(std::sync::Mutex::new(String::new()));
    let server = {
        let port = port.clone();
        ApiServer::start(move |seen| {
            let port = port.lock().unwrap().clone();
            Reply::status(307, json!({}))
                .header("Location", &format!("http://127.0.0.2:{port}{}", seen.url))
        })
    };
    let port_number = server.authority.rsplit(':').next().unwrap().to_owned();
    *port.lock().unwrap() = port_number.clone();
    let home = home_for(&server);
    let (report, out) = sync(home.path(), &server, DB);
    assert!(!out.status.success());
    assert_eq!(report["status"], "failed", "{report}");
    let errors = errors(&report);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("denied") && e.contains(&format!("127.0.0.2:{port_number}"))),
        "{errors:?}"
    );
    assert_eq!(server.seen().len(), 1, "the redirect was not sent anywhere");
}

#[test]
fn without_a_host_grant_the_sync_is_denied_and_names_the_grant_command() {
    let server = ApiServer::start(notion);
    let home = tempfile::tempdir().unwrap();
    store_token(home.path());
    let (report, out) = sync(home.path(), &server, DB);
    assert!(!out.status.success());
    assert_eq!(report["status"], "failed", "{report}");
    let errors = errors(&report);
    let command = format!("levh connector grant notion --host {}", server.authority);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("denied") && e.contains(&command)),
        "{errors:?}"
    );
    assert!(server.seen().is_empty(), "nothing left the sandbox");
}

/// A page archived in Notion after the first sync comes back (edited, `archived: true`)
/// in the next incremental query: its memory is retired and named in the report; the
/// other pages are untouched; a third sync changes nothing.
#[test]
fn a_page_archived_in_notion_is_retired_at_the_next_sync() {
    let archived = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = archived.clone();
    let server = ApiServer::start(move |seen: &Seen| {
        if flag.load(std::sync::atomic::Ordering::SeqCst)
            && seen.path() == format!("/v1/databases/{DB}/query")
        {
            let mut atlas = pages().into_iter().find(|p| p["id"] == ATLAS).unwrap();
            atlas["archived"] = serde_json::json!(true);
            atlas["last_edited_time"] = serde_json::json!("2026-03-10T09:00:00.000Z");
            return Reply::json(list(vec![atlas], None, "page_or_database"));
        }
        notion(seen)
    });
    let home = home_for(&server);
    let (first, _) = sync(home.path(), &server, DB);
    assert_eq!(first["admitted"], 3, "{first}");
    archived.store(true, std::sync::atomic::Ordering::SeqCst);
    let (second, out) = sync(home.path(), &server, DB);
    assert!(out.status.success(), "{second}");
    assert_eq!(second["retired"], 1, "{second}");
    assert_eq!(second["retirements"][0]["source_id"], ATLAS, "{second}");
    assert_eq!(
        second["retirements"][0]["reason"], "archived in Notion",
        "{second}"
    );
    let left = memories(home.path());
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|m| m["metadata"]["source_id"] != ATLAS));
    let (third, _) = sync(home.path(), &server, DB);
    assert_eq!(
        (third["retired"].as_u64(), third["admitted"].as_u64()),
        (Some(0), Some(0)),
        "{third}"
    );
}

/// A page deleted outright (gone from every query, never seen archived) is retired by
/// the full listing (`full_listing_hours=0`: every run); pages not edited since are named
/// without reading their blocks again; a third sync changes nothing.
#[test]
fn a_page_deleted_from_notion_is_retired_by_the_full_listing() {
    let deleted = Arc::new(AtomicBool::new(false));
    let flag = deleted.clone();
    let server = ApiServer::start(move |seen: &Seen| {
        if flag.load(Ordering::SeqCst) && seen.path() == format!("/v1/databases/{DB}/query") {
            assert!(
                body(seen).get("filter").is_none(),
                "a full listing has no filter"
            );
            let left: Vec<Value> = pages().into_iter().filter(|p| p["id"] != HIRING).collect();
            return Reply::json(list(left, None, "page_or_database"));
        }
        notion(seen)
    });
    let home = home_for(&server);
    let run = || {
        let out = levh(home.path())
            .args([
                "sync",
                "notion",
                "--json",
                "-c",
                "full_listing_hours=0",
                "-c",
            ])
            .arg(format!("base_url={}", server.base))
            .args(["-c", &format!("database_ids={DB}")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let first = run();
    assert_eq!(first["admitted"], 3, "{first}");
    deleted.store(true, Ordering::SeqCst);
    let before = server.seen().len();
    let second = run();
    assert_eq!(
        (
            second["retired"].as_u64(),
            second["unchanged"].as_u64(),
            second["admitted"].as_u64()
        ),
        (Some(1), Some(2), Some(0)),
        "{second}"
    );
    assert_eq!(second["retirements"][0]["source_id"], HIRING, "{second}");
    let blocks_read = server.seen()[before..]
        .iter()
        .filter(|s| s.path().starts_with("/v1/blocks/"))
        .count();
    assert!(
        blocks_read <= 1,
        "only the newest page is read again: {blocks_read}"
    );
    let left = memories(home.path());
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|m| m["metadata"]["source_id"] != HIRING));
    let third = run();
    assert_eq!(
        (third["retired"].as_u64(), third["admitted"].as_u64()),
        (Some(0), Some(0)),
        "{third}"
    );
}
