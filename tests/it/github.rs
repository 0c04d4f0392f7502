//! The github connector against a loopback API server (127.0.0.1 only) serving
//! recorded-shape responses, run through `levh sync` as a user runs it: host grants,
//! a stored token, pages, incremental re-syncs, rate limits, refusals.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::api_server::{ApiServer, Reply, Seen};
use crate::support::{levh, ok};

const TOKEN: &str = "ghp_levhTestToken0123456789abcdefABCDEF";

fn issue(base: &str, number: u64, updated: &str, comments: u64) -> Value {
    json!({
        "url": format!("{base}/repos/acme/rocket/issues/{number}"),
        "html_url": format!("https://github.example/acme/rocket/issues/{number}"),
        "number": number,
        "title": format!("Launch checklist item {number}"),
        "body": format!("Step {number} of the launch needs a rollback plan before Friday."),
        "state": "open",
        "user": {"login": "ada", "id": 1},
        "assignees": [{"login": "grace", "id": 2}],
        "labels": [{"name": "launch"}],
        "comments": comments,
        "created_at": "2026-03-01T09:00:00Z",
        "updated_at": updated,
        "closed_at": null,
    })
}

/// A small GitHub: acme/rocket has two pages of issues (the second a merged pull
/// request), comments on #1 and one release; acme/ghost does not exist.
fn github(base_holder: Arc<std::sync::OnceLock<String>>) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |seen: &Seen| {
        let base = base_holder.get().unwrap().clone();
        match seen.path() {
            "/repos/acme/rocket/issues" if seen.query("since").is_some() => Reply::json(json!([])),
            "/repos/acme/rocket/issues" if seen.query("page").as_deref() == Some("2") => {
                let mut pr = issue(&base, 2, "2026-03-04T10:00:00Z", 0);
                pr["title"] = json!("Add the rollback script");
                pr["pull_request"] = json!({"merged_at": "2026-03-04T10:00:00Z"});
                Reply::json(json!([pr]))
            }
            "/repos/acme/rocket/issues" => Reply::json(json!([issue(&base, 1, "2026-03-03T10:00:00Z", 1)])).header(
                "Link",
                &format!(
                    "<{base}/repos/acme/rocket/issues?state=all&per_page=100&page=2>; rel=\"next\", <{base}/repos/acme/rocket/issues?page=2>; rel=\"last\""
                ),
            ),
            "/repos/acme/rocket/issues/1/comments" => Reply::json(json!([{
                "user": {"login": "linus"}, "body": "The rollback plan is in the runbook.",
                "created_at": "2026-03-02T12:00:00Z",
            }])),
            "/repos/acme/rocket/releases" => Reply::json(json!([{
                "id": 77, "tag_name": "v2.0.0", "name": "Rocket 2", "draft": false, "prerelease": false,
                "body": "Faster launches.", "author": {"login": "ada"},
                "published_at": "2026-03-05T08:00:00Z",
                "html_url": "https://github.example/acme/rocket/releases/tag/v2.0.0",
            }])),
            _ => Reply::status(404, json!({"message": "Not Found"})),
        }
    }
}

fn start() -> ApiServer {
    let base = Arc::new(std::sync::OnceLock::new());
    let server = ApiServer::start(github(base.clone()));
    base.set(server.base.clone()).unwrap();
    server
}

fn grant(home: &Path, host: &str) {
    ok(levh(home).args(["connector", "grant", "github", "--host", host]));
}

