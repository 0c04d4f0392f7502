//! The real `levh` binary on a real PostgreSQL with pgvector (`LEVH_DATABASE_URL`): REST
//! through `levh serve`, MCP through `levh mcp stdio`, `levh doctor`, two servers on one
//! database, and the commands that work only on the home's SQLite file refusing.
//!
//! Each test gets a fresh database on the throwaway server of `levh_postgres::testing`;
//! without PostgreSQL the tests skip saying why, and fail under
//! `LEVH_REQUIRE_TEST_ASSETS=1`.

use std::process::{Child, Command, Stdio};

use levh_mcp::tokio;
use serde_json::{Value, json};

use crate::http::futures_like::next_text;
use crate::support::{levh, runtime, spawn_server};

/// A `levh serve --port 0` on `url`, killed when dropped.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start(home: &std::path::Path, url: &str) -> Self {
        let mut command = levh(home);
        command
            .env("LEVH_DATABASE_URL", url)
            .args(["serve", "--port", "0"])
            // Inherited, not piped: nothing would read a pipe, and a full one blocks the
            // server; a failing test shows what it logged.
            .stderr(Stdio::inherit());
        let (child, address) = spawn_server(&mut command);
        Self { child, address }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client that returns every status as a value.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn answer(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, Value) {
    let mut response = response.unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    };
    (status, body)
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    answer(agent().get(server.url(path)).call())
}

fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    answer(agent().post(server.url(path)).send_json(body))
}

fn delete(server: &Server, path: &str) -> u16 {
    answer(agent().delete(server.url(path)).call()).0
}

