//! The real binary, tried as a new user would.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{json, levh, ok};

const T0: &str = "2026-03-02T09:00:00Z";
const WEEK_LATER: &str = "2026-03-09T09:00:00Z";
const MONTH_LATER: &str = "2026-04-01T09:00:00Z";

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-3)
}

fn capture(home: &std::path::Path, args: &[&str]) -> String {
    let out = json(
        levh(home)
            .env("LEVH_NOW", T0)
            .arg("capture")
            .args(args)
            .arg("--json"),
    );
    assert_eq!(out["verdict"], "admit", "{out}");
    out["memory_id"].as_str().unwrap().to_owned()
}

#[test]
fn a_new_user_tour_of_decay_recall_feedback_and_pins() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let db = capture(
        home,
        &[
            "We use PostgreSQL 16 as the main database",
            "--project",
            "api",
        ],
    );
    let deploy = capture(
        home,
        &[
            "Deploys happen on Tuesdays after the standup",
            "--importance",
            "0.5",
        ],
    );
    let rule = capture(home, &["Never commit directly to main", "--pin"]);

    // recall returns the relevant one first
    let hits =
        json(
            levh(home)
                .env("LEVH_NOW", T0)
                .args(["recall", "which database do we use", "--json"]),
        )["results"]
            .clone();
    assert_eq!(hits[0]["id"], db.as_str(), "{hits}");
    for key in [
        "content",
        "score",
        "relevance",
        "similarity",
        "lexical",
        "retention",
        "importance",
        "frequency",
        "pinned",
        "stability_hours",
        "project",
        "source",
    ] {
        assert!(
            hits[0].get(key).is_some(),
            "recall JSON lacks {key}: {hits}"
        );
    }
    assert_eq!(hits[0]["project"], "api");

    // a week later, the memory nobody recalled is at half retention
    let shown = json(
        levh(home)
            .env("LEVH_NOW", WEEK_LATER)
            .args(["show", &deploy, "--json"]),
    );
    assert!(close(&shown["retention"], 0.5), "{shown}");
    for key in [
        "last_recalled_at",
        "recall_count",
        "created_at",
        "valid_from",
        "valid_to",
        "superseded_by",
        "kind",
    ] {
        assert!(shown.get(key).is_some(), "show JSON lacks {key}: {shown}");
    }
    // ... and the pinned one is untouched by time
    let pinned = json(
        levh(home)
            .env("LEVH_NOW", MONTH_LATER)
            .args(["show", &rule, "--json"]),
    );
    assert_eq!(pinned["retention"], 1.0);

    // a recall reinforces it: 168 h × 1.5 = 252 h, clock restarted
    let hits = json(levh(home).env("LEVH_NOW", WEEK_LATER).args([
        "recall",
        "when do deploys happen",
        "--json",
        "--explain",
    ]))["results"]
        .clone();
    assert_eq!(hits[0]["id"], deploy.as_str(), "{hits}");
    assert!(hits[0]["explain"]["relevance_term"].is_number(), "{hits}");
    assert!(hits[0]["explain"]["bm25"].is_number(), "{hits}");
    let shown = json(
        levh(home)
            .env("LEVH_NOW", WEEK_LATER)
            .args(["show", &deploy, "--json"]),
    );
    assert!(close(&shown["stability_hours"], 252.0), "{shown}");
    assert!(close(&shown["retention"], 1.0));
    assert_eq!(shown["recall_count"], 1);
    assert_eq!(shown["last_recalled_at"], WEEK_LATER);

    // unhelpful feedback weakens it without resetting the clock
    let weakened = json(levh(home).env("LEVH_NOW", "2026-03-10T09:00:00Z").args([
        "feedback",
        &deploy,
        "--unhelpful",
        "--json",
    ]));
    assert!(close(&weakened["stability_hours"], 126.0), "{weakened}");
    assert_eq!(weakened["last_recalled_at"], WEEK_LATER);
    assert!(close(&weakened["retention"], 0.5f64.powf(24.0 / 126.0)));

    // a month on, what was never used is fading; the pinned rule is not
    let fading = json(
        levh(home)
            .env("LEVH_NOW", MONTH_LATER)
            .args(["fading", "--json"]),
    );
    let fading: Vec<&str> = fading["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(fading.contains(&deploy.as_str()));
    assert!(!fading.contains(&rule.as_str()));

    // the curve predicts the same decay
    let curve = json(
        levh(home)
            .env("LEVH_NOW", T0)
            .args(["curve", &db, "--days", "7", "--json"]),
    );
    assert_eq!(curve["points"].as_array().unwrap().len(), 8);

    let stats = json(
        levh(home)
            .env("LEVH_NOW", WEEK_LATER)
            .args(["stats", "--json"]),
    );
    assert_eq!(stats["total"], 3);
    assert_eq!(stats["pinned"], 1);
}

#[test]
fn people_get_tables_and_a_checklist() {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args(["capture", "The CI runner has 2 cores"]));
    let recall = ok(levh(home.path()).args(["recall", "CI runner cores", "--explain"]));
    let text = String::from_utf8(recall.stdout).unwrap();
    assert!(
        text.contains("The CI runner has 2 cores")
            && text.contains("α·(1−rel)")
            && text.contains("bm25"),
        "{text}"
    );
    let doctor = String::from_utf8(ok(levh(home.path()).arg("doctor")).stdout).unwrap();
    for check in [
        "✓ store",
        "✓ schema",
        "✓ wal",
        "✓ fts5",
        // No model installed in a fresh home: hash works, with a warning saying how to
        // get semantic recall.
        "! embedder  hash mode (default)",
        "levh models install",
        "1 memories",
    ] {
        assert!(doctor.contains(check), "doctor lacks {check:?}:\n{doctor}");
    }
}

