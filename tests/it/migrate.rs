//! `levh migrate --from sqlite PATH --to postgres://…` with the real binary: a personal
//! store built through `levh` moves into a fresh PostgreSQL database, and `levh serve` on
//! that database answers as the personal store's own server does; a second move copies
//! nothing; a move killed mid-way and started again leaves one copy of everything; a
//! newer store and a URL that is not PostgreSQL's are refused, saying why.
//!
//! Without PostgreSQL the tests that need it skip saying why (see `postgres.rs`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{distinct_sentence, json as json_of, levh, ok, spawn_server};

/// Every command of a test runs at this instant, so the two servers compute the same
/// retention and the memories' times are the same on both sides.
const NOW: &str = "2026-11-30T09:00:00Z";

fn at_now(home: &Path) -> Command {
    let mut command = levh(home);
    command.env("LEVH_NOW", NOW);
    command
}

/// `levh migrate --json` of `home`'s store into `url`, parsed.
fn migrate(home: &Path, url: &str, extra: &[&str]) -> Value {
    let store = home.join("levh.db");
    json_of(
        at_now(home)
            .args(["migrate", "--from", "sqlite"])
            .arg(&store)
            .args(["--to", url, "--json"])
            .args(extra),
    )
}

/// A `levh serve` at [`NOW`] on the home's SQLite store, or on `url`; killed when dropped.
struct Server {
    child: std::process::Child,
    address: String,
}

impl Server {
    fn start(home: &Path, url: Option<&str>) -> Self {
        let mut command = at_now(home);
        if let Some(url) = url {
            command.env("LEVH_DATABASE_URL", url);
        }
        command
            .args(["serve", "--port", "0"])
            .stderr(Stdio::inherit());
        let (child, address) = spawn_server(&mut command);
        Self { child, address }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("http://{}{path}", self.address);
        let response = match (method, body) {
            ("GET", _) => agent.get(&url).call(),
            (_, Some(body)) => agent.post(&url).send_json(body),
            (_, None) => agent.post(&url).send_json(json!({})),
        };
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

    fn get(&self, path: &str) -> Value {
        let (status, body) = self.call("GET", path, None);
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ids a personal store holds after [`personal_store`] built it.
struct Built {
    superseded: String,
    superseding: String,
    pinned: String,
    person: String,
    forgotten: String,
    in_session: String,
    held_waiting: String,
    keyed: String,
}

fn capture(home: &Path, text: &str, extra: &[&str]) -> Value {
    json_of(at_now(home).args(["capture", text, "--json"]).args(extra))
}

fn memory_id(view: &Value) -> String {
    view["memory_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no memory id in {view}"))
        .to_owned()
}

/// A personal store with a bit of everything, built through the real binary: a session,
/// a capture in it, a pinned one, one naming a person, a forgotten one, a held candidate
/// admitted to supersede its neighbour and one still waiting, a keyed fact, a token, an
/// attachment, and recalls.
fn personal_store(home: &Path) -> Built {
    let session = json_of(at_now(home).args(["session", "start", "--project", "infra", "--json"]));
    let session_id = session["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id in {session}"))
        .to_owned();
    let in_session = memory_id(&capture(
        home,
        "Backups of the billing database run nightly at 02:00 UTC",
        &["--project", "infra", "--session", &session_id],
    ));
    let superseded = memory_id(&capture(
        home,
        "The main database is PostgreSQL 16 on host db-main",
        &["--project", "infra"],
    ));
    let pinned = memory_id(&capture(
        home,
        "Deploys happen on Fridays after the standup",
        &["--pin", "--importance", "0.9"],
    ));
    let person = memory_id(&capture(
        home,
        "Ada Lovelace <ada@example.org> owns the billing service and its on-call rota",
        &["--kind", "decision"],
    ));
    let forgotten = memory_id(&capture(
        home,
        "The old staging box in the basement was retired in March",
        &[],
    ));
    ok(at_now(home).args(["forget", &forgotten]));
    let held = capture(
        home,
        "The main database is PostgreSQL 17 on host db-main",
        &["--project", "infra"],
    );
    assert_eq!(held["verdict"], "review", "{held}");
    let admitted = json_of(at_now(home).args([
        "held",
        "admit",
        held["held_id"].as_str().unwrap(),
        "--supersede",
        "--json",
    ]));
    let superseding = admitted["memory_id"]
        .as_str()
        .or_else(|| admitted["memory"]["id"].as_str())
        .unwrap_or_else(|| panic!("no memory id in {admitted}"))
        .to_owned();
    let waiting = capture(
        home,
        "Deploys happen on Fridays after the daily standup",
        &[],
    );
    assert_eq!(waiting["verdict"], "review", "{waiting}");
    let keyed = json_of(at_now(home).args([
        "upsert",
        "build command",
        "cargo build --release --locked",
        "--json",
    ]));
    let keyed = keyed["memory"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no memory id in {keyed}"))
        .to_owned();
    ok(at_now(home).args(["token", "create", "--role", "editor", "--label", "ci"]));
    let file = home.join("runbook.md");
    std::fs::write(
        &file,
        "# Runbook\n\nRestart the billing workers with `systemctl restart billing`.\n",
    )
    .unwrap();
    ok(at_now(home).args(["attach", &pinned]).arg(&file));
    ok(at_now(home).args(["recall", "database host", "--json"]));
    ok(at_now(home).args(["recall", "deploys fridays", "--json"]));
    Built {
        superseded,
        superseding,
        pinned,
        person,
        forgotten,
        in_session,
        held_waiting: waiting["held_id"].as_str().unwrap().to_owned(),
        keyed,
    }
}

/// A report's table by name.
fn table<'r>(report: &'r Value, name: &str) -> &'r Value {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == name)
        .unwrap_or_else(|| panic!("no table {name} in {report}"))
}