fn ids(results: &Value) -> Vec<&str> {
    results["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {results}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

/// How many rows of any table of the database hold `text` anywhere (a row cast to text
/// shows every column: content, JSON, the full-text vector's lexemes).
fn rows_holding(url: &str, text: &str) -> Vec<String> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let tables: Vec<String> = client
        .query(
            "SELECT quote_ident(table_name) FROM information_schema.tables
              WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(tables.len() > 5, "the store's tables: {tables:?}");
    let pattern = format!("%{}%", text.to_lowercase());
    tables
        .into_iter()
        .filter(|table| {
            let found: i64 = client
                .query_one(
                    &format!("SELECT count(*) FROM {table} t WHERE lower(t::text) LIKE $1"),
                    &[&pattern],
                )
                .unwrap()
                .get(0);
            found > 0
        })
        .collect()
}

/// Admits one held candidate from two clients at once: exactly one wins, the other is
/// told it was already decided.
fn admit_twice_at_once(first: &Server, second: &Server, held_id: &str) {
    let path = format!("/api/memories/held/{held_id}/admit");
    let barrier = std::sync::Barrier::new(2);
    let (a, b) = std::thread::scope(|threads| {
        let a = threads.spawn(|| {
            barrier.wait();
            post(first, &path, json!({}))
        });
        let b = threads.spawn(|| {
            barrier.wait();
            post(second, &path, json!({}))
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [200, 409],
        "one admits, one conflicts: {a:?} {b:?}"
    );
    let lost = if a.0 == 409 { &a.1 } else { &b.1 };
    assert!(
        lost["error"].as_str().unwrap().contains("already decided"),
        "{lost}"
    );
}

/// Everything a team's agents do over REST, on PostgreSQL: health names the backend; a
/// capture is found scoped to its project and unscoped; the gate refuses a duplicate and
/// holds a near one, which two concurrent decisions admit once; a secret is redacted
/// before it is stored; the live feed carries each write; forget hides a memory and purge
/// leaves its text in no table of the database.
#[test]
fn serve_on_postgres_gates_searches_decides_once_and_purges_without_residue() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let server = Server::start(home.path(), database.url());

    let (status, health) = get(&server, "/api/health");
    assert_eq!(
        (status, health["backend"].as_str()),
        (200, Some("postgres")),
        "{health}"
    );
    assert_eq!(
        health["schema_version"].as_i64(),
        Some(levh_postgres::latest_schema_version())
    );

    runtime().block_on(async {
        let (mut feed, _) = tokio_tungstenite::connect_async(format!("ws://{}/api/ws", server.address))
            .await
            .unwrap();
        let (status, created) = tokio::task::block_in_place(|| {
            post(
                &server,
                "/api/memories",
                json!({"content": "The main database is PostgreSQL 16 on host db-main", "project": "infra"}),
            )
        });
        assert_eq!((status, created["verdict"].as_str()), (201, Some("admit")), "{created}");
        let event: Value = serde_json::from_str(&next_text(&mut feed).await).unwrap();
        assert_eq!(
            (event["kind"].as_str(), event["surface"].as_str()),
            (Some("store"), Some("http")),
            "{event}"
        );
        assert_eq!(event["memory_id"], created["memory_id"], "{event}");
        assert!(
            !event.to_string().contains("db-main"),
            "events carry ids, never content: {event}"
        );
    });

    let (status, created) = get(&server, "/api/memories?project=infra");
    assert_eq!(status, 200, "{created}");
    let id = created["memories"][0]["id"].as_str().unwrap().to_owned();
    let (status, other) = post(
        &server,
        "/api/memories",
        json!({"content": "Deploys happen on Fridays after the standup", "project": "web"}),
    );
    assert_eq!(status, 201, "{other}");
    let other_id = other["memory_id"].as_str().unwrap().to_owned();

    // Found scoped to its project and across the workspace; not in another project.
    let (_, scoped) = post(
        &server,
        "/api/search",
        json!({"query": "database host", "project": "infra"}),
    );
    assert_eq!(ids(&scoped).first(), Some(&id.as_str()), "{scoped}");
    let (_, unscoped) = post(&server, "/api/search", json!({"query": "database host"}));
    assert_eq!(ids(&unscoped).first(), Some(&id.as_str()), "{unscoped}");
    let (_, elsewhere) = post(
        &server,
        "/api/search",
        json!({"query": "database host", "project": "web"}),
    );
    assert!(!ids(&elsewhere).contains(&id.as_str()), "{elsewhere}");

    // The gate: the same text again is refused, a near one held.
    let (status, duplicate) = post(
        &server,
        "/api/memories",
        json!({"content": "The main database is PostgreSQL 16 on host db-main", "project": "infra"}),
    );
    assert_eq!(
        (status, duplicate["verdict"].as_str()),
        (200, Some("reject")),
        "{duplicate}"
    );
    let (status, held) = post(
        &server,
        "/api/memories",
        json!({"content": "The main database is PostgreSQL 17 on host db-main", "project": "infra"}),
    );
    assert_eq!(
        (status, held["verdict"].as_str()),
        (202, Some("review")),
        "{held}"
    );
    admit_twice_at_once(&server, &server, held["held_id"].as_str().unwrap());

    // A secret never reaches the database.
    let (status, secret) = post(
        &server,
        "/api/memories",
        json!({"content": "The staging database password=hunter2secret lives in the vault"}),
    );
    assert_eq!(status, 201, "{secret}");
    assert!(
        !secret["redactions"].as_array().unwrap().is_empty(),
        "{secret}"
    );
    let (_, stored) = get(
        &server,
        &format!("/api/memories/{}", secret["memory_id"].as_str().unwrap()),
    );
    assert!(
        !stored["content"]
            .as_str()
            .unwrap()
            .contains("hunter2secret"),
        "{stored}"
    );
    assert_eq!(
        rows_holding(database.url(), "hunter2secret"),
        Vec::<String>::new()
    );

    // Forget hides it from every read; purge takes its text out of every table.
    assert_eq!(delete(&server, &format!("/api/memories/{other_id}")), 204);
    assert_eq!(get(&server, &format!("/api/memories/{other_id}")).0, 404);
    let (_, after) = post(
        &server,
        "/api/search",
        json!({"query": "deploys fridays standup"}),
    );
    assert!(!ids(&after).contains(&other_id.as_str()), "{after}");
    assert!(
        !rows_holding(database.url(), "standup").is_empty(),
        "forgotten, still kept"
    );
    let (status, purged) = post(
        &server,
        &format!("/api/memories/{other_id}/purge"),
        json!({}),
    );
    assert_eq!((status, &purged["residue"]), (200, &json!([])), "{purged}");
    assert_eq!(
        rows_holding(database.url(), "standup"),
        Vec::<String>::new(),
        "the purged text is in no table"
    );
    assert_eq!(
        post(
            &server,
            &format!("/api/memories/{other_id}/purge"),
            json!({})
        )
        .0,
        404
    );
}

/// Two `levh serve` processes on one database behave as one service: a write through
/// either is found through the other, each one's live feed carries the other's writes,
/// and a held candidate decided through both at once is admitted once.
#[test]
fn two_servers_on_one_postgres_database_share_memories_feed_and_decisions() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Server::start(home_a.path(), database.url());
    let b = Server::start(home_b.path(), database.url());

    runtime().block_on(async {
        let (mut feed_b, _) = tokio_tungstenite::connect_async(format!("ws://{}/api/ws", b.address))
            .await
            .unwrap();
        let (status, stored) = tokio::task::block_in_place(|| {
            post(
                &a,
                "/api/memories",
                json!({"content": "The release train leaves every second Thursday", "project": "ops"}),
            )
        });
        assert_eq!(status, 201, "{stored}");
        // The other server's feed sees it (its log is the database's).
        let event = loop {
            let event: Value = serde_json::from_str(&next_text(&mut feed_b).await).unwrap();
            if event["kind"] == "store" {
                break event;
            }
        };
        assert_eq!(event["memory_id"], stored["memory_id"], "{event}");
        let (_, found) = tokio::task::block_in_place(|| {
            post(&b, "/api/search", json!({"query": "release train Thursday", "project": "ops"}))
        });
        assert_eq!(ids(&found).first().copied(), stored["memory_id"].as_str(), "{found}");
    });

    // The same text sent to the other server is refused as a duplicate.
    let (status, duplicate) = post(
        &b,
        "/api/memories",
        json!({"content": "The release train leaves every second Thursday", "project": "ops"}),
    );
    assert_eq!(
        (status, duplicate["verdict"].as_str()),
        (200, Some("reject")),
        "{duplicate}"
    );
    let (status, held) = post(
        &b,
        "/api/memories",
        json!({"content": "The release train leaves every third Thursday", "project": "ops"}),
    );
    assert_eq!(
        (status, held["verdict"].as_str()),
        (202, Some("review")),
        "{held}"
    );
    let held_id = held["held_id"].as_str().unwrap();
    let (status, queue) = get(&a, "/api/memories/held");
    assert_eq!(status, 200);
    assert_eq!(queue["held"][0]["id"].as_str(), Some(held_id), "{queue}");
    admit_twice_at_once(&a, &b, held_id);
    let (_, stats) = get(&a, "/api/stats");
    assert_eq!(
        stats["total"], 2,
        "the first memory and the admitted one: {stats}"
    );
}

/// An agent's `levh mcp stdio` on PostgreSQL: it lists its tools, stores through the
/// gate and recalls what it stored; a server on the same database finds it too.
#[test]
fn mcp_stdio_on_postgres_stores_and_recalls() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let id = runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home.path(),
            "claude-code",
            &[("LEVH_DATABASE_URL", database.url())],
        )
        .await;
        let tools = client.list_all_tools().await.unwrap();
        assert!(
            tools.iter().any(|tool| tool.name == "store_memory"),
            "{tools:?}"
        );
        let stored = crate::mcp::ok(
            &client,
            "store_memory",
            json!({ "content": "Releases are tagged vYYYY.MM.DD", "project": "atlas" }),
        )
        .await;
        assert_eq!(stored["verdict"], "admit", "{stored}");
        let id = stored["memory_id"].as_str().unwrap().to_owned();
        let recalled = crate::mcp::ok(
            &client,
            "recall_memory",
            json!({ "query": "how are releases tagged" }),
        )
        .await;
        assert_eq!(recalled["results"][0]["id"], id.as_str(), "{recalled}");
        assert_eq!(recalled["results"][0]["source"], "claude-code");
        client.cancel().await.unwrap();
        id
    });
    let server_home = tempfile::tempdir().unwrap();
    let server = Server::start(server_home.path(), database.url());
    let (_, found) = post(
        &server,
        "/api/search",
        json!({"query": "release tags", "project": "atlas"}),
    );
    assert_eq!(ids(&found).first(), Some(&id.as_str()), "{found}");
}