#[test]
fn capture_reads_standard_input_and_takes_every_option() {
    let home = tempfile::tempdir().unwrap();
    let mut child = levh(home.path())
        .args([
            "capture",
            "-",
            "--json",
            "--kind",
            "decision",
            "--source",
            "claude-code",
            "--valid-from",
            "2026-01-01",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"We chose SQLite over Postgres for the agent memory\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id = serde_json::from_slice::<Value>(&out.stdout).unwrap()["memory_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = json(levh(home.path()).args(["show", &id, "--json"]));
    assert_eq!(
        shown["content"],
        "We chose SQLite over Postgres for the agent memory"
    );
    assert_eq!(shown["kind"], "decision");
    assert_eq!(shown["source"], "claude-code");
    assert_eq!(shown["valid_from"], "2026-01-01T00:00:00Z");
}

#[test]
fn bad_input_gets_a_one_line_error_and_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let id = capture(home, &["The build cache lives in /var/cache/ci"]);
    let unknown = "0198c3a0-0000-7000-8000-000000000000";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["show", unknown], unknown),
        (vec!["forget", unknown], unknown),
        (vec!["pin", unknown], unknown),
        (vec!["feedback", unknown, "--unhelpful"], unknown),
        (vec!["show", "not-an-id"], "not-an-id"),
        (
            vec!["capture", "too important", "--importance", "1.5"],
            "outside 0..1",
        ),
        (
            vec!["capture", "odd", "--importance", "high"],
            "'high' is not a number",
        ),
        (
            vec!["recall", "cache", "--as-of", "yesterday"],
            "'yesterday' is not a time",
        ),
        (vec!["feedback", &id], "--helpful"),
    ];
    for (args, needle) in cases {
        let out = levh(home).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(
            stderr.contains(needle),
            "{args:?}: stderr lacks {needle:?}: {stderr}"
        );
    }
    let out = levh(home)
        .env("LEVH_NOW", "next tuesday")
        .args(["list"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("LEVH_NOW"));
    let out = levh(home)
        .env("LEVH_GAIN", "-1")
        .args(["list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("LEVH_GAIN"));

    let listed = json(levh(home).args(["list", "--json"]))["memories"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["recall_count"], 0);
    assert_eq!(listed[0]["stability_hours"], 168.0);
}

#[test]
fn the_config_file_sets_numbers_and_the_environment_overrides_it() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "stability_hours = 24\ngain = 1.0\n",
    )
    .unwrap();
    let id = capture(home.path(), &["Config file driven memory"]);
    let shown = json(levh(home.path()).args(["show", &id, "--json"]));
    assert_eq!(shown["stability_hours"], 24.0);
    let reinforced =
        json(
            levh(home.path())
                .env("LEVH_GAIN", "0.5")
                .args(["reinforce", &id, "--json"]),
        );
    assert!(
        close(&reinforced["stability_hours"], 24.0 * 1.5),
        "{reinforced}"
    );
}

#[test]
fn workspaces_are_separate_from_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args([
        "capture",
        "Team A uses Linear for tickets",
        "--workspace",
        "team-a",
    ]));
    let other =
        json(levh(home.path()).args(["recall", "tickets", "--json", "--workspace", "team-b"]));
    assert_eq!(other["results"].as_array().unwrap().len(), 0);
    let same = json(
        levh(home.path())
            .env("LEVH_WORKSPACE", "team-a")
            .args(["recall", "tickets", "--json"]),
    );
    assert_eq!(same["results"].as_array().unwrap().len(), 1);
}

#[test]
fn recall_min_similarity_on_the_command_line_silences_loose_matches() {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args(["capture", "prekubernetes and postkubernetes tooling"]));
    let recall = |floor: &str| {
        json(levh(home.path()).args([
            "recall",
            "kubernetes",
            "--json",
            "--no-reinforce",
            "--min-similarity",
            floor,
        ]))
    };
    assert_eq!(recall("0")["results"].as_array().unwrap().len(), 1);
    assert_eq!(recall("0.99")["results"], serde_json::json!([]));
    let out = levh(home.path())
        .args(["recall", "kubernetes", "--min-similarity", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("min_similarity"));
}

/// `levh list --json | head`: a reader that goes away ends the command quietly, with
/// success, as other Unix tools do — not with a panic and a backtrace.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let home = tempfile::tempdir().unwrap();
    // More than a pipe buffer (64 KiB) of output, so the write meets the closed pipe.
    for i in 0..40 {
        let words: Vec<String> = (0..400).map(|j| format!("w{i}x{j}")).collect();
        ok(levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["capture", &format!("Note {i}: {}", words.join(" "))]));
    }
    let mut child = levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["list", "--json", "--limit", "1000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Like `head` that has read what it wanted: the read end closes.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
}

