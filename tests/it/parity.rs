//! One operation, one document: for every operation the CLI offers, `levh … --json`, the
//! REST body of a real `levh serve` and the structured content of its MCP tool are the
//! same JSON (ids and times aside), so no surface can drift into a shape of its own.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{json as cli_json, levh, serve};

/// The clock every process reads, so retention and curves agree to the last digit.
const NOW: &str = "2026-11-02T09:00:00Z";

/// A client of one running server: REST and an initialized MCP session.
struct Server {
    address: String,
    agent: ureq::Agent,
    session: String,
    next_id: std::cell::Cell<u64>,
}

impl Server {
    fn connect(address: String) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "parity", "version": "1"}}
        });
        let response = agent
            .post(format!("http://{address}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .send_json(&initialize)
            .unwrap();
        let session = response
            .headers()
            .get("mcp-session-id")
            .expect("an MCP session id")
            .to_str()
            .unwrap()
            .to_owned();
        let server = Self {
            address,
            agent,
            session,
            next_id: std::cell::Cell::new(1),
        };
        server.mcp_send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn mcp_send(&self, message: &Value) -> String {
        let mut response = self
            .agent
            .post(format!("http://{}/mcp", self.address))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-06-18")
            .send_json(message)
            .unwrap();
        response.body_mut().read_to_string().unwrap()
    }

    /// A tool's structured content (the tool's error text when it failed).
    fn tool(&self, name: &str, arguments: Value) -> Value {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let text = self.mcp_send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}
        }));
        // JSON, or an SSE stream whose data lines hold the JSON-RPC answer.
        let answer: Value = serde_json::from_str(&text).unwrap_or_else(|_| {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == id)
                .unwrap_or_else(|| panic!("no answer to {name}: {text}"))
        });
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "{name} failed: {answer}");
        result["structuredContent"].clone()
    }

    fn rest(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("http://{}{path}", self.address);
        let mut response = match (method, body) {
            ("GET", _) => self.agent.get(&url).call().unwrap(),
            ("DELETE", _) => self.agent.delete(&url).call().unwrap(),
            ("POST", Some(body)) => self.agent.post(&url).send_json(&body).unwrap(),
            ("POST", None) => self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send_empty()
                .unwrap(),
            other => panic!("no such request in this test: {other:?}"),
        };
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        assert!(status < 300, "{method} {path}: {status} {text}");
        if status == 204 {
            return Value::Null;
        }
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"))
    }
}

/// The document with every id and time replaced by a placeholder (they differ between
/// the three memories a mutation is tried on, and a time's precision is not the point).
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (key.clone(), shape(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(text) if is_id(text) => Value::String("<id>".into()),
        Value::String(text) if levh_core::parse_instant(text).is_some() && text.len() >= 20 => {
            Value::String("<time>".into())
        }
        other => other.clone(),
    }
}

fn is_id(text: &str) -> bool {
    text.len() == 36 && text.chars().filter(|c| *c == '-').count() == 4
}

/// The same document from three surfaces.
fn same(what: &str, cli: &Value, rest: &Value, mcp: &Value) {
    same_two(what, cli, rest);
    assert_eq!(shape(rest), shape(mcp), "{what}: MCP differs from REST");
}

/// The same document from the CLI and REST, for operations MCP offers otherwise (one
/// memory is a resource there; curves and a held candidate's page are for people).
fn same_two(what: &str, cli: &Value, rest: &Value) {
    assert_eq!(
        shape(cli),
        shape(rest),
        "{what}: the CLI's --json differs from REST"
    );
}

fn cli(home: &Path, args: &[&str]) -> Value {
    cli_json(
        levh(home)
            .env("LEVH_NOW", NOW)
            .env("LEVH_EMBEDDER", "hash")
            .arg("--json")
            .args(args),
    )
}

