//! A real third-party MCP client against the real `levh mcp stdio`: MCP Inspector's CLI
//! (`@modelcontextprotocol/inspector`, from the npm registry). It sends a `--tool-arg`
//! as a number or boolean only when the tool's schema types the argument as a plain
//! `number`/`boolean`, and warns on every schema `format` it does not know — so this is
//! where a schema that only rmcp's own client understands shows.
//!
//! `.ci/run` installs the Inspector under `.cache/inspector` (`MCP_INSPECTOR` names
//! another `mcp-inspector` binary). Without it the test says on stderr why it was
//! skipped, and passes.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::{json, levh, levh_binary, repository_root};

/// The Inspector's CLI, if installed.
fn inspector() -> Option<PathBuf> {
    let path = std::env::var_os("MCP_INSPECTOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            repository_root().join(".cache/inspector/node_modules/.bin/mcp-inspector")
        });
    if path.is_file() {
        return Some(path);
    }
    crate::support::skip(&format!(
        "MCP Inspector tests: no {} (needs Node.js; install with `npm install \
         --prefix .cache/inspector @modelcontextprotocol/inspector@2.12.0`, as .ci/run does, \
         or set MCP_INSPECTOR)",
        path.display()
    ));
    None
}

/// One Inspector CLI call against `levh mcp stdio` in `home`: its JSON answer and stderr.
fn call(inspector: &PathBuf, home: &std::path::Path, method: &[&str]) -> (Value, String) {
    let output = Command::new(inspector)
        .arg("--cli")
        .args(["-e", &format!("LEVH_HOME={}", home.display())])
        .args(["-e", "LEVH_EMBEDDER=hash"])
        .arg(levh_binary())
        .args(["mcp", "stdio", "--method"])
        .args(method)
        .output()
        .expect("running the MCP Inspector CLI");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "inspector {method:?} failed:\n{stdout}\n{stderr}"
    );
    let answer = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("inspector {method:?} printed no JSON ({e}):\n{stdout}\n{stderr}")
    });
    (answer, stderr)
}

#[test]
fn mcp_inspector_cli_sets_importance_pin_and_limit_with_no_schema_warnings() {
    let Some(inspector) = inspector() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (tools, stderr) = call(&inspector, home.path(), &["tools/list"]);
    assert!(
        !stderr.contains("unknown format"),
        "schema warnings:\n{stderr}"
    );
    let store = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "store_memory")
        .expect("store_memory is listed");
    assert_eq!(
        store["inputSchema"]["properties"]["importance"]["type"],
        "number"
    );
    assert_eq!(store["inputSchema"]["properties"]["pin"]["type"], "boolean");

    let (stored, stderr) = call(
        &inspector,
        home.path(),
        &[
            "tools/call",
            "--tool-name",
            "store_memory",
            "--tool-arg",
            "content=Deploys happen on Tuesdays after the standup",
            "--tool-arg",
            "importance=0.7",
            "--tool-arg",
            "pin=true",
        ],
    );
    assert!(
        !stderr.contains("unknown format"),
        "schema warnings:\n{stderr}"
    );
    assert_eq!(stored["isError"], false, "{stored}");
    assert_eq!(stored["structuredContent"]["verdict"], "admit", "{stored}");
    let listed = json(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["list", "--json"]),
    )["memories"]
        .clone();
    assert_eq!(listed[0]["importance"], 0.7, "{listed}");
    assert_eq!(listed[0]["pinned"], true, "{listed}");

    // Distinct facts (the gate would hold near-copies of one another for a person).
    for text in [
        "Deploys of the billing service need a second reviewer",
        "Deploys freeze during the last week of December",
        "Deploys to staging run automatically on every merge",
        "Deploys are announced in the release channel first",
    ] {
        let stored = json(
            levh(home.path())
                .env("LEVH_EMBEDDER", "hash")
                .args(["capture", text, "--json"]),
        );
        assert_eq!(stored["verdict"], "admit", "{stored}");
    }
    let (recalled, stderr) = call(
        &inspector,
        home.path(),
        &[
            "tools/call",
            "--tool-name",
            "recall_memory",
            "--tool-arg",
            "query=deploys",
            "--tool-arg",
            "limit=3",
        ],
    );
    assert!(
        !stderr.contains("unknown format"),
        "schema warnings:\n{stderr}"
    );
    assert_eq!(recalled["isError"], false, "{recalled}");
    assert_eq!(
        recalled["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "{recalled}"
    );
}