/// At the terminal: content with nothing visible is refused with the reason.
#[test]
fn the_cli_refuses_content_with_nothing_visible() {
    let home = tempfile::tempdir().unwrap();
    let refused = json(levh(home.path()).env("LEVH_EMBEDDER", "hash").args([
        "capture",
        "\u{200B}\u{200B}\u{200B}\u{200B}",
        "--json",
    ]));
    assert_eq!(refused["verdict"], "reject", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("nothing visible"),
        "{refused}"
    );
    let listed = json(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["list", "--json"]),
    );
    assert_eq!(
        listed["memories"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
}

/// The gate's settings are read like every other: `LEVH_GATE_MIN_CHARS=50` refuses a
/// 10-character note, and a value that is not a number is an error naming the variable.
#[test]
fn the_gate_settings_in_the_environment_take_effect() {
    let home = tempfile::tempdir().unwrap();
    let stored = json(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .env("LEVH_GATE_MIN_CHARS", "50")
            .args(["capture", "short note", "--json"]),
    );
    assert_eq!(stored["verdict"], "reject", "{stored}");
    let output = levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .env("LEVH_GATE_MIN_CHARS", "abc")
        .args(["capture", "a note long enough for any gate"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("LEVH_GATE_MIN_CHARS"), "{stderr}");
    let listed = json(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["list", "--json"]),
    );
    assert_eq!(
        listed["memories"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
}

/// A typo in a setting is an error naming it and the nearest valid name — in the
/// environment and in config.toml — and a value of the wrong type names its key.
#[test]
fn unknown_settings_and_wrong_types_are_errors_naming_the_nearest_setting() {
    let home = tempfile::tempdir().unwrap();
    let refused = |command: &mut std::process::Command| {
        let output = command.output().unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = refused(levh(home.path()).env("LEVH_GIAN", "0.9").args(["stats"]));
    assert!(
        stderr.contains("LEVH_GIAN") && stderr.contains("LEVH_GAIN"),
        "{stderr}"
    );
    std::fs::write(home.path().join("config.toml"), "gian = 0.9\n").unwrap();
    let stderr = refused(levh(home.path()).args(["stats"]));
    assert!(
        stderr.contains("`gian`") && stderr.contains("`gain`"),
        "{stderr}"
    );
    std::fs::write(home.path().join("config.toml"), "gain = [1, 2]\n").unwrap();
    let stderr = refused(levh(home.path()).args(["stats"]));
    assert!(
        stderr.contains("`gain`") && stderr.contains("array"),
        "{stderr}"
    );
    std::fs::write(home.path().join("config.toml"), "gain = 0.9\n").unwrap();
    ok(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["stats"]));
}

/// `list --limit 0` is a mistake to name, not "no memories" on a store that has some.
#[test]
fn list_limit_zero_is_refused_naming_the_option() {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["capture", "Deploys happen on Fridays after the standup"]));
    let output = levh(home.path())
        .args(["list", "--limit", "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--limit"), "{stderr}");
}

/// `config.toml` keys that `levh serve` once accepted and ignored are honoured
/// (`allowed_hosts`, `cors_origins`, `mcp_profile`, `tz`), and a credential there (`token`)
/// is refused on every command, naming the environment variable to use: config.toml goes
/// into every backup, and a token set there was an open server.
#[test]
fn config_file_settings_reach_levh_serve_and_a_token_there_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        "allowed_hosts = \"memory.example.test\"\ncors_origins = \"https://app.example.test\"\nmcp_profile = \"minimal\"\ntz = \"Pacific/Kiritimati\"\nembedder = \"hash\"\n",
    )
    .unwrap();
    let (mut server, address) = crate::support::serve(home, &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    // A Host the file allows (a reverse proxy's name), and a write from an origin it allows.
    let by_name = agent
        .get(format!("http://{address}/api/health"))
        .header("Host", "memory.example.test")
        .call()
        .unwrap();
    assert_eq!(by_name.status(), 200);
    let other_name = agent
        .get(format!("http://{address}/api/health"))
        .header("Host", "rebound.example.test")
        .call()
        .unwrap();
    assert_eq!(other_name.status(), 403);
    let from_app = agent
        .post(format!("http://{address}/api/search"))
        .header("Origin", "https://app.example.test")
        .send_json(serde_json::json!({ "query": "anything at all" }))
        .unwrap();
    assert_eq!(from_app.status(), 200);
    let from_elsewhere = agent
        .post(format!("http://{address}/api/search"))
        .header("Origin", "https://evil.example.test")
        .send_json(serde_json::json!({ "query": "anything at all" }))
        .unwrap();
    assert_eq!(from_elsewhere.status(), 403);
    let settings: Value = agent
        .get(format!("http://{address}/api/settings"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(settings["mcp"]["profile"], "minimal", "{settings}");
    server.kill().unwrap();
    server.wait().unwrap();

    // The zone reaches the knowledge views: today in Kiritimati (UTC+14) is a day ahead
    // of UTC's from 10:00 UTC on.
    let timeline = json(
        levh(home)
            .env("LEVH_NOW", "2026-12-06T11:00:00Z")
            .args(["timeline", "--json"]),
    );
    assert!(
        timeline.to_string().contains("Pacific/Kiritimati"),
        "{timeline}"
    );

    std::fs::write(
        home.join("config.toml"),
        "token = \"0123456789abcdef0123\"\n",
    )
    .unwrap();
    for command in [&["stats"][..], &["serve", "--port", "0"][..]] {
        let output = levh(home).args(command).output().unwrap();
        assert!(
            !output.status.success(),
            "{command:?} ran with a token in config.toml"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("`token` cannot be set here")
                && stderr.contains("set LEVH_TOKEN in the environment"),
            "{stderr}"
        );
    }
}

/// `levh show` of a forgotten memory shows it, marked forgotten (it is kept for history
/// until purged), instead of saying there is no such memory; after a purge there is none.
#[test]
fn show_of_a_forgotten_memory_shows_it_marked_and_a_purged_one_is_gone() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let cli = || {
        let mut command = levh(home);
        command.env("LEVH_EMBEDDER", "hash");
        command
    };
    let stored = json(cli().args([
        "capture",
        "The staging database moved to the blue cluster",
        "--json",
    ]));
    let id = stored["memory_id"].as_str().unwrap().to_owned();
    ok(cli().args(["forget", &id]));
    let shown = String::from_utf8(ok(cli().args(["show", &id])).stdout).unwrap();
    assert!(shown.starts_with("forgotten at "), "{shown}");
    assert!(shown.contains("The staging database moved"), "{shown}");
    let view = json(cli().args(["show", &id, "--json"]));
    assert_eq!(view["id"], id.as_str());
    assert!(view["forgotten_at"].is_string(), "{view}");
    ok(cli().args(["purge", &id]));
    let gone = cli().args(["show", &id]).output().unwrap();
    assert!(!gone.status.success());
    assert!(String::from_utf8_lossy(&gone.stderr).contains("no memory"));
}

/// Every command of the README's five-minute tour, run as written (through `sh`, the
/// `levh` on PATH being this build), `ID` the id the first capture printed; and what the
/// tour says of decay holds: a week on, a memory never recalled is at about half.
#[test]
fn the_readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let tour = readme
        .split("## A five-minute tour")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|block| block.split("\n```").next())
        .expect("the tour's code block");
    let home = tempfile::tempdir().unwrap();
    let binary_dir = crate::support::levh_binary().parent().unwrap().to_owned();
    let path = format!(
        "{}:{}",
        binary_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut id: Option<String> = None;
    let mut ran = 0;
    for line in tour.lines() {
        // A comment after the command starts at a `#` preceded by spaces.
        let command = match line.find("  #") {
            Some(at) => &line[..at],
            None => line,
        }
        .trim();
        if command.is_empty() || command.starts_with('#') {
            continue;
        }
        let command = match &id {
            Some(id) => command.replace(" ID", &format!(" {id}")),
            None => command.to_owned(),
        };
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(&command).env("PATH", &path);
        for (key, _) in std::env::vars() {
            if key.starts_with("LEVH_") {
                shell.env_remove(key);
            }
        }
        shell
            .env("LEVH_HOME", home.path())
            .env("LEVH_EMBEDDER", "hash");
        let output = shell.output().unwrap();
        assert!(
            output.status.success(),
            "{command}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if id.is_none() {
            let printed = String::from_utf8_lossy(&output.stdout).into_owned();
            id = printed.split_whitespace().nth(1).map(str::to_owned);
            assert!(printed.starts_with("admitted "), "{printed}");
        }
        ran += 1;
    }
    assert!(ran >= 20, "{ran} commands");

    let later = json(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .env(
                "LEVH_NOW",
                (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(168)).to_string(),
            )
            .args(["list", "--json"]),
    );
    let piped = later["memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["content"] == "Notes piped from another tool")
        .unwrap_or_else(|| panic!("{later}"));
    let retention = piped["retention"].as_f64().unwrap();
    assert!((0.45..0.55).contains(&retention), "{retention}");
}

/// Memories whose vectors are of another model than the one in use (a model installed
/// from a folder of another name, an embedder switched) are invisible to recall by
/// meaning: `levh doctor` says how many, of which model, and what fixes it.
#[test]
fn doctor_names_memories_whose_vectors_are_of_another_model() {
    let home = tempfile::tempdir().unwrap();
    let cli = || {
        let mut command = levh(home.path());
        command.env("LEVH_EMBEDDER", "hash");
        command
    };
    for text in [
        "The ferry leaves at seven from pier four",
        "Lunch is at noon on Fridays",
    ] {
        ok(cli().args(["capture", text]));
    }
    let quiet = String::from_utf8(ok(cli().arg("doctor")).stdout).unwrap();
    assert!(!quiet.contains("no vector of"), "{quiet}");
    let connection = rusqlite::Connection::open(home.path().join("levh.db")).unwrap();
    connection
        .execute(
            "UPDATE memory_embeddings SET model = 'local/onnx' WHERE memory_seq = (SELECT min(seq) FROM memories)",
            [],
        )
        .unwrap();
    drop(connection);
    let warned = String::from_utf8(cli().arg("doctor").output().unwrap().stdout).unwrap();
    assert!(
        warned.contains("1 memories have no vector of hash-v1-256 (vectors of local/onnx: 1")
            && warned.contains("levh reembed"),
        "{warned}"
    );
}

/// `levh context --format F -o FILE` for each client's file: the pinned rules and the
/// project's essentials in levh's marked block; an existing CLAUDE.md's own text is kept
/// byte for byte, a second run changes nothing, a Cursor rule is levh's whole file.
#[test]
fn context_files_for_each_client_keep_the_persons_own_text() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    for (text, project, pin) in [
        ("Never force-push to main; open a pull request.", None, true),
        (
            "The atlas API is deployed with cargo xtask deploy.",
            Some("atlas"),
            false,
        ),
        (
            "The comet frontend uses pnpm, not npm.",
            Some("comet"),
            false,
        ),
    ] {
        let mut command = crate::support::levh(home);
        command.args(["capture", text, "--json"]);
        if let Some(p) = project {
            command.args(["--project", p]);
        }
        if pin {
            command.arg("--pin");
        }
        crate::support::ok(&mut command);
    }
    let repo = home.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mine = "# Atlas\r\n\r\nRun `just test` before pushing.  \n";
    std::fs::write(repo.join("CLAUDE.md"), mine).unwrap();
    let write = |format: &str, file: &str| -> String {
        crate::support::ok(
            crate::support::levh(home)
                .args(["context", "--project", "atlas", "--format", format, "-o"])
                .arg(repo.join(file)),
        );
        std::fs::read_to_string(repo.join(file)).unwrap()
    };
    let claude = write("claude", "CLAUDE.md");
    assert!(
        claude.starts_with(mine),
        "the person's text first, untouched:\n{claude}"
    );
    assert!(claude.contains("- Never force-push to main; open a pull request."));
    assert!(claude.contains("- The atlas API is deployed with cargo xtask deploy."));
    assert!(
        !claude.contains("pnpm"),
        "another project's essentials stay out"
    );
    assert_eq!(
        write("claude", "CLAUDE.md"),
        claude,
        "a second run changes nothing"
    );
    insta::assert_snapshot!("context_claude", claude);
    insta::assert_snapshot!("context_cursor", write("cursor", ".cursor/rules/levh.mdc"));
    insta::assert_snapshot!("context_agents", write("agents", "AGENTS.md"));
    insta::assert_snapshot!(
        "context_copilot",
        write("copilot", ".github/copilot-instructions.md")
    );
}