fn store_token(home: &Path) {
    use std::io::Write;
    let mut child = levh(home)
        .args(["connector", "secret", "set", "github"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{TOKEN}").unwrap();
    assert!(child.wait().unwrap().success());
}

/// Runs `levh sync github` (success or not) and returns its JSON report and output.
fn sync(home: &Path, server: &ApiServer, repos: &str) -> (Value, Output) {
    sync_at(home, server, repos, "2026-03-20T12:00:00Z")
}

/// [`sync`] with the clock at `now`.
fn sync_at(home: &Path, server: &ApiServer, repos: &str, now: &str) -> (Value, Output) {
    let output = levh(home)
        .env("LEVH_NOW", now)
        .args(["sync", "github", "--json", "-c"])
        .arg(format!("base_url={}", server.base))
        .args(["-c", &format!("repos={repos}")])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (report, output)
}

fn memories(home: &Path) -> Vec<Value> {
    let out = ok(levh(home).args(["list", "--json", "--limit", "100"]));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["memories"]
        .as_array()
        .unwrap()
        .clone()
}

fn file_contains(path: &Path, needle: &str) -> bool {
    std::fs::read(path)
        .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

#[test]
fn issues_pulls_and_releases_are_stored_once_with_the_token_only_on_the_wire() {
    let home = tempfile::tempdir().unwrap();
    let server = start();
    grant(home.path(), &server.authority);
    store_token(home.path());

    let (report, output) = sync(home.path(), &server, "acme/rocket,acme/ghost");
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["admitted"], 3, "{report}");
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .starts_with("acme/ghost: repository not found"),
        "{errors:?}"
    );

    let stored = memories(home.path());
    let by_id = |id: &str| {
        stored
            .iter()
            .find(|m| m["metadata"]["source_id"] == id)
            .unwrap_or_else(|| panic!("{id} not stored: {stored:?}"))
            .clone()
    };
    let one = by_id("acme/rocket#1");
    assert_eq!(one["kind"], "issue");
    assert_eq!(one["valid_from"], "2026-03-01T09:00:00Z");
    let content = one["content"].as_str().unwrap();
    assert!(
        content.contains("Issue #1 in acme/rocket: Launch checklist item 1"),
        "{content}"
    );
    assert!(
        content.contains("- linus (2026-03-02): The rollback plan is in the runbook."),
        "{content}"
    );
    assert_eq!(by_id("acme/rocket#2")["kind"], "pull_request");
    assert!(
        by_id("acme/rocket@release/77")["content"]
            .as_str()
            .unwrap()
            .contains("Release Rocket 2 (v2.0.0)")
    );

    // Every request carried the token the host attached; the guest never had it.
    let seen = server.seen();
    assert!(seen.len() >= 5, "{seen:?}");
    for request in &seen {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str()),
            "{request:?}"
        );
        assert_eq!(request.header("x-github-api-version"), Some("2022-11-28"));
    }

    // The second run of the same configuration asks only for what changed and stores
    // nothing new (a different repository list keeps a cursor of its own).
    let (again, _) = sync(home.path(), &server, "acme/rocket,acme/ghost");
    assert_eq!(again["status"], "ok", "{again}");
    assert_eq!(again["admitted"], 0, "{again}");
    let since: Vec<String> = server
        .seen()
        .iter()
        .filter_map(|s| s.query("since"))
        .collect();
    assert_eq!(
        since,
        ["2026-03-04T10:00:00Z"],
        "incremental from the newest update seen"
    );
    assert_eq!(memories(home.path()).len(), 3);

    // The token is nowhere but the 0600 credential file.
    let status = ok(levh(home.path()).args(["sync", "status", "--json"]));
    assert!(!String::from_utf8_lossy(&status.stdout).contains(TOKEN));
    assert!(!String::from_utf8_lossy(&output.stderr).contains(TOKEN));
    for file in ["levh.db", "levh.db-wal"] {
        assert!(
            !file_contains(&home.path().join(file), TOKEN),
            "{file} holds the token"
        );
    }
    let inspect = ok(levh(home.path()).args(["connector", "inspect", "github", "--json"]));
    let inspect_text = String::from_utf8_lossy(&inspect.stdout);
    assert!(!inspect_text.contains(TOKEN), "{inspect_text}");
    assert!(
        inspect_text.contains("\"token_stored\": true"),
        "{inspect_text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.path().join("plugins/github/credential"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn a_rate_limit_fails_the_run_clearly_and_the_next_run_resumes_without_duplicates() {
    let home = tempfile::tempdir().unwrap();
    let base = Arc::new(std::sync::OnceLock::new());
    let second_page_calls = Arc::new(AtomicUsize::new(0));
    let inner = github(base.clone());
    let calls = second_page_calls.clone();
    let server = ApiServer::start(move |seen| {
        if seen.query("page").as_deref() == Some("2") && calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::status(
                429,
                json!({"message": "You have exceeded a secondary rate limit."}),
            )
            .header("Retry-After", "7");
        }
        inner(seen)
    });
    base.set(server.base.clone()).unwrap();
    grant(home.path(), &server.authority);

    let (first, output) = sync(home.path(), &server, "acme/rocket");
    assert!(!output.status.success());
    assert_eq!(first["status"], "failed", "{first}");
    assert_eq!(first["admitted"], 1, "the first page was stored: {first}");
    let text = first.to_string();
    assert!(
        text.contains("rate limited") && text.contains("retry after 7 s"),
        "{text}"
    );

    let (second, _) = sync(home.path(), &server, "acme/rocket");
    assert_eq!(second["status"], "ok", "{second}");
    assert_eq!(second["admitted"], 2, "{second}");
    let ids: Vec<String> = memories(home.path())
        .iter()
        .map(|m| m["metadata"]["source_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 3, "no duplicates: {ids:?}");
    assert_eq!(
        server
            .seen()
            .iter()
            .filter(|s| s.query("page").is_none() && s.path() == "/repos/acme/rocket/issues")
            .count(),
        1,
        "the second run resumed at page 2, not from the start"
    );
}

#[test]
fn a_refused_token_is_a_clear_failure() {
    let home = tempfile::tempdir().unwrap();
    let server = ApiServer::start(|_| {
        Reply::status(
            401,
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
        )
    });
    grant(home.path(), &server.authority);
    let (report, output) = sync(home.path(), &server, "acme/rocket");
    assert!(!output.status.success());
    assert_eq!(report["status"], "failed");
    let text = report.to_string();
    assert!(
        text.contains("401 Bad credentials") && text.contains("levh connector secret set github"),
        "{text}"
    );
    assert_eq!(memories(home.path()).len(), 0);
}

#[test]
fn hosts_the_user_did_not_grant_are_unreachable() {
    let home = tempfile::tempdir().unwrap();
    let server = start();

    // Nothing granted: refused before any connection, with the command that allows it.
    let (report, _) = sync(home.path(), &server, "acme/rocket");
    assert_eq!(report["status"], "failed");
    let text = report.to_string();
    assert!(
        text.contains("denied")
            && text.contains(&format!(
                "levh connector grant github --host {}",
                server.authority
            )),
        "{text}"
    );
    assert!(server.seen().is_empty(), "no request reached the server");

    // Another host granted: still not this one.
    grant(home.path(), "api.github.com");
    let (report, _) = sync(home.path(), &server, "acme/rocket");
    assert_eq!(report["status"], "failed");
    assert!(server.seen().is_empty());

    // A redirect to a host that was not granted is refused, naming it.
    grant(home.path(), &server.authority);
    let port = server.authority.rsplit(':').next().unwrap().to_owned();
    let redirecting = ApiServer::start(move |_| Reply {
        status: 307,
        headers: vec![(
            "Location".into(),
            format!("http://localhost:{port}/repos/acme/rocket/issues"),
        )],
        body: String::new(),
    });
    grant(home.path(), &redirecting.authority);
    let (report, _) = sync(home.path(), &redirecting, "acme/rocket");
    assert_eq!(report["status"], "failed", "{report}");
    let text = report.to_string();
    assert!(
        text.contains("denied")
            && text.contains(&format!(
                "localhost:{}",
                server.authority.rsplit(':').next().unwrap()
            )),
        "{text}"
    );
    assert!(
        server.seen().is_empty(),
        "the redirect never reached the other host"
    );
    assert_eq!(redirecting.seen().len(), 1);
}

/// An issue deleted or transferred out of a repository vanishes from GitHub's list: the
/// daily full listing (every issue, unchanged ones named without their comments) retires
/// its memory and names it; runs in between ask only for what changed and retire nothing.
#[test]
fn issues_deleted_or_transferred_are_retired_by_the_daily_full_listing() {
    let after = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let base = Arc::new(std::sync::OnceLock::<String>::new());
    let (flag, base_of) = (after.clone(), base.clone());
    let before = github(base.clone());
    let server = ApiServer::start(move |seen: &Seen| {
        if !flag.load(Ordering::SeqCst) || seen.path() != "/repos/acme/rocket/issues" {
            return before(seen);
        }
        if seen.query("since").is_some() {
            return Reply::json(json!([]));
        }
        // #2 was transferred to another repository; #1 is as it was; #5 is new.
        let base = base_of.get().unwrap();
        let mut new = issue(base, 5, "2026-03-21T10:00:00Z", 0);
        new["title"] = json!("Paint the launch pad before the inspection");
        Reply::json(json!([issue(base, 1, "2026-03-03T10:00:00Z", 1), new]))
    });
    base.set(server.base.clone()).unwrap();
    let home = tempfile::tempdir().unwrap();
    grant(home.path(), &server.authority);
    store_token(home.path());

    let (first, _) = sync_at(home.path(), &server, "acme/rocket", "2026-03-20T12:00:00Z");
    assert_eq!(first["admitted"], 3, "{first}");
    after.store(true, Ordering::SeqCst);

    // An hour later: incremental, nothing retired.
    let (soon, _) = sync_at(home.path(), &server, "acme/rocket", "2026-03-20T13:00:00Z");
    assert_eq!(
        (soon["retired"].as_u64(), soon["admitted"].as_u64()),
        (Some(0), Some(0)),
        "{soon}"
    );
    assert_eq!(memories(home.path()).len(), 3);

    // A day later: the full listing.
    let asked_before = server.seen().len();
    let (day, out) = sync_at(home.path(), &server, "acme/rocket", "2026-03-21T13:00:00Z");
    assert!(out.status.success(), "{day}");
    assert_eq!(
        (
            day["retired"].as_u64(),
            day["admitted"].as_u64(),
            day["unchanged"].as_u64()
        ),
        (Some(1), Some(1), Some(2)),
        "#2 retired, #5 new, #1 (named) and the release unchanged: {day}"
    );
    assert_eq!(day["retirements"][0]["source_id"], "acme/rocket#2", "{day}");
    assert_eq!(day["retirements"][0]["reason"], levh_core::sync::NOT_LISTED);
    let asked: Vec<String> = server.seen()[asked_before..]
        .iter()
        .map(|s| s.path().to_owned())
        .collect();
    assert!(
        !asked.iter().any(|p| p.contains("/comments")),
        "unchanged #1 is named, not fetched again: {asked:?}"
    );
    let left = memories(home.path());
    let ids: Vec<&str> = left
        .iter()
        .map(|m| m["metadata"]["source_id"].as_str().unwrap())
        .collect();
    assert!(
        !ids.contains(&"acme/rocket#2") && ids.contains(&"acme/rocket#5"),
        "{ids:?}"
    );

    // What levh knew before the listing still has it.
    let recalled = |known_at: Option<&str>| -> bool {
        let mut command = levh(home.path());
        command.args(["recall", "rollback script", "--json", "--no-reinforce"]);
        if let Some(at) = known_at {
            command.args(["--known-at", at]);
        }
        let out = ok(&mut command);
        String::from_utf8_lossy(&out.stdout).contains("Add the rollback script")
    };
    assert!(!recalled(None));
    assert!(recalled(Some("2026-03-21T00:00:00Z")));

    // Nothing more to do.
    let (again, _) = sync_at(home.path(), &server, "acme/rocket", "2026-03-21T14:00:00Z");
    assert_eq!(
        (again["retired"].as_u64(), again["admitted"].as_u64()),
        (Some(0), Some(0)),
        "{again}"
    );
}

/// `levh connector run FILE.wasm --host H`: an uninstalled HTTP connector reaches the
/// hosts typed for that run (within what its manifest asks for), and no other; nothing is
/// kept.
#[test]
fn an_uninstalled_http_connector_runs_with_the_hosts_typed_for_the_run() {
    let home = tempfile::tempdir().unwrap();
    let server = start();
    let work = tempfile::tempdir().unwrap();
    let wasm = work.path().join("github.wasm");
    std::fs::write(&wasm, levh_builtins::connector("github").unwrap()).unwrap();
    let run = |hosts: &[&str]| {
        let mut command = levh(home.path());
        command.args(["connector", "run", "--json"]).arg(&wasm);
        command.args([
            "-c",
            &format!("base_url={}", server.base),
            "-c",
            "repos=acme/rocket",
        ]);
        for host in hosts {
            command.args(["--host", host]);
        }
        command.output().unwrap()
    };
    let reached = run(&[&server.authority]);
    let report: Value = serde_json::from_slice(&reached.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&reached.stderr)));
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["admitted"], 3, "{report}");

    let without = run(&[]);
    let report: Value = serde_json::from_slice(&without.stdout).unwrap();
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["failure"], "denied", "{report}");

    // A host the manifest asks for by config key is any host: a literal one it never
    // names is refused only by the run (denied), while a malformed one is refused here.
    let malformed = run(&["not a host"]);
    assert!(!malformed.status.success());
    assert!(
        String::from_utf8_lossy(&malformed.stdout).contains("--host not a host"),
        "{}",
        String::from_utf8_lossy(&malformed.stdout)
    );
    assert_eq!(memories(home.path()).len(), 0, "nothing is kept");
}