/// The move, then `levh serve` on the team database shows what the personal store's own
/// server shows: the same memories with the same ids and states (pinned, superseded,
/// forgotten, recalled), the same held queue, the same recall, the same entity, session
/// and attachment; the vectors' model is named; a second move copies nothing.
#[test]
fn a_moved_store_reads_the_same_on_postgres_and_a_second_move_copies_nothing() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let built = personal_store(home.path());
    let before = std::fs::read(home.path().join("levh.db")).unwrap();

    let report = migrate(home.path(), database.url(), &[]);
    assert_eq!(report["resumed"], false, "{report}");
    // The planner knows the moved tables at once, not after autovacuum's next round.
    let analyzed: i64 = postgres::Client::connect(database.url(), postgres::NoTls)
        .unwrap()
        .query_one(
            "SELECT count(*) FROM pg_stat_user_tables
              WHERE relname IN ('memories', 'memory_embeddings', 'events')
                AND last_analyze IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(analyzed, 3, "the moved tables have planner statistics");
    assert!(
        report["warnings"]
            .to_string()
            .contains("1 API tokens moved"),
        "moved tokens open the team server: said so: {report}"
    );
    for t in report["tables"].as_array().unwrap() {
        assert_eq!(t["refused"], 0, "{t}");
        assert_eq!(
            t["copied"], t["read"],
            "everything is new to an empty database: {t}"
        );
    }
    for name in [
        "memories",
        "memory_embeddings",
        "held_candidates",
        "events",
        "sessions",
        "tokens",
        "attachments",
        "entities",
        "memory_keys",
        "memories.superseded_by",
    ] {
        assert!(
            table(&report, name)["copied"].as_u64().unwrap() > 0,
            "{name} moved nothing: {report}"
        );
    }
    let models = report["vectors"].as_array().unwrap();
    assert_eq!(models.len(), 1, "{report}");
    assert!(
        models[0]["model"].as_str().unwrap().starts_with("hash"),
        "{report}"
    );
    let not_moved: Vec<&str> = report["not_moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["table"].as_str().unwrap())
        .collect();
    assert!(not_moved.contains(&"presence"), "{not_moved:?}");
    assert!(
        !report.to_string().contains("secret"),
        "the URL's password is never shown: {report}"
    );
    assert_eq!(
        std::fs::read(home.path().join("levh.db")).unwrap(),
        before,
        "the personal store is only read"
    );

    // Again, before anything else writes: nothing new, every row already there.
    let again = migrate(home.path(), database.url(), &[]);
    for t in again["tables"].as_array().unwrap() {
        assert_eq!(t["copied"], 0, "a second move copied: {t}");
        assert_eq!(t["already_there"], t["read"], "{t}");
        assert_eq!(t["refused"], 0, "{t}");
    }

    // The same answers from both servers, at the same instant.
    let personal = Server::start(home.path(), None);
    let team_home = tempfile::tempdir().unwrap();
    let team = Server::start(team_home.path(), Some(database.url()));
    for path in [
        "/api/memories?limit=100".to_owned(),
        "/api/memories/held".to_owned(),
        format!("/api/memories/{}", built.superseding),
        format!("/api/memories/{}", built.pinned),
        format!("/api/memories/{}", built.person),
        format!("/api/memories/{}", built.in_session),
        format!("/api/memories/{}", built.keyed),
        format!("/api/memories/held/{}", built.held_waiting),
    ] {
        assert_eq!(personal.get(&path), team.get(&path), "GET {path}");
    }
    // Retired memories: forgotten and superseded ones are not served as live on either.
    for id in [&built.forgotten, &built.superseded] {
        let path = format!("/api/memories/{id}");
        let (a, b) = (
            personal.call("GET", &path, None),
            team.call("GET", &path, None),
        );
        assert_eq!(a, b, "GET {path}");
    }
    // And what those answers mean: the states arrived, not just equal nothing.
    let superseded = team.call("GET", &format!("/api/memories/{}", built.superseded), None);
    assert_eq!(
        superseded.1["superseded_by"].as_str(),
        Some(built.superseding.as_str()),
        "{superseded:?}"
    );
    let forgotten = team.call("GET", &format!("/api/memories/{}", built.forgotten), None);
    assert_eq!(forgotten.0, 404, "{forgotten:?}");
    let pinned = team.get(&format!("/api/memories/{}", built.pinned));
    assert_eq!(pinned["pinned"], true, "{pinned}");
    assert!(pinned["recall_count"].as_u64().unwrap() >= 1, "{pinned}");
    let held = team.get("/api/memories/held");
    assert_eq!(
        held["held"][0]["id"].as_str(),
        Some(built.held_waiting.as_str()),
        "{held}"
    );
    let recall = |server: &Server| {
        let (status, body) = server.call(
            "POST",
            "/api/search",
            Some(json!({"query": "who owns billing", "limit": 5})),
        );
        assert_eq!(status, 200, "{body}");
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let found = recall(&team);
    assert_eq!(recall(&personal), found);
    assert!(found.contains(&built.person), "{found:?}");
    drop(team);
    drop(personal);
}

/// Rows of `table` in the database.
fn count(url: &str, table: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0)
}

/// Rows of `table` in the personal store.
fn count_sqlite(home: &Path, table: &str) -> i64 {
    let connection = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    connection
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })
        .unwrap()
}