/// The official MCP Python SDK (`mcp` from PyPI), as `.ci/run` installs it under
/// `.cache/python-mcp` (`MCP_PYTHON` names another interpreter that has it).
fn python_sdk() -> Option<PathBuf> {
    let path = std::env::var_os("MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join(".cache/python-mcp/bin/python"));
    if path.is_file() {
        return Some(path);
    }
    crate::support::skip(&format!(
        "MCP Python SDK test: no {} (install with `python3 -m venv .cache/python-mcp && \
         .cache/python-mcp/bin/pip install mcp==2.3.0`, as .ci/run does, or set MCP_PYTHON)",
        path.display()
    ));
    None
}

/// The official Python SDK sets every optional argument with its real type (importance
/// 0.7, pin true, limit 3), and validates both results against levh's output schemas.
#[test]
fn the_official_python_sdk_stores_with_importance_and_pin_and_recalls_with_a_limit() {
    let Some(python) = python_sdk() else { return };
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(python)
        .arg(repository_root().join("scripts/mcp-python-client.py"))
        .arg(levh_binary())
        .arg(home.path())
        .output()
        .expect("running the Python MCP client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed:\n{stderr}"
    );
    let answer: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    assert!(
        answer["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "store_memory"),
        "{answer}"
    );
    assert_eq!(answer["stored_error"], false, "{answer}");
    assert_eq!(answer["stored"]["verdict"], "admit", "{answer}");
    assert_eq!(answer["recalled_error"], false, "{answer}");
    let results = answer["recalled"]["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 3, "{answer}");
    assert_eq!(results[0]["id"], answer["stored"]["memory_id"], "{answer}");
    assert_eq!(results[0]["importance"], 0.7, "{answer}");
    assert_eq!(results[0]["pinned"], true, "{answer}");
}

/// `levh setup --client cursor` in a project: levh's entry merged into an existing
/// `.cursor/mcp.json` (the other server kept; shown first; nothing written without `--yes`),
/// and the MCP Inspector's CLI, reading that file as a client would (`--config --server
/// levh`), starts levh from it and lists its tools.
#[test]
fn setup_writes_a_client_config_the_inspector_starts_levh_from() {
    let Some(inspector) = inspector() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs =
        serde_json::json!({"mcpServers": {"other": {"command": "other-server", "args": []}}});
    std::fs::write(&file, theirs.to_string()).unwrap();

    let unasked = levh(home.path())
        .current_dir(project.path())
        .args([
            "setup",
            "--client",
            "cursor",
            "--profile",
            "admin",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    assert!(!unasked.status.success(), "not a terminal and no --yes");
    assert!(String::from_utf8_lossy(&unasked.stderr).contains("add --yes to write it"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs.to_string());

    let done = json(levh(home.path()).current_dir(project.path()).args([
        "setup",
        "--client",
        "cursor",
        "--profile",
        "admin",
        "--embedder",
        "hash",
        "--yes",
        "--json",
    ]));
    assert_eq!(done["written"], true, "{done}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["other"],
        theirs["mcpServers"]["other"]
    );
    let entry = &written["mcpServers"]["levh"];
    assert_eq!(entry["env"]["LEVH_EMBEDDER"], "hash");
    assert_eq!(
        entry["env"]["LEVH_HOME"],
        home.path().canonicalize().unwrap().display().to_string()
    );

    let output = Command::new(&inspector)
        .arg("--cli")
        .arg("--config")
        .arg(&file)
        .args(["--server", "levh", "--method", "tools/list"])
        .output()
        .expect("running the MCP Inspector CLI");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tools: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"review_memory"),
        "the admin profile: {names:?}"
    );
}

/// An agent's working loop through the official Python SDK, over stdio and over HTTP.
/// Keyed memories: one key upserted twice leaves one current memory and the first one
/// superseded (read back with `as_of` at the time it held), a third identical upsert
/// writes nothing, a JSON pointer reads into the current value, and a missing key is an
/// error that names it. Mistakes: a recorded mistake applies to a paraphrased action (and
/// is reinforced by it), and an unrelated action has "no known issue". Checkpoints: one
/// written at the end of a session is what the next session's `continue_task` returns,
/// within its budget, with what the task rests on. Goals: milestones and a progress note
/// round-trip, and the active goal is part of what `continue_task` returns.
#[test]
fn the_official_python_sdk_upserts_keys_and_checks_actions_against_recorded_mistakes() {
    let Some(python) = python_sdk() else { return };
    let check = |answer: &Value, home: &std::path::Path| {
        let tools = answer["tools"].as_array().unwrap();
        assert!(
            tools.iter().any(|t| t == "upsert_memory") && tools.iter().any(|t| t == "get_memory"),
            "{answer}"
        );
        let (first, second, again) = (&answer["first"], &answer["second"], &answer["again"]);
        assert_eq!(
            (
                first["error"].as_bool(),
                first["content"]["status"].as_str()
            ),
            (Some(false), Some("stored")),
            "{answer}"
        );
        let first_id = first["content"]["memory"]["id"].as_str().unwrap();
        assert_eq!(second["content"]["status"], "stored", "{answer}");
        assert_eq!(second["content"]["replaced"], first_id, "{answer}");
        let second_id = second["content"]["memory"]["id"].as_str().unwrap();
        assert_eq!(again["content"]["status"], "unchanged", "{answer}");
        assert_eq!(again["content"]["memory"]["id"], second_id, "{answer}");
        assert_eq!(answer["current"]["content"]["id"], second_id, "{answer}");
        assert_eq!(
            answer["current"]["content"]["value"], "us-east-2",
            "{answer}"
        );
        assert_eq!(answer["before"]["content"]["id"], first_id, "{answer}");
        assert_eq!(answer["before"]["content"]["value"], 3, "{answer}");
        assert_eq!(answer["missing"]["error"], true, "{answer}");
        assert!(
            answer["missing"]["text"][0]
                .as_str()
                .unwrap()
                .contains("no memory under key 'no such key'"),
            "{answer}"
        );
        assert_eq!(
            answer["listed"]["content"]["total"], 1,
            "one current memory: {answer}"
        );
        // The first one is kept, retired by the second: never overwritten.
        let shown =
            crate::support::json(crate::support::levh(home).args(["show", first_id, "--json"]));
        assert_eq!(shown["superseded_by"], second_id, "{shown}");
        assert!(shown["valid_to"].is_string(), "{shown}");
        assert_eq!(
            shown["content"],
            "Atlas deploys to the eu-west cluster with helm"
        );
        let mistake = answer["mistake"]["content"]["memory_id"].as_str().unwrap();
        let paraphrased = &answer["paraphrased"]["content"];
        assert_eq!(paraphrased["known_issues"], true, "{answer}");
        assert_eq!(paraphrased["mistakes"][0]["id"], mistake, "{answer}");
        assert_eq!(
            paraphrased["mistakes"][0]["avoid"],
            "snapshot the database before any migration"
        );
        let unrelated = &answer["unrelated"]["content"];
        assert_eq!(
            (
                unrelated["known_issues"].as_bool(),
                unrelated["summary"].as_str()
            ),
            (Some(false), Some("no known issue")),
            "{answer}"
        );
        // The action that matched it reinforced it: it keeps while it keeps mattering.
        let shown =
            crate::support::json(crate::support::levh(home).args(["show", mistake, "--json"]));
        assert_eq!(shown["recall_count"], 1, "{shown}");
        assert_eq!(shown["kind"], "mistake");
        assert_eq!(
            answer["checkpoint"]["content"]["status"], "stored",
            "{answer}"
        );
        let continued = &answer["continued"]["content"];
        assert_eq!(answer["continued"]["error"], false, "{answer}");
        assert_eq!(
            continued["checkpoint"]["memory_id"], answer["checkpoint"]["content"]["memory"]["id"],
            "{answer}"
        );
        assert_eq!(
            continued["checkpoint"]["next"],
            serde_json::json!(["run the soak test"]),
            "{answer}"
        );
        assert_eq!(
            continued["checkpoint"]["memories"][0]["id"], second_id,
            "{answer}"
        );
        let text = continued["text"].as_str().unwrap();
        assert!(
            text.contains("Goal: Ship atlas 2.0 to production") && text.contains("who signs off?"),
            "{text}"
        );
        assert!(continued["tokens"].as_u64().unwrap() <= 300, "{continued}");
        assert_eq!(
            answer["goal"]["content"]["write"]["status"], "stored",
            "{answer}"
        );
        let goals = &answer["goals"]["content"]["goals"];
        assert_eq!(goals.as_array().unwrap().len(), 1, "{answer}");
        assert_eq!(goals[0]["title"], "Ship atlas 2.0");
        assert_eq!(goals[0]["status"], "active");
        let milestones: Vec<(&str, bool)> = goals[0]["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["name"].as_str().unwrap(), m["reached"].as_bool().unwrap()))
            .collect();
        assert_eq!(
            milestones,
            [
                ("schema migrated", true),
                ("soak test passed", false),
                ("released", false)
            ]
        );
        let note = answer["progressed"]["content"]["note"].as_str().unwrap();
        assert_eq!(goals[0]["log"], serde_json::json!([note]), "{answer}");
        let noted = crate::support::json(crate::support::levh(home).args(["show", note, "--json"]));
        assert_eq!(noted["kind"], "progress", "{noted}");
        assert_eq!(
            continued["goals"][0]["title"], "Ship atlas 2.0",
            "{continued}"
        );
        check_reports(&answer["probe"], home);
    };
    let run = |args: &[&std::ffi::OsStr]| -> Value {
        let output = Command::new(&python)
            .arg(repository_root().join("scripts/mcp-python-agent.py"))
            .args(args)
            .output()
            .expect("running the Python MCP client");
        assert!(
            output.status.success(),
            "the Python client failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
    };
    let home = tempfile::tempdir().unwrap();
    let answer = run(&[
        "stdio".as_ref(),
        levh_binary().as_os_str(),
        home.path().as_os_str(),
    ]);
    check(&answer, home.path());
    check_presence(
        &crate::support::json(
            crate::support::levh(home.path()).args(["report", "sessions", "--json"]),
        ),
        "stdio",
    );

    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = crate::support::serve(
        home.path(),
        &[("LEVH_EMBEDDER", "hash"), ("LEVH_MCP_PROFILE", "full")],
    );
    let answer = run(&["http".as_ref(), format!("http://{address}/mcp").as_ref()]);
    // The probe's HTTP session closed (the SDK ends it on exit): presence says so while
    // the server that served it still runs.
    let sessions = crate::support::json(
        crate::support::levh(home.path()).args(["report", "sessions", "--json"]),
    );
    server.kill().unwrap();
    server.wait().unwrap();
    check(&answer, home.path());
    check_presence(&sessions, "http");
}

/// The probe session's reports count exactly what it did: two notes stored, three recalls
/// (one found nothing), one answer marked helpful and one unhelpful; the same from the CLI.
fn check_reports(probe: &Value, home: &std::path::Path) {
    for call in [
        "offsite",
        "nothing",
        "billing",
        "helpful",
        "unhelpful",
        "recalls",
        "usage",
    ] {
        assert_eq!(probe[call]["error"], false, "{call}: {probe}");
    }
    let returned = |call: &str| -> Vec<String> {
        probe[call]["content"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (offsite, billing) = (returned("offsite"), returned("billing"));
    assert!(returned("nothing").is_empty(), "{probe}");
    assert!(!offsite.is_empty() && !billing.is_empty(), "{probe}");
    let tokens = probe["offsite"]["content"]["tokens"].as_u64().unwrap()
        + probe["billing"]["content"]["tokens"].as_u64().unwrap();
    let report = &probe["recalls"]["content"];
    assert_eq!(
        report["totals"],
        serde_json::json!({
            "recalls": 3, "found_nothing": 1, "returned": offsite.len() + billing.len(),
            "used": 1, "unhelpful": 1, "tokens": tokens,
        }),
        "{report}"
    );
    assert_eq!(report["queries_logged"], false, "{report}");
    let recalls = report["recalls"].as_array().unwrap();
    // Newest first: billing, nothing, offsite; no query text, only its length.
    let operations: Vec<(&str, &str, u64)> = recalls
        .iter()
        .map(|r| {
            assert!(r.get("query").is_none(), "{r}");
            (
                r["operation"].as_str().unwrap(),
                r["project"].as_str().unwrap_or("-"),
                r["words"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        operations,
        [
            ("recall", "probe", 3),
            ("search", "-", 2),
            ("recall", "probe", 2)
        ]
    );
    assert_eq!(recalls[0]["returned"], serde_json::json!(billing));
    assert_eq!(recalls[0]["unhelpful"], serde_json::json!([billing[0]]));
    assert_eq!(recalls[2]["used"], serde_json::json!([offsite[0]]));
    assert_eq!(report["found_nothing"][0]["operation"], "search");
    assert!(recalls.iter().all(|r| r["client"] == "report-probe"));

    let usage = &probe["usage"]["content"]["totals"];
    for stored in probe["stored"].as_array().unwrap() {
        assert_eq!(stored["content"]["verdict"], "admit", "{probe}");
    }
    let bytes: usize = probe["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|text| text.as_str().unwrap().len())
        .sum();
    let returned_bytes: u64 = report["recalls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["returned"].as_array().unwrap().clone())
        .map(|id| {
            let shown = crate::support::json(crate::support::levh(home).args([
                "show",
                id.as_str().unwrap(),
                "--json",
            ]));
            shown["content"].as_str().unwrap().len() as u64
        })
        .sum();
    assert_eq!(
        *usage,
        serde_json::json!({
            "stored": 2, "stored_bytes": bytes, "updated": 0, "recalls": 3,
            "returned": offsite.len() + billing.len(), "returned_tokens": tokens,
            "returned_bytes": returned_bytes,
        }),
        "{probe}"
    );
    // The CLI reads the same report (the log is shared by every process).
    let cli = crate::support::json(crate::support::levh(home).args([
        "report",
        "recalls",
        "--client",
        "report-probe",
        "--json",
    ]));
    assert_eq!(cli["totals"], report["totals"], "{cli}");
}

/// The probe's session is listed, ended, with its client, project and tool calls.
fn check_presence(sessions: &Value, transport: &str) {
    let probe = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["client"] == "report-probe")
        .unwrap_or_else(|| panic!("no report-probe session: {sessions}"));
    assert_eq!(probe["transport"], transport, "{probe}");
    assert_eq!(probe["connected"], false, "{probe}");
    assert!(probe["ended_at"].is_string(), "{probe}");
    assert_eq!(probe["project"], "probe", "{probe}");
    assert_eq!(probe["calls"], 9, "{probe}");
}
