//! The memory's life cycle from outside, through the binary, REST and MCP stdio:
//! consolidation of a cluster into one summary (its members retired from default recall,
//! kept, found with `--as-of`, listed on the summary's page; pinned memories never
//! touched; undo restores them), and the short-term layer (what an agent stores in a
//! session stays out of other sessions' recall until it is used or marked important).

use serde_json::{Value, json};

use crate::support::{json, levh, ok, runtime, serve};

const THEN: &str = "2026-03-02T09:00:00Z";
const SOON: &str = "2026-03-02T10:00:00Z";
const NOW: &str = "2026-05-04T09:00:00Z";

fn at(home: &std::path::Path, now: &str) -> std::process::Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", now);
    command
}

fn capture(home: &std::path::Path, now: &str, args: &[&str]) -> String {
    let mut all = vec!["capture"];
    all.extend_from_slice(args);
    all.push("--json");
    json(at(home, now).args(&all))["memory_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{args:?} was not stored"))
        .to_owned()
}

/// The ids a recall returns, at `now` (optionally as of a world time or as a session).
fn recalled(home: &std::path::Path, now: &str, query: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["recall", query, "--no-reinforce", "--json", "-n", "20"];
    args.extend_from_slice(extra);
    json(at(home, now).args(&args))["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_cluster_is_consolidated_into_one_summary_found_as_of_before_and_undone() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let thread = [
        "The checkout integration test flaked again on the ARM runner.",
        "Checkout integration test flake traced to a shared Redis port on the CI runner.",
        "Pinned the Redis port for the checkout integration test; the flake is gone.",
    ];
    let members: Vec<String> = thread
        .iter()
        .map(|text| capture(home, THEN, &[text, "-p", "shop"]))
        .collect();
    // Related too, but pinned: never consolidated. And unrelated notes stay as they are.
    let pinned = capture(
        home,
        THEN,
        &[
            "Rule: the checkout integration test must run on every Redis upgrade.",
            "-p",
            "shop",
            "--pin",
        ],
    );
    let unrelated = [
        capture(
            home,
            THEN,
            &[
                "Quarterly budget review moved to Thursday with Dana.",
                "-p",
                "shop",
            ],
        ),
        capture(
            home,
            THEN,
            &[
                "Bought new running shoes for the spring marathon.",
                "-p",
                "shop",
            ],
        ),
    ];
    // Young memories are not candidates: nothing is old enough yet.
    let young = json(at(home, SOON).args(["consolidate", "--dry-run", "--json"]));
    assert_eq!(young["clusters"], json!([]), "{young}");

    // Two months on, a dry run shows the cluster and writes nothing.
    let dry = json(at(home, NOW).args(["consolidate", "--dry-run", "--json"]));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["clusters"].as_array().unwrap().len(), 1, "{dry}");
    // Oldest first; these were recorded at one instant, so compare them as a set.
    let sorted = |v: &Value| -> Vec<String> {
        let mut ids: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let mut expected = members.clone();
    expected.sort();
    assert_eq!(sorted(&dry["clusters"][0]["members"]), expected, "{dry}");
    assert_eq!(dry["clusters"][0]["summary_id"], Value::Null);
    let still = recalled(home, NOW, "Redis port flake", &[]);
    assert!(
        members.iter().all(|m| still.contains(m)),
        "a dry run retires nothing: {still:?}"
    );

    let done = json(at(home, NOW).args(["consolidate", "--json"]));
    assert_eq!(done["retired"], 3, "{done}");
    let summary = done["clusters"][0]["summary_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let text = done["clusters"][0]["summary"].as_str().unwrap();
    assert!(
        text.starts_with("Summary of 3 memories in shop, on 2026-03-02:")
            && thread
                .iter()
                .all(|t| text.contains(t.split(';').next().unwrap())),
        "{text}"
    );
    // Default recall finds the summary (and the pinned rule), not the retired members.
    let now_found = recalled(home, NOW, "Redis port flake", &[]);
    assert!(now_found.contains(&summary), "{now_found:?}");
    assert!(
        members.iter().all(|m| !now_found.contains(m)),
        "{now_found:?}"
    );
    assert!(recalled(home, NOW, "checkout Redis upgrade rule", &[]).contains(&pinned));
    let pinned_now = json(at(home, NOW).args(["show", &pinned, "--json"]));
    assert_eq!(
        pinned_now["superseded_by"],
        Value::Null,
        "pinned: never consolidated"
    );
    for id in &unrelated {
        assert_eq!(
            json(at(home, NOW).args(["show", id, "--json"]))["superseded_by"],
            Value::Null
        );
    }
    // As of before the consolidation, the raw episodes are there.
    let before = recalled(home, NOW, "Redis port flake", &["--as-of", SOON]);
    assert!(members.iter().all(|m| before.contains(m)), "{before:?}");
    // The summary's page lists its members, oldest first; each member names its summary.
    let shown = json(at(home, NOW).args(["show", &summary, "--json"]));
    assert_eq!(shown["kind"], "summary");
    let listed: Vec<Value> = shown["consolidated_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(sorted(&Value::Array(listed)), expected);
    let member = json(at(home, NOW).args(["show", &members[0], "--json"]));
    assert_eq!(member["superseded_by"], summary.as_str());

    // REST: the page's list, a dry run finding nothing more to do.
    let (mut server, address) = serve(home, &[("LEVH_NOW", NOW)]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let page: Value = agent
        .get(format!(
            "http://{address}/api/memories/{summary}/consolidated"
        ))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(page["memories"].as_array().unwrap().len(), 3, "{page}");
    let again: Value = agent
        .post(format!("http://{address}/api/consolidations"))
        .send_json(json!({"dry_run": true}))
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(
        again["clusters"],
        json!([]),
        "a summary is never consolidated again: {again}"
    );
    let mut bad = agent
        .post(format!("http://{address}/api/consolidations"))
        .send_json(json!({"older_than_days": -1}))
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(
        bad.body_mut()
            .read_to_string()
            .unwrap()
            .contains("older_than_days")
    );
    let mut not_summary = agent
        .post(format!(
            "http://{address}/api/consolidations/{}/undo",
            unrelated[0]
        ))
        .header("content-type", "application/json")
        .send_empty()
        .unwrap();
    assert_eq!(not_summary.status().as_u16(), 400);
    assert!(
        not_summary
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("is not the summary of a consolidation")
    );
    server.kill().unwrap();
    server.wait().unwrap();

    // Undo: the members live again as they were, the summary is forgotten.
    let undone = json(at(home, NOW).args(["consolidate", "undo", &summary, "--json"]));
    assert_eq!(sorted(&undone["restored"]), expected, "{undone}");
    let after = recalled(home, NOW, "Redis port flake", &[]);
    assert!(members.iter().all(|m| after.contains(m)), "{after:?}");
    assert!(!after.contains(&summary));
    let restored = json(at(home, NOW).args(["show", &members[0], "--json"]));
    assert_eq!(
        (
            restored["superseded_by"].clone(),
            restored["valid_to"].clone()
        ),
        (Value::Null, Value::Null)
    );
    let twice = at(home, NOW)
        .args(["consolidate", "undo", &summary])
        .output()
        .unwrap();
    assert!(!twice.status.success());
    assert!(String::from_utf8_lossy(&twice.stderr).contains("was undone already"));

    // MCP: the same cluster found again, through the admin profile's tool.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "consolidation-test",
            &[("LEVH_NOW", NOW), ("LEVH_MCP_PROFILE", "admin")],
        )
        .await;
        let found = crate::mcp::ok(&client, "consolidate", json!({"dry_run": true})).await;
        assert_eq!(
            sorted(&found["clusters"][0]["members"]),
            expected,
            "{found}"
        );
        let written = crate::mcp::ok(&client, "consolidate", json!({"project": "shop"})).await;
        let id = written["clusters"][0]["summary_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let back = crate::mcp::ok(&client, "undo_consolidation", json!({"id": id})).await;
        assert_eq!(back["restored"].as_array().unwrap().len(), 3, "{back}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn working_memory_stays_in_its_session_until_used_or_marked_important() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let session =
        json(at(home, THEN).args(["session", "start", "-p", "rocket", "--json"]))["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let scratch = capture(
        home,
        THEN,
        &[
            "Scratch: the flaky upload retries use a 250 ms jitter window.",
            "--session",
            &session,
        ],
    );
    let used = capture(
        home,
        THEN,
        &[
            "The upload endpoint moved to the v2 path behind the gateway.",
            "--session",
            &session,
        ],
    );
    let important = capture(
        home,
        THEN,
        &[
            "Never deploy the billing service on Fridays.",
            "--session",
            &session,
            "--importance",
            "0.9",
        ],
    );
    // Working memory: fast to fade, and named as such on its page.
    let shown = json(at(home, THEN).args(["show", &scratch, "--json"]));
    assert_eq!(shown["working_session"], session.as_str(), "{shown}");
    assert_eq!(shown["stability_hours"], 24.0);
    assert!(
        json(at(home, THEN).args(["show", &important, "--json"]))
            .get("working_session")
            .is_none()
    );

    // Outside its session, recall leaves working memory out; inside, it is found.
    assert!(recalled(home, THEN, "upload jitter window", &[]).is_empty());
    assert_eq!(
        recalled(home, THEN, "upload jitter window", &["--session", &session]).first(),
        Some(&scratch)
    );
    assert_eq!(
        recalled(home, THEN, "deploy billing Fridays", &[]),
        vec![important.clone()]
    );
    // The session uses one of them (a recall that reinforces), then ends.
    let hits = json(at(home, THEN).args([
        "recall",
        "upload endpoint v2 gateway",
        "-n",
        "1",
        "--session",
        &session,
        "--json",
    ]));
    assert_eq!(hits["results"][0]["id"], used.as_str(), "{hits}");
    ok(at(home, SOON).args(["session", "end", &session]));

    // Used: long-term now, found by anyone, with a new memory's stability.
    assert_eq!(
        recalled(home, SOON, "upload endpoint v2 gateway", &[]),
        vec![used.clone()]
    );
    let promoted = json(at(home, SOON).args(["show", &used, "--json"]));
    assert!(promoted.get("working_session").is_none(), "{promoted}");
    assert!(
        promoted["stability_hours"].as_f64().unwrap() >= 168.0,
        "{promoted}"
    );
    // Unused: still working memory, out of default recall, and fading within days.
    assert!(!recalled(home, SOON, "upload jitter window", &[]).contains(&scratch));
    let fading = json(at(home, "2026-03-05T09:00:00Z").args(["show", &scratch, "--json"]));
    assert!(fading["retention"].as_f64().unwrap() < 0.35, "{fading}");
    // Until a person reinforces it: then it is long-term like any other memory.
    ok(at(home, SOON).args(["reinforce", &scratch]));
    assert_eq!(
        recalled(home, SOON, "upload jitter window", &[]).first(),
        Some(&scratch)
    );
    let history = json(at(home, SOON).args(["show", &scratch, "--history", "--json"]));
    assert!(
        history["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "promote"),
        "{history}"
    );

    // MCP: the same rule for an agent's own session.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "working-memory-test",
            &[("LEVH_NOW", SOON), ("LEVH_MCP_PROFILE", "admin")],
        )
        .await;
        let opened = crate::mcp::ok(&client, "create_session", json!({"project": "rocket"})).await;
        let mine = opened["session_id"].as_str().unwrap().to_owned();
        crate::mcp::ok(
            &client,
            "store_memory",
            json!({"content": "Draft idea: partition the ingest backlog by customer shard.", "session_id": mine}),
        )
        .await;
        let elsewhere =
            crate::mcp::ok(&client, "recall_memory", json!({"query": "partition ingest backlog shard"})).await;
        assert_eq!(elsewhere["results"], json!([]), "{elsewhere}");
        let inside = crate::mcp::ok(
            &client,
            "recall_memory",
            json!({"query": "partition ingest backlog shard", "session_id": mine}),
        )
        .await;
        assert_eq!(inside["results"].as_array().unwrap().len(), 1, "{inside}");
        client.cancel().await.unwrap();
    });
}

/// A file attached through every surface: its text (a real PDF made by a PDF library, a
/// Markdown and an HTML file) found by recall, script text not indexed, the same file
/// twice rejected as a duplicate, a file holding a secret refused, and a purge of the
/// memory erasing its files.
#[test]
fn an_attached_pdf_is_found_by_recall_and_purged_with_its_memory() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let fixtures = crate::support::repository_root().join("fixtures/attachments");
    let owner = capture(
        home,
        NOW,
        &[
            "Kestrel failover planning for the ingestion service.",
            "-p",
            "ops",
        ],
    );
    let pdf = fixtures.join("runbook.pdf");
    let attached = json(at(home, NOW).args(["attach", &owner, pdf.to_str().unwrap(), "--json"]));
    let text_memory = attached["attachment"]["memory_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        attached["attachment"]["media_type"], "application/pdf",
        "{attached}"
    );
    let sha = attached["attachment"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let kept = home.join("attachments").join(&sha[..2]).join(&sha);
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&pdf).unwrap());
    // Recall finds the PDF's text, page one and page two, in the owner's project.
    for query in [
        "quiesce the Kestrel ingestion workers",
        "heliotrope-7 standby",
    ] {
        let hits = json(at(home, NOW).args(["recall", query, "--no-reinforce", "--json"]));
        assert_eq!(
            hits["results"][0]["id"],
            text_memory.as_str(),
            "{query}: {hits}"
        );
        assert_eq!(hits["results"][0]["kind"], "attachment");
        assert_eq!(hits["results"][0]["project"], "ops");
    }
    // The same file again: the gate rejects it as a duplicate of the first, keeps nothing.
    let again = at(home, NOW)
        .args(["attach", &owner, pdf.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["capture"]["verdict"], "reject", "{again}");

    // A secret in a file: refused by name, nothing stored.
    let secret = home.join("deploy-notes.txt");
    std::fs::write(
        &secret,
        "Deploy with token ghp_0123456789abcdefABCDEF0123456789abcd and then restart.",
    )
    .unwrap();
    let refused = at(home, NOW)
        .args(["attach", &owner, secret.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("'deploy-notes.txt' holds a secret (github-token)"),
        "{why}"
    );
    // A binary file: no text to derive, said so.
    let binary = home.join("photo.jpg");
    std::fs::write(&binary, [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x80, 0x81]).unwrap();
    let refused = at(home, NOW)
        .args(["attach", &owner, binary.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("'photo.jpg' is neither a PDF"));

    // REST: Markdown as base64; HTML through MCP. Script text is never indexed.
    use base64::Engine as _;
    let encode = |name: &str| {
        base64::engine::general_purpose::STANDARD
            .encode(std::fs::read(fixtures.join(name)).unwrap())
    };
    let (mut server, address) = serve(home, &[("LEVH_NOW", NOW)]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let md: Value = agent
        .post(format!("http://{address}/api/memories/{owner}/attachments"))
        .send_json(json!({"name": "notes.md", "content_base64": encode("notes.md")}))
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(md["attachment"]["media_type"], "text/markdown", "{md}");
    let mut bad = agent
        .post(format!("http://{address}/api/memories/{owner}/attachments"))
        .send_json(json!({"name": "x.txt", "content_base64": "not base64!"}))
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(
        bad.body_mut()
            .read_to_string()
            .unwrap()
            .contains("content_base64")
    );
    let listed: Value = agent
        .get(format!("http://{address}/api/memories/{owner}/attachments"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(
        listed["attachments"].as_array().unwrap().len(),
        2,
        "{listed}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    runtime().block_on(async {
        let (client, _child) =
            crate::mcp::spawn_stdio_with_env(home, "attach-test", &[("LEVH_NOW", NOW)]).await;
        let html = crate::mcp::ok(
            &client,
            "attach_file",
            json!({"id": owner, "name": "page.html", "content_base64": encode("page.html")}),
        )
        .await;
        assert_eq!(html["attachment"]["media_type"], "text/html", "{html}");
        client.cancel().await.unwrap();
    });
    assert!(!recalled(home, NOW, "Larkspur community garden rota", &[]).is_empty());
    assert!(!recalled(home, NOW, "sourdough starter feeding schedule", &[]).is_empty());
    assert!(
        recalled(home, NOW, "zanzibar-tollbooth-5521", &[]).is_empty(),
        "script text indexed"
    );

    // A backup carries the attached files with the store.
    let backup = json(at(home, NOW).args(["--json", "backup", "create"]));
    let in_backup: Vec<&str> = backup["manifest"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        in_backup.contains(&format!("attachments/{}/{sha}", &sha[..2]).as_str()),
        "{backup}"
    );

    // Purging the memory erases its attachments' memories and files.
    ok(at(home, NOW).args(["purge", &owner]));
    assert!(!kept.exists(), "the PDF outlived its memory");
    assert!(recalled(home, NOW, "quiesce the Kestrel ingestion workers", &[]).is_empty());
    let files: Vec<_> = walk(&home.join("attachments"));
    assert!(files.is_empty(), "{files:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect()
}

/// With a language model configured, the model writes each summary from the members (its
/// words pass the secret filter like anything stored); the members are retired the same.
#[test]
fn a_model_writes_the_summary_when_one_is_configured() {
    use crate::api_server::{ApiServer, Reply, Seen};
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    for text in [
        "The checkout integration test flaked again on the ARM runner.",
        "Checkout integration test flake traced to a shared Redis port on the CI runner.",
        "Pinned the Redis port for the checkout integration test; the flake is gone.",
    ] {
        capture(home, THEN, &[text, "-p", "shop"]);
    }
    let prompts: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let seen = prompts.clone();
    let server = ApiServer::start(move |request: &Seen| {
        let body: Value = serde_json::from_str(&request.body).unwrap();
        seen.lock()
            .unwrap()
            .push(body["messages"][1]["content"].as_str().unwrap().to_owned());
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content":
            "The checkout test flaked on a shared Redis port; pinning the port fixed it. Token ghp_0123456789abcdefABCDEF0123456789abcd."}}]}),
        )
    });
    let done = json(
        at(home, NOW)
            .env("LEVH_LLM_URL", format!("{}/v1", server.base))
            .env("LEVH_LLM_MODEL", "fake-chat")
            .args(["consolidate", "--json"]),
    );
    let summary = done["clusters"][0]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("The checkout test flaked on a shared Redis port"),
        "{done}"
    );
    assert!(
        !summary.contains("ghp_"),
        "a model's secret was stored: {summary}"
    );
    assert_eq!(done["retired"], 3);
    let prompt = prompts.lock().unwrap()[0].clone();
    assert!(
        prompt.contains("shared Redis port") && prompt.contains("Extractive draft"),
        "{prompt}"
    );
    let id = done["clusters"][0]["summary_id"].as_str().unwrap();
    let shown = json(at(home, NOW).args(["show", id, "--json"]));
    assert!(
        shown["admission"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("written by a language model"),
        "{shown}"
    );
}