/// A move killed (SIGKILL) after its first batches of memories, started again, goes on
/// where it stopped and leaves exactly one copy of every memory, vector, key and event; a
/// third run copies nothing.
#[test]
fn a_move_killed_mid_way_and_started_again_leaves_one_copy_of_everything() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let lines: String = (0..40)
        .map(|n| {
            format!(
                "{}\n",
                json!({"content": distinct_sentence(n), "project": "bulk"})
            )
        })
        .collect();
    let input = home.path().join("memories.jsonl");
    std::fs::write(&input, lines).unwrap();
    ok(at_now(home.path()).arg("import").arg(&input));
    let memories = count_sqlite(home.path(), "memories");
    assert_eq!(memories, 40);

    let mut child = at_now(home.path())
        .args(["migrate", "--from", "sqlite"])
        .arg(home.path())
        .args(["--to", database.url(), "--batch-size", "4"])
        .args(["--pause-between-batches-ms", "150"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once its second batch of memories is committed.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "the move never reached its memories"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the move ended before it was killed"
        );
        let moved = postgres::Client::connect(database.url(), postgres::NoTls)
            .ok()
            .and_then(|mut client| {
                client
                    .query_opt(
                        "SELECT 1 FROM pg_tables WHERE tablename = 'levh_moves_in'",
                        &[],
                    )
                    .ok()
                    .flatten()?;
                client.query_one("SELECT count(*) FROM memories", &[]).ok()
            })
            .map(|row| row.get::<_, i64>(0))
            .unwrap_or(0);
        if moved >= 8 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partly = count(database.url(), "memories");
    assert!(
        partly < memories,
        "killed too late to test a resume: {partly}"
    );

    let resumed = migrate(home.path(), database.url(), &["--batch-size", "4"]);
    assert_eq!(resumed["resumed"], true, "{resumed}");
    let memories_report = table(&resumed, "memories");
    assert_eq!(memories_report["read"], memories);
    assert_eq!(
        memories_report["copied"].as_i64().unwrap()
            + memories_report["already_there"].as_i64().unwrap(),
        memories,
        "{memories_report}"
    );
    assert_eq!(count(database.url(), "memories"), memories);
    assert_eq!(
        count(database.url(), "memory_embeddings"),
        count_sqlite(home.path(), "memory_embeddings")
    );
    assert_eq!(
        count(database.url(), "events"),
        count_sqlite(home.path(), "events")
    );
    let keys_sqlite: i64 = rusqlite::Connection::open(home.path().join("levh.db"))
        .unwrap()
        .query_row(
            "SELECT count(*) FROM (SELECT key, memory_seq FROM near_duplicate_keys
              UNION SELECT key, memory_seq FROM near_duplicate_keys_recent)",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(count(database.url(), "near_duplicate_keys"), keys_sqlite);

    let third = migrate(home.path(), database.url(), &[]);
    assert_eq!(third["resumed"], false, "{third}");
    for t in third["tables"].as_array().unwrap() {
        assert_eq!(t["copied"], 0, "{t}");
    }
    assert_eq!(
        count(database.url(), "events"),
        count_sqlite(home.path(), "events")
    );
}