#[test]
fn the_cli_rest_and_mcp_answer_every_shared_operation_with_the_same_document() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let (child, address) = serve(
        home,
        &[
            ("LEVH_NOW", NOW),
            ("LEVH_EMBEDDER", "hash"),
            ("LEVH_MCP_PROFILE", "full"),
        ],
    );
    // Stopped however the test ends: a failed comparison must not leave a server behind.
    let _server_process = StopOnDrop(child);
    let server = Server::connect(address);

    // What differs by design between three memories written through three surfaces:
    // their words and who wrote them (`source`: `cli`, `http`, the MCP client's name).
    let masked = |mut value: Value| {
        for key in ["content", "content_hash", "source"] {
            if value.get(key).is_some() {
                value[key] = Value::Null;
            }
        }
        value
    };
    // Writes: each surface stores its own memory; the answers have one shape.
    let stored_cli = cli(
        home,
        &[
            "capture",
            "The release train for the mobile apps leaves every second Thursday at nine",
            "-p",
            "ops",
        ],
    );
    let stored_rest = server.rest(
        "POST",
        "/api/memories",
        Some(json!({"content": "The staging cluster is rebuilt every Monday night", "project": "ops"})),
    );
    let stored_mcp = server.tool(
        "store_memory",
        json!({"content": "Invoices go out on the first working day of the month", "project": "ops"}),
    );
    same(
        "store",
        &masked(stored_cli.clone()),
        &masked(stored_rest.clone()),
        &masked(stored_mcp.clone()),
    );
    let ids: Vec<String> = [&stored_cli, &stored_rest, &stored_mcp]
        .iter()
        .map(|v| v["memory_id"].as_str().unwrap().to_owned())
        .collect();

    // What the gate would say, storing nothing.
    let text = "The release train for the mobile apps leaves every second Thursday at nine";
    same(
        "evaluate",
        &cli(home, &["capture", "--dry-run", text, "-p", "ops"]),
        &server.rest(
            "POST",
            "/api/memories/evaluate-admission",
            Some(json!({"content": text, "project": "ops"})),
        ),
        &server.tool(
            "evaluate_admission",
            json!({"content": text, "project": "ops"}),
        ),
    );

    // Reads of the same store.
    same(
        "list",
        &cli(home, &["list", "-p", "ops"]),
        &server.rest("GET", "/api/memories?project=ops", None),
        &server.tool("list_memories", json!({"project": "ops"})),
    );
    same_two(
        "get",
        &cli(home, &["show", &ids[0]]),
        &server.rest("GET", &format!("/api/memories/{}", ids[0]), None),
    );
    same(
        "fading",
        &cli(home, &["fading"]),
        &server.rest("GET", "/api/memories/fading", None),
        &server.tool("list_fading_memories", json!({})),
    );
    same_two(
        "curve",
        &cli(home, &["curve", &ids[1], "--days", "5"]),
        &server.rest(
            "GET",
            &format!("/api/memories/{}/forgetting-curve?days=5", ids[1]),
            None,
        ),
    );
    same(
        "stats",
        &cli(home, &["stats"]),
        &server.rest("GET", "/api/stats", None),
        &server.tool("get_memory_stats", json!({})),
    );
    let query = "when does the release train leave";
    same(
        "search",
        &cli(home, &["recall", query, "--no-reinforce", "--explain"]),
        &server.rest(
            "POST",
            "/api/search",
            Some(json!({"query": query, "explain": true})),
        ),
        &server.tool("search_memory", json!({"query": query, "explain": true})),
    );
    same(
        "search, compact",
        &cli(home, &["recall", query, "--no-reinforce", "--compact"]),
        &server.rest(
            "POST",
            "/api/search",
            Some(json!({"query": query, "compact": true})),
        ),
        &server.tool("search_memory", json!({"query": query, "compact": true})),
    );

    // The same change on three memories in the same state, one per surface (their own
    // words aside).
    same(
        "pin",
        &masked(cli(home, &["pin", &ids[0]])),
        &masked(server.rest("POST", &format!("/api/memories/{}/pin", ids[1]), None)),
        &masked(server.tool("pin_memory", json!({"id": ids[2]}))),
    );
    same(
        "reinforce",
        &masked(cli(home, &["reinforce", &ids[0]])),
        &masked(server.rest("POST", &format!("/api/memories/{}/reinforce", ids[1]), None)),
        &masked(server.tool("reinforce_memory", json!({"id": ids[2]}))),
    );

    same(
        "unpin",
        &masked(cli(home, &["unpin", &ids[0]])),
        &masked(server.rest("POST", &format!("/api/memories/{}/unpin", ids[1]), None)),
        &masked(server.tool("unpin_memory", json!({"id": ids[2]}))),
    );
    same(
        "feedback",
        &masked(cli(home, &["feedback", &ids[0], "--unhelpful"])),
        &masked(server.rest(
            "POST",
            &format!("/api/memories/{}/feedback", ids[1]),
            Some(json!({"helpful": false})),
        )),
        &masked(server.tool("memory_feedback", json!({"id": ids[2], "helpful": false}))),
    );
    // A new token: its secret and label differ by design, its shape does not.
    let issued = |mut value: Value| {
        for key in ["id", "secret", "label"] {
            value[key] = Value::Null;
        }
        value
    };
    same_two(
        "token create",
        &issued(cli(
            home,
            &[
                "token",
                "create",
                "--role",
                "viewer",
                "--label",
                "parity cli",
            ],
        )),
        &issued(server.rest(
            "POST",
            "/api/tokens",
            Some(json!({"role": "viewer", "label": "parity rest"})),
        )),
    );
    same_two(
        "tokens",
        &{
            cli(
                home,
                &["token", "create", "--role", "viewer", "--label", "parity"],
            );
            cli(home, &["token", "list"])
        },
        &server.rest("GET", "/api/tokens", None),
    );

    // The held queue: a near-copy is held; list and show agree.
    let held = cli(
        home,
        &[
            "capture",
            "The release train for the mobile apps leaves every second Thursday at ten",
            "-p",
            "ops",
        ],
    );
    assert_eq!(held["verdict"], "review", "{held}");
    let held_id = held["held_id"].as_str().unwrap();
    same(
        "held list",
        &cli(home, &["held", "list"]),
        &server.rest("GET", "/api/memories/held", None),
        &server.tool("list_held_memories", json!({})),
    );
    same_two(
        "held show",
        &cli(home, &["held", "show", held_id]),
        &server.rest("GET", &format!("/api/memories/held/{held_id}"), None),
    );
    // Deciding: a second near-copy, one discarded through each surface.
    let second = cli(
        home,
        &[
            "capture",
            "The release train for the mobile apps leaves every second Thursday at eleven",
            "-p",
            "ops",
        ],
    );
    assert_eq!(second["verdict"], "review", "{second}");
    let second_id = second["held_id"].as_str().unwrap();
    // Who decided names the surface (`local via cli`, `local via http`), by design.
    let decided = |mut value: Value| {
        value["decided_by"] = Value::Null;
        masked(value)
    };
    same_two(
        "held discard",
        &decided(cli(home, &["held", "discard", held_id])),
        &decided(server.rest(
            "POST",
            &format!("/api/memories/held/{second_id}/discard"),
            None,
        )),
    );

    // Admitting: two more near-copies, one admitted through each surface (MCP asks the
    // person through elicitation, so it has no admit to compare).
    let held_ids: Vec<String> = ["at noon", "at one"]
        .iter()
        .map(|when| {
            let answer = cli(
                home,
                &[
                    "capture",
                    &format!(
                        "The release train for the mobile apps leaves every second Thursday {when}"
                    ),
                    "-p",
                    "ops",
                ],
            );
            assert_eq!(answer["verdict"], "review", "{answer}");
            answer["held_id"].as_str().unwrap().to_owned()
        })
        .collect();
    // Each admitted copy contradicts the copies admitted before it ("at noon" the base,
    // "at one" the base and "at noon"): the lists differ by that, the documents not.
    let mut by_cli = cli(home, &["held", "admit", &held_ids[0]]);
    let mut by_rest = server.rest(
        "POST",
        &format!("/api/memories/held/{}/admit", held_ids[1]),
        None,
    );
    for (admitted, count) in [(&mut by_cli, 1), (&mut by_rest, 2)] {
        let conflicts = admitted["conflicts"].as_array_mut().unwrap();
        assert_eq!(conflicts.len(), count, "{conflicts:?}");
        conflicts.truncate(1);
    }
    same_two("held admit", &decided(by_cli), &decided(by_rest));

    // What levh knows from the memories: people, organizations, decisions, commitments,
    // the timeline and the entity graph.
    cli(
        home,
        &[
            "capture",
            "Met Ana Lima (ana.lima@northwind.example) on the billing migration: we decided to \
             move invoicing to the new ledger, and I will send Ana the cut-over plan by Friday",
            "-p",
            "billing",
        ],
    );
    let people = cli(home, &["people"]);
    assert!(!people["people"].as_array().unwrap().is_empty(), "{people}");
    same(
        "people",
        &people,
        &server.rest("GET", "/api/people", None),
        &server.tool("list_people", json!({})),
    );
    let orgs = cli(home, &["orgs"]);
    same(
        "organizations",
        &orgs,
        &server.rest("GET", "/api/organizations", None),
        &server.tool("list_organizations", json!({})),
    );
    let decisions = cli(home, &["decisions"]);
    assert!(
        !decisions["decisions"].as_array().unwrap().is_empty(),
        "{decisions}"
    );
    same(
        "decisions",
        &decisions,
        &server.rest("GET", "/api/decisions", None),
        &server.tool("list_decisions", json!({})),
    );
    let commitments = cli(home, &["commitments"]);
    assert!(
        !commitments["commitments"].as_array().unwrap().is_empty(),
        "{commitments}"
    );
    same(
        "commitments",
        &commitments,
        &server.rest("GET", "/api/commitments", None),
        &server.tool("list_commitments", json!({})),
    );
    same(
        "entities",
        &cli(home, &["entities"]),
        &server.rest("GET", "/api/entities", None),
        &server.tool("list_entities", json!({})),
    );
    same(
        "about",
        &cli(home, &["about", "ana.lima@northwind.example"]),
        &server.rest("GET", "/api/entities/ana.lima@northwind.example", None),
        &server.tool(
            "about_entity",
            json!({"entity": "ana.lima@northwind.example"}),
        ),
    );
    same(
        "graph",
        &cli(home, &["entities", "graph"]),
        &server.rest("GET", "/api/graph", None),
        &server.tool("entity_graph", json!({})),
    );
    same(
        "timeline",
        &cli(home, &["timeline", "this week"]),
        &server.rest("GET", "/api/timeline?range=this%20week", None),
        &server.tool("timeline", json!({"range": "this week"})),
    );
    // Two commitments kept, one through each surface that offers it.
    cli(
        home,
        &[
            "capture",
            "Promised Bruno Costa (bruno@northwind.example) I will review the ledger schema by Tuesday",
            "-p",
            "billing",
        ],
    );
    let open = cli(home, &["commitments"]);
    let commitment_ids: Vec<String> = open["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(commitment_ids.len(), 2, "{open}");
    let kept = |mut value: Value| {
        for key in ["id", "sentence", "people", "due", "overdue"] {
            value[key] = Value::Null;
        }
        value
    };
    same_two(
        "commitment done",
        &kept(cli(home, &["commitments", "done", &commitment_ids[0]])),
        &kept(server.rest(
            "POST",
            &format!("/api/commitments/{}/done", commitment_ids[1]),
            None,
        )),
    );
    same_two(
        "entities reindex",
        &cli(home, &["entities", "reindex"]),
        &server.rest("POST", "/api/entities/reindex", Some(json!({}))),
    );
    same(
        "redact secrets",
        &cli(home, &["redact-secrets"]),
        &server.rest("POST", "/api/memories/redact-all", None),
        &server.tool("redact_secrets", json!({})),
    );
    same(
        "audit secrets",
        &cli(home, &["audit-secrets"]),
        &server.rest("GET", "/api/memories/audit-secrets", None),
        &server.tool("audit_secrets", json!({})),
    );

    // Connectors: the catalog, one connector's help, and the runs (MCP sends each under
    // `result`, its structured content being an object).
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("standup.md"),
        "The standup moved to 9:30 from Monday on.\n",
    )
    .unwrap();
    let report = cli(
        home,
        &[
            "sync",
            "local_files",
            "--config",
            &format!("directory={}", notes.path().display()),
        ],
    );
    assert_eq!(report["admitted"], 1, "{report}");
    same(
        "connector list",
        &cli(home, &["connector", "list"]),
        &server.rest("GET", "/api/connectors", None),
        &server.tool("list_connectors", json!({}))["result"],
    );
    same(
        "sync status",
        &cli(home, &["sync", "status"]),
        &server.rest("GET", "/api/connectors/sync-state", None),
        &server.tool("connector_sync_status", json!({}))["result"],
    );

    // Reports from the log: REST first (the server writes its batched recall events
    // before it reads the log), then the CLI, another process, and MCP read the same.
    let rest = server.rest("GET", "/api/reports/recalls", None);
    assert!(rest["totals"]["recalls"].as_u64().unwrap() > 0, "{rest}");
    same(
        "recall report",
        &cli(home, &["report", "recalls"]),
        &rest,
        &server.tool("report_recalls", json!({})),
    );
    let rest = server.rest("GET", "/api/reports/usage", None);
    same(
        "usage report",
        &cli(home, &["report", "usage"]),
        &rest,
        &server.tool("report_usage", json!({})),
    );
    // The MCP session's tool calls are counted as it makes them: not compared.
    let without_calls = |mut view: Value| {
        for session in view["sessions"].as_array_mut().unwrap() {
            session.as_object_mut().unwrap().remove("calls");
        }
        view
    };
    let rest = without_calls(server.rest("GET", "/api/presence", None));
    assert_eq!(rest["connected"], 1, "the test's MCP session: {rest}");
    same_two(
        "sessions",
        &without_calls(cli(home, &["report", "sessions"])),
        &rest,
    );

    // Retiring: forget (REST answers 204 with no body), then purge, one memory each.
    let forgotten = cli(home, &["forget", &ids[0]]);
    assert_eq!(
        server.rest("DELETE", &format!("/api/memories/{}", ids[1]), None),
        Value::Null
    );
    assert_eq!(
        shape(&masked(forgotten)),
        shape(&masked(server.tool("forget_memory", json!({"id": ids[2]})))),
        "forget: the CLI's --json differs from MCP"
    );
    same(
        "purge",
        &cli(home, &["purge", &ids[0]]),
        &server.rest("POST", &format!("/api/memories/{}/purge", ids[1]), None),
        &server.tool("purge_memory", json!({"id": ids[2]})),
    );
}