/// `levh doctor` on PostgreSQL checks the connection, the schema and pgvector and names
/// the backend; the CLI's memory commands work on the database; the commands that act
/// on the home's SQLite file refuse, saying what to use instead, and create no file.
#[test]
fn cli_on_postgres_names_the_backend_and_refuses_what_is_sqlite_only() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let on_postgres = |args: &[&str]| {
        let mut command = levh(home.path());
        command.env("LEVH_DATABASE_URL", database.url()).args(args);
        command
    };
    let doctor = run_json(&mut on_postgres(&["doctor", "--json"]));
    assert_eq!(
        (doctor["backend"].as_str(), doctor["ok"].as_bool()),
        (Some("postgres"), Some(true)),
        "{doctor}"
    );
    let checks: Vec<&str> = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check["check"].as_str().unwrap())
        .collect();
    for check in ["backend", "database", "schema", "vector", "fulltext"] {
        assert!(checks.contains(&check), "doctor lacks {check}: {doctor}");
    }
    let vector = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["check"] == "vector")
        .unwrap();
    assert!(
        vector["detail"].as_str().unwrap().starts_with("pgvector "),
        "{vector}"
    );

    let captured = run_json(&mut on_postgres(&[
        "capture",
        "--json",
        "The CI runner has 2 cores",
    ]));
    assert_eq!(captured["verdict"], "admit", "{captured}");
    let listed = run_json(&mut on_postgres(&["list", "--json"]));
    assert_eq!(
        listed
            .to_string()
            .matches("The CI runner has 2 cores")
            .count(),
        1,
        "{listed}"
    );

    // A purge on PostgreSQL says what the database may still keep beside its tables.
    let purged = crate::support::ok(&mut on_postgres(&[
        "purge",
        captured["memory_id"].as_str().unwrap(),
    ]));
    let purged = String::from_utf8_lossy(&purged.stdout);
    assert!(
        purged.contains("no residue") && purged.contains("VACUUM"),
        "{purged}"
    );
    let captured = run_json(&mut on_postgres(&[
        "capture",
        "--json",
        "The CI runner has 2 cores",
    ]));
    assert_eq!(captured["verdict"], "admit", "{captured}");

    // Backup files are still listed (none here); making or restoring one is refused.
    crate::support::ok(&mut on_postgres(&["backup", "list"]));
    for (args, instead) in [
        (&["backup", "create"][..], "pg_dump"),
        (&["backup", "restore", "some-backup.tar"][..], "pg_restore"),
    ] {
        let output = on_postgres(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded on PostgreSQL");
        assert!(
            stderr.contains("works on the SQLite store") && stderr.contains(instead),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        !home.path().join("levh.db").exists(),
        "nothing on PostgreSQL created a SQLite file in the home"
    );

    // `database_url` in config.toml chooses the database as the variable does: another
    // home, the same memories.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("config.toml"),
        format!("database_url = {:?}\n", database.url()),
    )
    .unwrap();
    let doctor = run_json(levh(other.path()).args(["doctor", "--json"]));
    assert_eq!(doctor["backend"], "postgres", "{doctor}");
    let listed = run_json(levh(other.path()).args(["list", "--json"]));
    assert!(
        listed.to_string().contains("The CI runner has 2 cores"),
        "{listed}"
    );
}