/// `levh hook install git` in a real repository: a real `git commit` becomes a memory of
/// the repository's project, an existing post-commit hook keeps working (it runs first),
/// and `uninstall` puts it back.
#[test]
fn the_git_hook_captures_commits_and_keeps_the_existing_hook() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("rocket");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&repo)
            .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let theirs = "#!/bin/sh\necho ran >> \"$(git rev-parse --show-toplevel)/../their-hook-ran\"\n";
    std::fs::write(hooks.join("post-commit"), theirs).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            hooks.join("post-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    crate::support::ok(
        crate::support::levh(home.path())
            .args(["hook", "install", "git", "--repo"])
            .arg(&repo),
    );
    std::fs::write(repo.join("README.md"), "rocket\n").unwrap();
    git(&["add", "README.md"]);
    git(&[
        "commit",
        "-q",
        "-m",
        "Add the launch checklist to the README",
    ]);
    let list = crate::support::json(crate::support::levh(home.path()).args(["list", "--json"]));
    let memories = list["memories"].as_array().unwrap();
    assert_eq!(memories.len(), 1, "{list}");
    assert_eq!(memories[0]["project"], "rocket");
    assert_eq!(memories[0]["source"], "git");
    assert!(
        memories[0]["content"]
            .as_str()
            .unwrap()
            .contains("Add the launch checklist")
    );
    assert!(
        work.path().join("their-hook-ran").is_file(),
        "the existing hook ran"
    );

    crate::support::ok(
        crate::support::levh(home.path())
            .args(["hook", "uninstall", "git", "--repo"])
            .arg(&repo),
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        theirs
    );
    assert!(!hooks.join("post-commit.pre-levh").exists());

    // `levh capture` inside the repository takes its name as the project.
    let captured =
        crate::support::json(crate::support::levh(home.path()).current_dir(&repo).args([
            "capture",
            "The rocket fins are printed in PETG.",
            "--json",
        ]));
    let id = captured["memory_id"].as_str().unwrap();
    let shown =
        crate::support::json(crate::support::levh(home.path()).args(["show", id, "--json"]));
    assert_eq!(shown["project"], "rocket", "{shown}");
}