/// A server process stopped when the test lets go of it, passing or failing.
struct StopOnDrop(std::process::Child);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The dependency direction that keeps one application layer under every surface:
/// levh-api knows no surface, and no surface reaches past it to the store (its tests
/// may open one).
#[test]
fn the_application_layer_depends_on_no_surface_and_no_surface_on_the_store() {
    let root = crate::support::repository_root().join("host");
    let dependencies = |krate: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        manifest
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .map(|table| table.keys().cloned().collect())
            .unwrap_or_default()
    };
    let surfaces = ["levh-http", "levh-mcp", "levh-dashboard"];
    let api = dependencies("levh-api");
    for surface in surfaces.iter().chain(&["levh"]) {
        assert!(
            !api.iter().any(|d| d == surface),
            "levh-api depends on the surface {surface}: {api:?}"
        );
    }
    for surface in surfaces {
        let deps = dependencies(surface);
        assert!(
            !deps.iter().any(|d| d == "levh-store"),
            "{surface} depends on levh-store outside its tests: {deps:?}"
        );
    }
    // The CLI is a surface too: its commands go through levh-api (`Context::run`), and
    // no command file names the engine facade or the store.
    let commands = root.join("levh").join("src").join("cli");
    let names_engine_or_store = |line: &str| {
        line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .any(|word| {
                word.split('.')
                    .any(|part| part == "Levh" || part == "SqliteStore")
                    || word.starts_with("levh_store")
                    || word == "context.levh"
                    || word.starts_with("context.levh.")
                    || word == "context.store"
                    || word.starts_with("context.store.")
            })
    };
    let mut files = 0;
    for entry in std::fs::read_dir(&commands).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        files += 1;
        for (n, line) in text.lines().enumerate() {
            assert!(
                !names_engine_or_store(line),
                "{}:{} names the engine or the store: {line}",
                path.display(),
                n + 1
            );
        }
    }
    assert!(
        files > 20,
        "the CLI's command files were not found under {commands:?}"
    );
}

/// The server's log names the operation (REST) and the tool (MCP) each answer belongs to:
/// one span per operation, whatever the path or the transport.
#[test]
fn the_log_names_the_operation_of_every_answer() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, address) = serve(
        home.path(),
        &[
            ("LEVH_EMBEDDER", "hash"),
            (
                "RUST_LOG",
                "levh_http::routes=debug,levh_mcp::handler=debug",
            ),
        ],
    );
    let server = Server::connect(address);
    server.rest("GET", "/api/memories/fading", None);
    server.tool("get_memory_stats", json!({}));
    child.kill().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    child.wait().unwrap();
    assert!(
        log.contains("operation{name=\"list_fading_memories\"}"),
        "{log}"
    );
    assert!(log.contains("tool{name=get_memory_stats}"), "{log}");
}