/// A store written by a newer levh is refused naming its version, before anything is
/// written; a target that is not a PostgreSQL URL is refused naming the flag, and a
/// password in a URL is never shown.
#[test]
fn a_newer_store_and_a_url_that_is_not_postgres_are_refused() {
    let home = tempfile::tempdir().unwrap();
    ok(at_now(home.path()).args(["capture", "A fact worth moving to the team server"]));

    let refused = at_now(home.path())
        .args(["migrate", "--from", "sqlite"])
        .arg(home.path())
        .args(["--to", "mysql://ada:hunter2secret@db.example/levh"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--to is a mysql:// URL"), "{stderr}");
    assert!(!stderr.contains("hunter2secret"), "{stderr}");

    let newer = levh_store::latest_schema_version() + 1;
    rusqlite::Connection::open(home.path().join("levh.db"))
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let refused = at_now(home.path())
        .args(["migrate", "--from", "sqlite"])
        .arg(home.path())
        .args(["--to", "postgres://ada:hunter2secret@127.0.0.1:1/levh"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "schema version {newer}, newer than this levh knows"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2secret"), "{stderr}");
    assert!(
        stderr.contains("postgres://ada:***@127.0.0.1:1/levh"),
        "{stderr}"
    );
}

/// A database that cannot be reached is named (its password masked) with the reason.
#[test]
fn an_unreachable_database_is_named_without_its_password() {
    let home = tempfile::tempdir().unwrap();
    ok(at_now(home.path()).args(["capture", "A fact worth moving to the team server"]));
    let refused = at_now(home.path())
        .args(["migrate", "--from", "sqlite"])
        .arg(home.path())
        .args(["--to", "postgres://ada:hunter2secret@127.0.0.1:1/levh"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("postgres://ada:***@127.0.0.1:1/levh"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2secret"), "{stderr}");
}

/// A team's database that already holds memories keeps them: a personal memory whose id
/// the team's database holds with another text is refused, named, and not overwritten,
/// and nothing of it (its vector) is attached to the team's memory.
#[test]
fn a_team_memory_under_the_same_id_is_kept_and_the_collision_reported() {
    let Some(database) = levh_postgres::testing::database_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let colliding = memory_id(&capture(
        home.path(),
        "Our VPN endpoint is vpn.example.org",
        &[],
    ));
    let other = memory_id(&capture(
        home.path(),
        "Lunch orders go in the kitchen channel",
        &[],
    ));
    drop(levh_postgres::PostgresStore::open(database.url()).unwrap());
    let mut client = postgres::Client::connect(database.url(), postgres::NoTls).unwrap();
    let team_row = "INSERT INTO memories (id, workspace, content, source, importance,
            stability_hours, created_at, valid_from, content_hash, admission_verdict,
            admission_decided_by, updated_at)
        VALUES ($1, 'default', $2, 'team', 0.5, 168, 0, 0, $3, 'admit', 'gate', 0)";
    client
        .execute(
            team_row,
            &[
                &colliding,
                &"The team's own fact under that id",
                &"teamhash1",
            ],
        )
        .unwrap();
    let team_only = "01a22bae-0000-7000-8000-000000000001";
    client
        .execute(
            team_row,
            &[&team_only, &"A fact only the team knows", &"teamhash2"],
        )
        .unwrap();

    let report = migrate(home.path(), database.url(), &[]);
    let memories = table(&report, "memories");
    assert_eq!(
        (
            memories["read"].as_u64(),
            memories["copied"].as_u64(),
            memories["refused"].as_u64()
        ),
        (Some(2), Some(1), Some(1)),
        "{memories}"
    );
    assert_eq!(
        memories["refusals"][0]["row"].as_str(),
        Some(colliding.as_str()),
        "{memories}"
    );
    assert!(
        memories["refusals"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("different memory with this id"),
        "{memories}"
    );
    let vectors = table(&report, "memory_embeddings");
    assert_eq!(vectors["refused"], 1, "{vectors}");
    assert!(
        report["warnings"].to_string().contains("not moved"),
        "{report}"
    );
    let content: String = client
        .query_one("SELECT content FROM memories WHERE id = $1", &[&colliding])
        .unwrap()
        .get(0);
    assert_eq!(content, "The team's own fact under that id");
    let team_vectors: i64 = client
        .query_one(
            "SELECT count(*) FROM memory_embeddings e JOIN memories m ON m.seq = e.memory_seq
              WHERE m.id = $1",
            &[&colliding],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        team_vectors, 0,
        "no vector of the personal memory on the team's"
    );
    let kept: i64 = client
        .query_one(
            "SELECT count(*) FROM memories WHERE id = ANY($1)",
            &[&vec![team_only.to_owned(), other.clone()]],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        kept, 2,
        "the team's memory stays, the other personal one arrived"
    );

    // The human report names the refusal too.
    let human = ok(at_now(home.path())
        .args(["migrate", "--from", "sqlite"])
        .arg(home.path())
        .args(["--to", database.url()]));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains(&format!("refused from memories: {colliding}")),
        "{text}"
    );
}