/// `levh hook install claude-code`: the entries merged into an existing project
/// `settings.json` (its other settings and hooks kept, valid JSON, installing twice adds
/// nothing), then run the way Claude Code runs them — each command through `sh -c` with
/// the hook's JSON on stdin: the session start prints the pinned rule, the pre-compact
/// stores one summary of a transcript (its request, decision and promise) in the
/// repository's project; uninstall leaves the user's own hook as it was.
#[test]
fn the_claude_code_hooks_merge_into_settings_and_work_as_the_client_runs_them() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("rocket");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    let theirs = json!({
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "echo mine"}]}]}
    });
    let settings = repo.join(".claude/settings.json");
    std::fs::write(&settings, serde_json::to_string_pretty(&theirs).unwrap()).unwrap();

    let shown = crate::support::ok(
        levh(home)
            .args(["hook", "install", "claude-code", "--dry-run", "--dir"])
            .arg(&repo),
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("would write"));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        serde_json::to_string_pretty(&theirs).unwrap()
    );
    for _ in 0..2 {
        crate::support::ok(
            levh(home)
                .args(["hook", "install", "claude-code", "--dir"])
                .arg(&repo),
        );
    }
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["permissions"], theirs["permissions"]);
    let pre = merged["hooks"]["PreCompact"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "theirs and levh's, once: {merged}");
    assert_eq!(pre[0], theirs["hooks"]["PreCompact"][0]);
    assert_eq!(merged["hooks"]["SessionStart"].as_array().unwrap().len(), 1);
    assert_eq!(
        merged["hooks"]["SessionEnd"].as_array().unwrap().len(),
        1,
        "a checkpoint at the session's end too"
    );
    let command = |event: &str| {
        merged["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|e| {
                e["hooks"][0]["command"]
                    .as_str()
                    .filter(|c| c.contains("hook run"))
            })
            .unwrap()
            .to_owned()
    };
    let run = |event: &str, input: Value| {
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(command(event))
            .current_dir(&repo)
            .env("LEVH_EMBEDDER", "hash")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            input.to_string().as_bytes(),
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{event}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };

    // Session start: the pinned rule is in what Claude Code adds to the session.
    crate::support::ok(levh(home).args([
        "capture",
        "Never push to main directly; open a pull request.",
        "--pin",
    ]));
    let context = run(
        "SessionStart",
        json!({"session_id": "s1", "cwd": repo, "source": "startup"}),
    );
    assert!(context.contains("Never push to main directly"), "{context}");

    // Pre-compact: a transcript in Claude Code's JSON Lines, tool lines among the words.
    let transcript = work.path().join("transcript.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "Make the launch script retry the upload three times."}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
            {"type": "text", "text": "We decided to use exponential backoff for the retries. I will add a test for the retry loop tomorrow."}
        ]}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "README.md"}]}}),
    ];
    std::fs::write(
        &transcript,
        lines
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n{not json\n",
    )
    .unwrap();
    run(
        "PreCompact",
        json!({"session_id": "abcdef123456", "transcript_path": transcript, "cwd": repo, "trigger": "auto"}),
    );
    let summaries = json(levh(home).args(["list", "--kind", "summary", "--json"]));
    let summary = &summaries["memories"][0];
    assert_eq!(summary["project"], "rocket", "{summaries}");
    assert_eq!(summary["source"], "claude-code");
    let text = summary["content"].as_str().unwrap();
    assert!(
        text.starts_with("Claude Code session abcdef12 in rocket"),
        "{text}"
    );
    assert!(text.contains("Asked: Make the launch script retry the upload three times."));
    assert!(text.contains("- We decided to use exponential backoff for the retries."));
    assert!(text.contains("- I will add a test for the retry loop tomorrow."));
    // And a checkpoint of the session: what the next one continues from.
    let resumed = json(levh(home).args(["continue", "--project", "rocket", "--json"]));
    assert_eq!(
        resumed["checkpoint"]["goal"], "Make the launch script retry the upload three times.",
        "{resumed}"
    );
    assert_eq!(
        resumed["checkpoint"]["memories"][0]["id"], summary["id"],
        "resting on the summary: {resumed}"
    );
    assert!(
        resumed["text"]
            .as_str()
            .unwrap()
            .contains("I will add a test for the retry loop tomorrow."),
        "{resumed}"
    );
    // A hook never breaks the session: no transcript, still exit 0.
    run("PreCompact", json!({"session_id": "x"}));

    crate::support::ok(
        levh(home)
            .args(["hook", "uninstall", "claude-code", "--dir"])
            .arg(&repo),
    );
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(left, theirs);
}

