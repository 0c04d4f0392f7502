//! `levh export` and foreign imports through the binary: the Python levh's export and the
//! MCP memory server's file are read into memories (each through the gate; a second import
//! stores nothing), and every export format is written and read back — JSON Lines
//! round-trips exactly into another store, JSON is the same memories, Markdown is for
//! people, SQLite is a table any SQL tool reads.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, levh, repository_root};

const NOW: &str = "2026-12-01T09:00:00Z";

fn at(home: &Path) -> std::process::Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", NOW);
    command
}

fn import(home: &Path, file: &Path) -> Value {
    json(at(home).arg("import").arg(file).arg("--json"))
}

fn counts(report: &Value) -> [u64; 4] {
    ["admitted", "held", "rejected", "failed"].map(|k| report[k].as_u64().unwrap())
}

#[test]
fn foreign_exports_import_once_and_every_export_format_reads_back() {
    let fixtures = repository_root().join("fixtures/import");
    let home = tempfile::tempdir().unwrap();
    let home = home.path();

    // The Python levh's `export-full`: 14 records, one held (close to another).
    let python = import(home, &fixtures.join("python-levh-export.json"));
    assert_eq!(counts(&python), [13, 1, 0, 0], "{python}");
    // The MCP memory server's file: 12 observations of 5 entities and 4 relations.
    let graph = import(home, &fixtures.join("mcp-memory.jsonl"));
    assert_eq!(counts(&graph), [15, 1, 0, 0], "{graph}");
    // Again: every one is a duplicate of its first import.
    assert_eq!(
        counts(&import(home, &fixtures.join("python-levh-export.json"))),
        [0, 0, 14, 0]
    );
    assert_eq!(
        counts(&import(home, &fixtures.join("mcp-memory.jsonl"))),
        [0, 0, 16, 0]
    );

    let listed = json(at(home).args(["list", "--json", "--limit", "100"]));
    let memories = listed["memories"].as_array().unwrap();
    let find = |start: &str| {
        memories
            .iter()
            .find(|m| m["content"].as_str().unwrap().starts_with(start))
            .unwrap_or_else(|| panic!("no memory starting {start:?}: {listed}"))
            .clone()
    };
    let rule = find("Do not run database migrations by hand");
    assert_eq!(
        (&rule["kind"], &rule["pinned"], &rule["project"]),
        (
            &json_str("rule"),
            &Value::Bool(true),
            &json_str("ledgerline")
        )
    );
    assert_eq!(
        rule["valid_from"], "2026-10-19T11:48:30.772654Z",
        "its own time kept"
    );
    assert_eq!(rule["metadata"]["import"]["from"], "python-levh");
    assert_eq!(
        rule["metadata"]["import"]["id"],
        "b1d3c428e7d747c193896a8152fb5887"
    );
    assert_eq!(find("We decided to keep PostgreSQL 17")["importance"], 0.9);
    let relation = find("Amara Okafor works at Kestrel Labs.");
    assert_eq!(relation["kind"], "relation");
    let observation = find("Amara Okafor (person): Tech lead of the ledgerline billing service");
    assert_eq!(observation["metadata"]["import"]["entity"], "Amara Okafor");

    // Every format.
    let out = tempfile::tempdir().unwrap();
    for format in ["jsonl", "json", "markdown", "sqlite"] {
        let file = out.path().join(format!("export.{format}"));
        crate::support::ok(
            at(home)
                .args(["export", "--format", format, "-o"])
                .arg(&file),
        );
    }
    let lines = std::fs::read_to_string(out.path().join("export.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 28);
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("export.json")).unwrap())
            .unwrap();
    let from_lines: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(document["memories"].as_array().unwrap(), &from_lines);
    let markdown = std::fs::read_to_string(out.path().join("export.markdown")).unwrap();
    assert!(markdown.contains("## ledgerline\n"), "{markdown}");
    assert!(markdown.contains("Do not run database migrations by hand against production."));
    assert!(markdown.contains(&format!("id `{}`", rule["id"].as_str().unwrap())));
    let db = rusqlite::Connection::open(out.path().join("export.sqlite")).unwrap();
    let (count, pinned): (i64, i64) = db
        .query_row("SELECT count(*), sum(pinned) FROM memories", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((count, pinned), (28, 1));

    // JSON Lines into another store: the same memories, exported byte for byte alike.
    let other = tempfile::tempdir().unwrap();
    let again = import(other.path(), &out.path().join("export.jsonl"));
    assert_eq!(counts(&again), [28, 0, 0, 0], "{again}");
    let round = crate::support::ok(at(other.path()).args(["export"]));
    // Line for line (their order among memories recorded at one instant is the order
    // each store wrote them in), but for the admission: each store's gate judged the
    // memory on its way in, against what that store held then.
    let sorted = |text: &str| {
        let mut lines: Vec<String> = text
            .lines()
            .map(|line| {
                let mut memory: Value = serde_json::from_str(line).unwrap();
                assert_eq!(memory["admission"]["verdict"], "admit");
                memory.as_object_mut().unwrap().remove("admission");
                memory.to_string()
            })
            .collect();
        lines.sort();
        lines
    };
    let (first, second) = (
        sorted(&lines),
        sorted(&String::from_utf8(round.stdout).unwrap()),
    );
    assert!(first == second, "the round trip changed a memory");

    // An export never overwrites, and SQLite needs a file.
    let refused = at(home)
        .args(["export", "-o"])
        .arg(out.path().join("export.jsonl"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never overwrites"));
    let no_file = at(home)
        .args(["export", "--format", "sqlite"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&no_file.stderr).contains("name it with -o FILE"));
}

fn json_str(text: &str) -> Value {
    Value::String(text.to_owned())
}

/// Forgotten memories leave only when asked (`--include-forgotten`, each with its
/// `forgotten_at`), come back forgotten in another store (kept for history, never
/// recalled), once; REST answers the same export in each format with its media type.
#[test]
fn forgotten_memories_export_when_asked_and_import_back_forgotten() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let keep = json(at(home).args([
        "capture",
        "The staging cluster runs in Frankfurt.",
        "--json",
    ]));
    let gone = json(at(home).args([
        "capture",
        "The old staging cluster ran in Dublin.",
        "--json",
    ]));
    let gone = gone["memory_id"].as_str().unwrap().to_owned();
    crate::support::ok(at(home).args(["forget", &gone]));

    let live = crate::support::ok(at(home).args(["export"]));
    assert_eq!(String::from_utf8(live.stdout).unwrap().lines().count(), 1);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("all.jsonl");
    crate::support::ok(
        at(home)
            .args(["export", "--include-forgotten", "-o"])
            .arg(&file),
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["id"], keep["memory_id"]);
    assert!(lines[0].get("forgotten_at").is_none());
    assert_eq!(
        (lines[1]["id"].as_str(), lines[1]["forgotten_at"].as_str()),
        (Some(gone.as_str()), Some(NOW))
    );

    // Into another store: the forgotten one stays forgotten, and a second import stores 0.
    let other = tempfile::tempdir().unwrap();
    assert_eq!(counts(&import(other.path(), &file)), [2, 0, 0, 0]);
    let shown = crate::support::ok(at(other.path()).args(["show", &gone, "--json"]));
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["forgotten_at"], NOW, "{shown}");
    let recalled = json(at(other.path()).args(["recall", "Dublin staging cluster", "--json"]));
    assert!(
        recalled["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != gone.as_str()),
        "{recalled}"
    );
    assert_eq!(counts(&import(other.path(), &file)), [0, 0, 2, 0]);

    // REST: the same lines, Markdown for people, and a format it does not know refused.
    let (mut server, address) = crate::support::serve(home, &[("LEVH_NOW", NOW)]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut jsonl = agent
        .get(format!(
            "http://{address}/api/export?format=jsonl&include_forgotten=true"
        ))
        .call()
        .unwrap();
    assert_eq!(jsonl.headers()["content-type"], "application/x-ndjson");
    assert_eq!(jsonl.body_mut().read_to_string().unwrap(), text);
    let mut markdown = agent
        .get(format!("http://{address}/api/export?format=markdown"))
        .call()
        .unwrap();
    assert!(
        markdown.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown")
    );
    let markdown = markdown.body_mut().read_to_string().unwrap();
    assert!(
        markdown.contains("The staging cluster runs in Frankfurt.") && !markdown.contains("Dublin"),
        "{markdown}"
    );
    let mut json_doc = agent
        .get(format!("http://{address}/api/export"))
        .call()
        .unwrap();
    let doc: Value = json_doc.body_mut().read_json().unwrap();
    assert_eq!(doc["memories"].as_array().unwrap().len(), 1);
    let mut bad = agent
        .get(format!("http://{address}/api/export?format=xml"))
        .call()
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(bad.body_mut().read_to_string().unwrap().contains("format"));
    server.kill().unwrap();
    server.wait().unwrap();
}