/// A URL that is not PostgreSQL's, or a server that does not answer, is an error naming
/// the setting, and never shows the password.
#[test]
fn a_wrong_database_url_is_named_without_its_password() {
    let home = tempfile::tempdir().unwrap();
    let output = levh(home.path())
        .env("LEVH_DATABASE_URL", "mysql://levh:sekrit-pw@127.0.0.1/levh")
        .arg("list")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("LEVH_DATABASE_URL") && stderr.contains("postgres://"),
        "{stderr}"
    );
    assert!(!stderr.contains("sekrit-pw"), "{stderr}");

    // Nothing listens on a port just freed: doctor reports the failure, the password
    // masked.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = levh(home.path())
        .env(
            "LEVH_DATABASE_URL",
            format!("postgres://levh:sekrit-pw@127.0.0.1:{port}/levh"),
        )
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stdout.contains("sekrit-pw") && !stderr.contains("sekrit-pw"),
        "{stdout}\n{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["backend"], "postgres", "{report}");
    assert!(
        report.to_string().contains("levh:***@127.0.0.1"),
        "the URL is shown masked: {report}"
    );
    assert!(!home.path().join("levh.db").exists());
}

fn run_json(command: &mut Command) -> Value {
    crate::support::json(command)
}

/// A client configured from a shell that names a database in its environment only would
/// start a levh on the home's SQLite file: `levh mcp config` warns, and does not once
/// `config.toml` names the database.
#[test]
fn mcp_config_warns_when_the_database_is_named_in_the_shell_only() {
    let home = tempfile::tempdir().unwrap();
    let config = |home: &std::path::Path| {
        let output = crate::support::ok(
            levh(home)
                .env(
                    "LEVH_DATABASE_URL",
                    "postgres://levh:sekrit-pw@db.internal/levh",
                )
                .args(["mcp", "config", "cursor"]),
        );
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            !stdout.contains("sekrit-pw"),
            "no password in a client's config: {stdout}"
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = config(home.path());
    assert!(
        stderr.contains("set in this shell only") && stderr.contains("database_url"),
        "{stderr}"
    );
    std::fs::write(
        home.path().join("config.toml"),
        "database_url = \"postgres://levh@db.internal/levh\"\n",
    )
    .unwrap();
    let stderr = config(home.path());
    assert!(!stderr.contains("shell only"), "{stderr}");
}

/// Four `levh serve` processes on one database, four clients each, for a minute; one
/// server is killed (`kill -9`) a third of the way in and started again. A quarter of the
/// texts are sent by every client in the same fifth of a second, so servers race to
/// admit the same text all the time. At the end every acknowledged write is stored with
/// its text, no text is stored (or waits in the held queue) twice, and no live server
/// answered with a 5xx.
#[test]
fn four_servers_sixteen_clients_a_minute_and_a_kill_lose_nothing_and_admit_no_text_twice() {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use crate::support::distinct_sentence;

    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let url = database.url().to_owned();
    let homes: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    // Each server's address, `None` while it is down.
    let servers: Vec<Mutex<Option<Server>>> = homes
        .iter()
        .map(|home| Mutex::new(Some(Server::start(home.path(), &url))))
        .collect();
    let address = |index: usize| {
        servers[index]
            .lock()
            .unwrap()
            .as_ref()
            .map(|s| s.address.clone())
    };
    let started = Instant::now();
    let run_for = Duration::from_secs(60);
    let stop = AtomicBool::new(false);
    let next = AtomicU64::new(0);
    let acknowledged: Mutex<HashMap<String, String>> = Mutex::default();
    let failures: Mutex<Vec<String>> = Mutex::default();
    let statuses: Mutex<HashMap<u16, u64>> = Mutex::default();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();

    std::thread::scope(|threads| {
        for client in 0..16usize {
            let (address, stop, next, acknowledged, failures, statuses, agent) = (
                &address,
                &stop,
                &next,
                &acknowledged,
                &failures,
                &statuses,
                agent.clone(),
            );
            threads.spawn(move || {
                let server = client % 4;
                let mut sent = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    sent += 1;
                    let content = if sent.is_multiple_of(4) {
                        // Every client sends this one within the same 200 ms.
                        let window = started.elapsed().as_millis() as u64 / 200;
                        distinct_sentence(1_000_000 + window)
                    } else {
                        distinct_sentence(next.fetch_add(1, Ordering::Relaxed))
                    };
                    let Some(at) = address(server) else {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    };
                    let Ok(mut response) = agent
                        .post(format!("http://{at}/api/memories"))
                        .send_json(json!({ "content": content, "project": "load" }))
                    else {
                        continue; // the server was killed mid-request: not acknowledged
                    };
                    let status = response.status().as_u16();
                    *statuses.lock().unwrap().entry(status).or_default() += 1;
                    let body: Value = response.body_mut().read_json().unwrap_or(Value::Null);
                    if status >= 500 {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("server {server}: {status} {body}"));
                    } else if status == 201 {
                        let id = body["memory_id"].as_str().unwrap().to_owned();
                        acknowledged.lock().unwrap().insert(id, content);
                    }
                }
            });
        }
        // One server dies a third of the way in and comes back.
        std::thread::sleep(Duration::from_secs(20));
        let killed = servers[1].lock().unwrap().take();
        drop(killed); // kill -9 and wait
        std::thread::sleep(Duration::from_secs(2));
        *servers[1].lock().unwrap() = Some(Server::start(homes[1].path(), &url));
        std::thread::sleep(run_for.saturating_sub(started.elapsed()));
        stop.store(true, Ordering::Relaxed);
    });

    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "5xx from a live server: {failures:?}");
    let acknowledged = acknowledged.into_inner().unwrap();
    let statuses = statuses.into_inner().unwrap();
    assert!(
        acknowledged.len() > 500,
        "too few writes to prove anything: {} ({statuses:?})",
        acknowledged.len()
    );
    assert!(
        statuses.get(&200).copied().unwrap_or(0) > 50,
        "the shared texts were refused as duplicates: {statuses:?}"
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let stored: HashMap<String, String> = client
        .query(
            "SELECT id, content FROM memories WHERE forgotten_at IS NULL",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    for (id, content) in &acknowledged {
        assert_eq!(
            stored.get(id),
            Some(content),
            "acknowledged write {id} lost"
        );
    }
    let twice: Vec<(String, i64)> = client
        .query(
            "SELECT content, count(*) FROM memories
              GROUP BY workspace, project, content_hash, content HAVING count(*) > 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert!(twice.is_empty(), "texts stored twice: {twice:?}");
    let held_twice: i64 = client
        .query_one(
            "SELECT count(*) FROM (SELECT 1 FROM held_candidates WHERE status = 'held'
              GROUP BY workspace, project, content_hash HAVING count(*) > 1) AS t",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(held_twice, 0, "texts held twice");
    eprintln!(
        "4 servers × 4 clients, 60 s, one kill: {} writes acknowledged, responses {statuses:?}",
        acknowledged.len()
    );
}