/// `levh seed-demo` on an empty store: the demo team's fortnight through the gate, so the
/// briefing, meeting prep, conflicts, people, review and ask have something to show; a
/// second seeding (a store with memories) is refused; `--remove` purges all of it.
#[test]
fn the_demo_seeds_an_empty_store_shows_every_feature_and_is_removed() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let at = || {
        let mut command = levh(home);
        command
            .env("LEVH_NOW", "2026-11-10T08:00:00Z")
            .env("LEVH_TZ", "Europe/Berlin")
            .env("LEVH_ME", "Sam Rivera, sam@northwind.example");
        command
    };
    let seeded = json(at().args(["seed-demo", "--json"]));
    let stored = seeded["admitted"].as_u64().unwrap() + seeded["redacted"].as_u64().unwrap();
    assert_eq!(
        (stored, seeded["held"].as_u64(), seeded["rejected"].as_u64()),
        (40, Some(0), Some(0)),
        "{seeded}"
    );

    let conflicts = json(at().args(["conflicts", "--json"]));
    let open = conflicts["conflicts"].as_array().unwrap();
    assert_eq!(open.len(), 1, "{conflicts}");
    assert!(
        open[0]["newer_content"]
            .as_str()
            .unwrap()
            .contains("owned by Kenji")
    );
    let prep = json(at().args(["meeting-prep", "--next", "--json"]));
    assert_eq!(prep["event"]["title"], "Fleet app sprint review", "{prep}");
    assert_eq!(
        prep["previous"].as_array().unwrap().len(),
        1,
        "the review two weeks ago: {prep}"
    );
    assert!(!prep["attendees"].as_array().unwrap().is_empty());
    let tomorrow = json(at().args(["briefing", "--date", "2026-11-11", "--json"]));
    assert!(
        tomorrow["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["title"] == "Fleet app sprint review"),
        "{tomorrow}"
    );
    let people = json(at().args(["people", "--json"]));
    assert!(people.to_string().contains("Omar Haddad"), "{people}");
    let owed = json(at().args(["commitments", "--json"]));
    assert!(owed["commitments"].as_array().unwrap().len() >= 3, "{owed}");
    let review = json(at().args(["review", "--json"]));
    assert!(
        review["memories"].as_array().unwrap().len() >= 3,
        "old notes fade: {review}"
    );

    let again = at().args(["seed-demo"]).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("empty one only"));

    let removed = json(at().args(["seed-demo", "--remove", "--json"]));
    assert_eq!(removed["purged"], 40);
    let left = json(at().args(["list", "--json"]));
    assert!(left["memories"].as_array().unwrap().is_empty(), "{left}");
}

