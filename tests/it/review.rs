//! `levh review` from outside: the fading queue as a flow through the binary (a decision
//! per memory, interactive from standard input, one memory by id), over MCP stdio and
//! REST; each decision lands in the memory's history, a keep doubles the interval before
//! the memory is shown again, and a snoozed memory comes back when its days are over.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::{json, levh, runtime, serve};

const THEN: &str = "2026-03-02T09:00:00Z";
const NOW: &str = "2026-05-04T09:00:00Z";

fn at(home: &std::path::Path, now: &str) -> std::process::Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", now);
    command
}

fn queue(home: &std::path::Path, now: &str) -> Vec<String> {
    json(at(home, now).args(["review", "--json"]))["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["memory"]["content"].as_str().unwrap().to_owned())
        .collect()
}

fn history(home: &std::path::Path, id: &str) -> Vec<Value> {
    json(at(home, NOW).args(["show", id, "--history", "--json"]))["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "review")
        .map(|e| e["detail"].clone())
        .collect()
}

#[test]
fn a_review_decides_each_fading_memory_records_it_and_schedules_the_next() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let texts = [
        "The staging database is backed up nightly at two.",
        "Our team prefers squash merges for feature branches.",
        "The coffee machine on floor two needs descaling monthly.",
        "Kenji's birthday is on the fourteenth of March.",
        "The old VPN endpoint was vpn1.example.org.",
        "Design reviews need two approvals from the platform team.",
    ];
    let ids: Vec<String> = texts
        .iter()
        .map(|text| {
            json(at(home, THEN).args(["capture", text, "--json"]))["memory_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Two months on, every one of them is fading and waits for review.
    assert_eq!(queue(home, NOW).len(), 6);

    // One memory by id, from the command line: keep it, twice (1 day, then 2).
    let kept = json(at(home, NOW).args(["review", &ids[0], "--keep", "--json"]));
    assert_eq!(
        (kept["decision"].as_str(), kept["interval_days"].as_u64()),
        (Some("keep"), Some(1))
    );
    assert_eq!(kept["next_review"], "2026-05-05T09:00:00Z");
    assert!(
        !queue(home, NOW).contains(&texts[0].to_owned()),
        "put off until tomorrow"
    );
    let again =
        json(at(home, "2026-05-05T10:00:00Z").args(["review", &ids[0], "--keep", "--json"]));
    assert_eq!(
        (again["interval_days"].as_u64(), again["reviews"].as_u64()),
        (Some(2), Some(2))
    );

    // The rest interactively, one answer a line as a person types them: reinforce, a
    // typo (asked again), snooze 3 days, pin, weaken, forget.
    let mut child = at(home, NOW)
        .args(["review", "--interactive", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let order = queue(home, NOW);
    let answer = |text: &str| match texts.iter().position(|t| *t == text).unwrap() {
        1 => "r",
        2 => "s 3",
        3 => "p",
        4 => "w",
        5 => "f",
        other => panic!("memory {other} is not due"),
    };
    let mut typed = String::new();
    for (n, text) in order.iter().enumerate() {
        if n == 0 {
            typed.push_str("x\n");
        }
        typed.push_str(answer(text));
        typed.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("'x' is not one of k, r, w, p, s DAYS, f, n, q"),
        "{stderr}"
    );
    let decided: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(decided.len(), 5, "{decided:?}");

    // Each decision is in its memory's history; what it did holds.
    for (n, decision) in [(1, "reinforce"), (2, "snooze"), (3, "pin"), (4, "weaken")] {
        let reviews = history(home, &ids[n]);
        assert_eq!(reviews.len(), 1, "{}: {reviews:?}", texts[n]);
        assert_eq!(reviews[0]["decision"], decision);
    }
    assert_eq!(history(home, &ids[2])[0]["days"], 3);
    assert_eq!(history(home, &ids[0]).len(), 2);
    let pinned = json(at(home, NOW).args(["show", &ids[3], "--json"]));
    assert_eq!(pinned["pinned"], true);
    let forgotten = at(home, NOW)
        .args(["show", &ids[5], "--json"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forgotten.stdout).contains("forgotten"));
    // Nothing is due now (the weakened one tomorrow); the snoozed one after three days.
    assert!(queue(home, NOW).is_empty());
    let later = queue(home, "2026-05-07T10:00:00Z");
    assert!(later.contains(&texts[2].to_owned()), "{later:?}");
    assert!(
        !later.contains(&texts[1].to_owned()),
        "reinforced: no longer fading"
    );
    assert!(!later.contains(&texts[3].to_owned()), "pinned: never fades");

    // A decision that names nothing right changes nothing.
    let refused = at(home, NOW)
        .args(["review", &ids[2], "--snooze", "0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("0 is outside 1..3650"));
    assert_eq!(history(home, &ids[2]).len(), 1);

    // REST and MCP: the same queue and the same decision.
    let (mut server, address) = serve(home, &[("LEVH_NOW", "2026-05-07T10:00:00Z")]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let listed: Value = agent
        .get(format!("http://{address}/api/review"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let rest_ids: Vec<&str> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["memory"]["id"].as_str().unwrap())
        .collect();
    assert!(rest_ids.contains(&ids[2].as_str()), "{listed}");
    let mut bad = agent
        .post(format!("http://{address}/api/memories/{}/review", ids[2]))
        .send_json(json!({"decision": "archive"}))
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let body: Value = bad.body_mut().read_json().unwrap();
    assert!(
        body.to_string()
            .contains("'archive' is not keep, reinforce"),
        "{body}"
    );
    let kept: Value = agent
        .post(format!("http://{address}/api/memories/{}/review", ids[2]))
        .send_json(json!({"decision": "keep"}))
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(kept["decision"], "keep", "{kept}");
    server.kill().unwrap();
    server.wait().unwrap();

    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "review-test",
            &[
                ("LEVH_NOW", "2026-05-07T10:00:00Z"),
                ("LEVH_MCP_PROFILE", "admin"),
            ],
        )
        .await;
        let mcp_queue = crate::mcp::ok(&client, "list_review_memories", json!({})).await;
        let before = mcp_queue["memories"].as_array().unwrap().len();
        assert!(before >= 1, "{mcp_queue}");
        let id = mcp_queue["memories"][0]["memory"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let snoozed = crate::mcp::ok(
            &client,
            "review_memory",
            json!({"id": id, "decision": "snooze", "days": 30}),
        )
        .await;
        assert_eq!(snoozed["next_review"], "2026-06-06T10:00:00Z", "{snoozed}");
        let after = crate::mcp::ok(&client, "list_review_memories", json!({})).await;
        assert_eq!(after["memories"].as_array().unwrap().len(), before - 1);
        client.cancel().await.unwrap();
    });
}

/// A session summarised into one memory: on request (`levh summarize`, MCP
/// `summarize_session`) and when it ends with `LEVH_AUTO_SUMMARIZE=1` — what it stored,
/// decided and promised, in its project, through the gate (again with nothing new: a
/// duplicate); a session that stored nothing has no summary.
#[test]
fn a_session_is_summarised_into_one_memory_on_request_and_at_its_end() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let start = |project: &str| -> String {
        json(at(home, NOW).args(["session", "start", "-p", project, "--json"]))["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let session = start("rocket");
    for text in [
        "We decided to retry the upload three times with exponential backoff.",
        "I will add a test for the retry loop by Friday.",
        "The upload endpoint is https://upload.example.org/v2 behind the VPN.",
    ] {
        crate::support::ok(at(home, NOW).args(["capture", text, "--session", &session]));
    }
    crate::support::ok(
        at(home, NOW).args(["capture", "Not in the session: the office closes at six."]),
    );
    let summary = json(at(home, NOW).args(["summarize", &session, "--json"]));
    assert_eq!(summary["memories"], 3, "{summary}");
    let text = summary["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "Session {} in rocket: 3 memories stored.",
            &session[..8]
        )),
        "{text}"
    );
    assert!(text.contains("Decided:\n- We decided to retry the upload three times"));
    assert!(text.contains("Promised:\n- I will add a test for the retry loop by Friday."));
    assert!(!text.contains("office"), "only the session's memories");
    assert_eq!(summary["stored"]["verdict"], "admit");
    let id = summary["stored"]["memory_id"].as_str().unwrap();
    let memory = json(at(home, NOW).args(["show", id, "--json"]));
    assert_eq!(
        (memory["kind"].as_str(), memory["project"].as_str()),
        (Some("summary"), Some("rocket"))
    );
    assert_eq!(
        memory["metadata"]["session"]["memories"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let again = json(at(home, NOW).args(["summarize", &session, "--json"]));
    assert_eq!(again["stored"]["verdict"], "reject", "nothing new: {again}");

    // Ended with LEVH_AUTO_SUMMARIZE=1: the summary comes with the end.
    let second = start("rocket");
    crate::support::ok(at(home, NOW).args([
        "capture",
        "The staging cluster moves to the Frankfurt region next sprint.",
        "--session",
        &second,
    ]));
    let ended = json(
        at(home, NOW)
            .env("LEVH_AUTO_SUMMARIZE", "1")
            .args(["session", "end", &second, "--json"]),
    );
    assert!(ended["ended_at"].is_string());
    assert_eq!(ended["summary"]["memories"], 1, "{ended}");
    assert_eq!(ended["summary"]["stored"]["verdict"], "admit");
    // Without it, ending summarises nothing; an empty session has no summary.
    let empty = start("rocket");
    let plain = json(at(home, NOW).args(["session", "end", &empty, "--json"]));
    assert!(plain.get("summary").is_none(), "{plain}");
    let none = json(at(home, NOW).args(["summarize", &empty, "--json"]));
    assert!(none["text"].is_null() && none["stored"].is_null(), "{none}");
    let unknown = at(home, NOW)
        .args(["summarize", "no-such-session"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no session with id no-such-session")
    );

    // Over MCP: the same operation.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "summary-test",
            &[("LEVH_NOW", NOW), ("LEVH_MCP_PROFILE", "admin")],
        )
        .await;
        let over_mcp =
            crate::mcp::ok(&client, "summarize_session", json!({"session_id": second})).await;
        assert_eq!(over_mcp["memories"], 1);
        assert_eq!(
            over_mcp["stored"]["verdict"], "reject",
            "summarised at its end already"
        );
        client.cancel().await.unwrap();
    });
}