/// `--limit N` compares the N oldest candidates (the ones a run owes most), not the newest.
#[test]
fn a_limited_consolidation_takes_the_oldest_candidates() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let oldest: Vec<String> = [
        "The checkout integration test flaked again on the ARM runner.",
        "Checkout integration test flake traced to a shared Redis port on the CI runner.",
        "Pinned the Redis port for the checkout integration test; the flake is gone.",
    ]
    .iter()
    .map(|text| capture(home, THEN, &[text, "-p", "shop"]))
    .collect();
    // More newer candidates than one page of the store's list (1,000): the oldest lie
    // beyond the first page.
    let newer = home.join("newer.jsonl");
    let lines: Vec<String> = (0..1_005)
        .map(|n| {
            json!({"content": crate::support::distinct_sentence(n), "project": "shop"}).to_string()
        })
        .collect();
    std::fs::write(&newer, lines.join("\n")).unwrap();
    crate::support::ok(at(home, SOON).arg("import").arg(&newer));
    let dry = json(at(home, NOW).args(["consolidate", "--dry-run", "--limit", "3", "--json"]));
    assert_eq!(dry["considered"], 3, "{dry}");
    let mut members: Vec<String> = dry["clusters"][0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    members.sort();
    let mut expected = oldest.clone();
    expected.sort();
    assert_eq!(members, expected, "{dry}");
}