/// `levh session list`: sessions newest first with the live memories each stored, open or
/// ended, paged with `--before` (what the dashboard's Sessions page and `GET /api/sessions`
/// read); a limit out of range is refused naming it.
#[test]
fn sessions_are_listed_newest_first_with_their_memories_and_paged() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let start = |project: &str| -> String {
        let out = json(levh(home).args(["session", "start", "--project", project, "--json"]));
        out["session_id"].as_str().unwrap().to_owned()
    };
    let first = start("atlas");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let second = start("orion");
    for text in [
        "Atlas deploys on Thursdays",
        "Atlas staging rebuilds nightly",
    ] {
        capture(home, &["--session", &first, text]);
    }
    let forgotten = capture(
        home,
        &["--session", &first, "A note soon forgotten about nothing"],
    );
    ok(levh(home).args(["forget", &forgotten]));
    ok(levh(home).args(["session", "end", &first]));

    let listed = json(levh(home).args(["session", "list", "--json"]));
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    assert_eq!(
        sessions[0]["session_id"],
        second.as_str(),
        "newest first: {listed}"
    );
    assert_eq!(sessions[0]["memories"], 0);
    assert_eq!(sessions[0]["ended_at"], Value::Null);
    assert_eq!(sessions[1]["session_id"], first.as_str());
    assert_eq!(sessions[1]["project"], "atlas");
    assert_eq!(sessions[1]["memories"], 2, "live memories only: {listed}");
    assert!(sessions[1]["ended_at"].is_string());

    let page = json(levh(home).args(["session", "list", "--limit", "1", "--json"]));
    assert_eq!(page["sessions"][0]["session_id"], second.as_str());
    let before = page["sessions"][0]["started_at"]
        .as_str()
        .unwrap()
        .to_owned();
    let next = json(levh(home).args([
        "session", "list", "--limit", "1", "--before", &before, "--json",
    ]));
    assert_eq!(next["sessions"][0]["session_id"], first.as_str(), "{next}");

    let refused = levh(home)
        .args(["session", "list", "--limit", "0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("limit"), "{stderr}");
}

/// The memory list in every order, paged by keyset over REST with no memory twice and
/// none left out; the fading, forgotten, date and entity filters with the count that
/// matches (on the first page only); a bad order, or retention with forgotten, refused
/// naming it; and `levh move` moving memories to a project (logged as `move`, a missing id
/// named and the exit code a failure), a project that holds a secret refused.
#[test]
fn the_memory_list_sorts_filters_and_pages_and_memories_move_between_projects() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // Twelve memories a year old (fading now) and twelve new, importance spread.
    let mut ids = Vec::new();
    for n in 0..24u64 {
        let mut command = levh(home);
        if n < 12 {
            command.env("LEVH_NOW", "2025-12-01T09:00:00Z");
        }
        let importance = format!("{:.2}", (n % 12) as f64 / 11.0);
        let stored = json(command.args([
            "capture",
            &crate::support::distinct_sentence(n),
            "--project",
            if n % 2 == 0 { "even" } else { "odd" },
            "--importance",
            &importance,
            "--json",
        ]));
        assert_eq!(stored["verdict"], "admit", "{stored}");
        ids.push(stored["memory_id"].as_str().unwrap().to_owned());
    }
    json(levh(home).args([
        "capture",
        "Lunch with grace@example.org about the harbor lease.",
        "--json",
    ]));
    let (mut server, address) = crate::support::serve(home, &[]);
    let base = format!("http://{address}/api/memories");
    let get = |query: &str| -> serde_json::Value {
        let response = ureq::get(&format!("{base}?{query}")).call().unwrap();
        serde_json::from_str(&response.into_body().read_to_string().unwrap()).unwrap()
    };
    // Every order, read five at a time: each memory once, in the order's sequence.
    for (sort, key) in [
        ("created", "created_at"),
        ("importance", "importance"),
        ("recalled", "last_recalled_at"),
        ("retention", "retention"),
    ] {
        let mut seen: Vec<serde_json::Value> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = get(&format!(
                "sort={sort}&limit=5{}",
                after
                    .as_ref()
                    .map(|a| format!("&after={a}"))
                    .unwrap_or_default()
            ));
            if after.is_none() {
                assert_eq!(page["total"], 25, "{sort}: {page}");
            } else {
                assert!(
                    page.get("total").is_none(),
                    "later pages do not count again"
                );
            }
            let memories = page["memories"].as_array().unwrap().clone();
            after = memories
                .last()
                .map(|m| m["id"].as_str().unwrap().to_owned());
            let short = memories.len() < 5;
            seen.extend(memories);
            if short {
                break;
            }
        }
        let unique: std::collections::HashSet<&str> =
            seen.iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(
            (seen.len(), unique.len()),
            (25, 25),
            "{sort}: a memory twice or missing"
        );
        let values: Vec<&serde_json::Value> = seen.iter().map(|m| &m[key]).collect();
        let in_order = values.windows(2).all(|w| match (sort, w[0], w[1]) {
            // Each value is read as its page is served: a memory equal to the one before
            // in retention (stored at the same instant) reads a hair lower a moment later.
            ("retention", a, b) => a.as_f64().unwrap() <= b.as_f64().unwrap() * (1.0 + 1e-6) + 1e-9,
            ("importance", a, b) => a.as_f64() >= b.as_f64(),
            // Compared as instants (their text has as many fraction digits as needed,
            // so it does not order as they do); never recalled (null) last.
            (_, a, b) => {
                let at = |v: &serde_json::Value| {
                    v.as_str().map(|t| t.parse::<jiff::Timestamp>().unwrap())
                };
                b.is_null() || at(a) >= at(b)
            }
        });
        assert!(in_order, "{sort} out of order: {values:?}");
    }
    // Fading: the twelve old ones, weakest first; by project; by date; by entity.
    let fading = get("fading=true&limit=50");
    assert_eq!(fading["total"], 12, "{fading}");
    assert_eq!(get("fading=true&project=even")["total"], 6);
    assert_eq!(get("created_before=2026-01-01&limit=50")["total"], 12);
    assert_eq!(
        get("created_after=2026-01-01&project=odd&limit=50")["total"],
        6
    );
    let grace = get("entity=grace@example.org");
    assert_eq!(grace["total"], 1, "{grace}");
    assert!(
        grace["memories"][0]["content"]
            .as_str()
            .unwrap()
            .contains("harbor lease")
    );
    for (query, named) in [
        ("sort=oldest", "invalid sort: 'oldest'"),
        ("forgotten=true&sort=retention", "invalid forgotten"),
        ("entity=nobody-at-all", "no entity 'nobody-at-all'"),
    ] {
        let response = ureq::get(&format!("{base}?{query}"))
            .config()
            .http_status_as_error(false)
            .build()
            .call()
            .unwrap();
        assert_eq!(
            response.status(),
            if query.starts_with("entity") {
                404
            } else {
                400
            },
            "{query}"
        );
        let body = response.into_body().read_to_string().unwrap();
        assert!(body.contains(named), "{query}: {body}");
    }
    server.kill().unwrap();
    server.wait().unwrap();

    // Move two to a new project; a third id that is not a memory is named, and fails.
    let missing = "01a24eb3-945d-7e4f-9ea2-05771e33a823";
    let out = levh(home)
        .args([
            "move",
            &ids[0],
            &ids[1],
            missing,
            "--project",
            "archive",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a missing id is a failure");
    let moved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        moved["moved"],
        serde_json::json!([ids[0], ids[1]]),
        "{moved}"
    );
    assert_eq!(moved["missing"], serde_json::json!([missing]), "{moved}");
    let archived = json(levh(home).args(["list", "--project", "archive", "--json"]));
    assert_eq!(archived["total"], 2, "{archived}");
    let history = json(levh(home).args(["show", &ids[0], "--history", "--json"]));
    assert!(history.to_string().contains("\"move\""), "{history}");
    let secret = levh(home)
        .args([
            "move",
            &ids[2],
            "--project",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ])
        .output()
        .unwrap();
    assert!(!secret.status.success());
    let said = String::from_utf8_lossy(&secret.stderr);
    assert!(
        said.contains("holds a secret") && !said.contains("ghp_"),
        "{said}"
    );
    // Out of every project again; the forgotten filter.
    ok(levh(home).args(["move", &ids[0], "--no-project"]));
    ok(levh(home).args(["forget", &ids[1]]));
    let forgotten = json(levh(home).args(["list", "--forgotten", "--json"]));
    assert_eq!(forgotten["total"], 1, "{forgotten}");
    assert_eq!(forgotten["memories"][0]["id"], ids[1].as_str());
}

/// `levh upsert` / `levh get --key`: an upsert that reads like another memory is held,
/// and once a person admits it, it is the key's current memory; a value that is not JSON
/// and a key holding a secret are refused, naming them; four processes rewriting one key
/// at once leave exactly one current memory, every other one retired.
#[test]
fn keyed_memories_are_held_like_any_capture_and_one_stays_current_under_concurrent_writers() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    json(levh(home).args(["capture", "The deploy branch for atlas is main.", "--json"]));
    let held = levh(home)
        .args([
            "upsert",
            "deploy branch",
            "The deploy branch for atlas is prod.",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!held.status.success(), "a held upsert is not a write yet");
    let held: serde_json::Value = serde_json::from_slice(&held.stdout).unwrap();
    assert_eq!(held["status"], "held", "{held}");
    let missing = levh(home)
        .args(["get", "--key", "deploy branch"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    ok(levh(home).args(["held", "admit", held["held_id"].as_str().unwrap()]));
    let current = json(levh(home).args(["get", "--key", "deploy branch", "--json"]));
    assert_eq!(
        current["content"], "The deploy branch for atlas is prod.",
        "{current}"
    );
    assert_eq!(current["key"], "deploy branch");

    let bad = levh(home)
        .args(["upsert", "k", "some text here", "--value", "{not json"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--value is not JSON"));
    let secret = levh(home)
        .args([
            "upsert",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "some text",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&secret.stderr);
    assert!(
        said.contains("invalid key") && !said.contains("ghp_"),
        "{said}"
    );

    // Four writers, five rewrites each, of one key.
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let home = home.to_path_buf();
            std::thread::spawn(move || {
                for n in 0..5u64 {
                    let text = crate::support::distinct_sentence(100 + w * 10 + n);
                    let out = levh(&home)
                        .args(["upsert", "on call", &text, "--project", "ops", "--json"])
                        .output()
                        .unwrap();
                    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                    assert_eq!(view["status"], "stored", "{view}");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    let (current, retired): (i64, i64) = store
        .query_row(
            "SELECT sum(m.superseded_by IS NULL AND m.valid_to IS NULL), sum(m.superseded_by IS NOT NULL)
               FROM memory_keys k JOIN memories m ON m.seq = k.memory_seq WHERE k.key = 'on call'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (current, retired),
        (1, 19),
        "one current, every other one retired"
    );
    let listed = json(levh(home).args(["list", "--project", "ops", "--json"]));
    assert_eq!(listed["total"], 1, "{listed}");
}
