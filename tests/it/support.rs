//! Shared test scaffolding: an engine on a temporary database file with a clock the test
//! moves, and the path of the built `levh` binary.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use levh_core::{Clock, Config, Levh, MemoryId, NewMemory, Parts, Scope, Timestamp, Workspace};
use levh_embed::HashEmbedder;
use levh_store::SqliteStore;

/// A clock the test sets by hand.
#[derive(Debug)]
pub struct TestClock(Mutex<Timestamp>);

impl TestClock {
    pub fn advance_hours(&self, hours: f64) {
        let mut now = self.0.lock().unwrap();
        *now = now
            .checked_add(jiff::SignedDuration::from_secs_f64(hours * 3600.0))
            .unwrap();
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

/// The instant every test starts at.
pub fn start() -> Timestamp {
    "2026-01-05T09:00:00Z".parse().unwrap()
}

pub fn hours_after(at: Timestamp, hours: f64) -> Timestamp {
    at.checked_add(jiff::SignedDuration::from_secs_f64(hours * 3600.0))
        .unwrap()
}

/// An engine on a fresh database file.
pub struct Harness {
    pub levh: Levh,
    pub store: Arc<SqliteStore>,
    pub clock: Arc<TestClock>,
    pub scope: Scope,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).unwrap());
        let clock = Arc::new(TestClock(Mutex::new(start())));
        let levh = Levh::new(Parts {
            store: store.clone(),
            index: store.clone(),
            embedder: Arc::new(HashEmbedder::default()),
            clock: clock.clone(),
            config,
        });
        Self {
            levh,
            store,
            clock,
            scope: Scope::cli(Workspace::default()),
            _dir: dir,
        }
    }

    /// A second engine on the same database file and clock, with its own connections
    /// and caches: what another `levh` process writing the same file looks like.
    pub fn second_engine(&self) -> Levh {
        let store = Arc::new(SqliteStore::open(&self._dir.path().join("levh.db")).unwrap());
        Levh::new(Parts {
            store: store.clone(),
            index: store,
            embedder: Arc::new(HashEmbedder::default()),
            clock: self.clock.clone(),
            config: Config::default(),
        })
    }

    /// Captures a note with default settings and returns its id.
    pub fn capture(&self, content: &str) -> MemoryId {
        self.capture_with(NewMemory {
            content: content.into(),
            ..NewMemory::default()
        })
    }

    pub fn capture_with(&self, new: NewMemory) -> MemoryId {
        let content = new.content.clone();
        let outcome = self.levh.capture(&self.scope, new).unwrap();
        outcome
            .memory_id
            .unwrap_or_else(|| panic!("{content:?} was not stored: {outcome:?}"))
    }

    /// Rows of the event log of one kind.
    pub fn events(&self, kind: &str) -> Vec<String> {
        self.store.with_connection(|c| {
            let mut s = c
                .prepare("SELECT coalesce(memory_id, '') FROM events WHERE kind = ?1 ORDER BY seq")
                .unwrap();
            s.query_map([kind], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        })
    }
}

/// The `levh` binary cargo built for these tests.
pub fn levh_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_levh"))
}

/// With `LEVH_IT_BACKEND=postgres`, the database of a home: every `levh` a test starts
/// in that home (`serve`, `mcp stdio`, `capture`, …) gets `LEVH_DATABASE_URL` naming a
/// fresh database of its own on the throwaway PostgreSQL server, so the suites that
/// drive the real binary run unchanged on the team backend (`.ci/run` runs the REST and
/// MCP ones a second time so). `None` otherwise: the home's SQLite file.
pub fn home_database(home: &std::path::Path) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::LazyLock;
    static DATABASES: LazyLock<Mutex<HashMap<PathBuf, levh_postgres::testing::TestDatabase>>> =
        LazyLock::new(Mutex::default);
    if !on_postgres() {
        return None;
    }
    let mut databases = DATABASES.lock().unwrap_or_else(|p| p.into_inner());
    let database = databases.entry(home.to_path_buf()).or_insert_with(|| {
        // On a thread of its own: the synchronous client runs a runtime of its own, which
        // cannot start on a test's async thread (the MCP and feed tests call `levh` there).
        std::thread::spawn(levh_postgres::testing::database_url)
            .join()
            .unwrap()
            .expect("LEVH_IT_BACKEND=postgres needs PostgreSQL (scripts/fetch-postgres.sh)")
    });
    Some(database.url().to_owned())
}

/// Whether this run drives the binary on PostgreSQL (`LEVH_IT_BACKEND=postgres`).
pub fn on_postgres() -> bool {
    match std::env::var("LEVH_IT_BACKEND").as_deref() {
        Ok("postgres") => true,
        Ok("sqlite") | Ok("") | Err(_) => false,
        Ok(other) => panic!("LEVH_IT_BACKEND is sqlite or postgres, not {other:?}"),
    }
}

/// `levh` with a home of its own and a clean environment for levh's variables.
pub fn levh(home: &std::path::Path) -> Command {
    let mut command = Command::new(levh_binary());
    for (key, _) in std::env::vars() {
        if key.starts_with("LEVH_") {
            command.env_remove(key);
        }
    }
    if let Some(url) = home_database(home) {
        command.env("LEVH_DATABASE_URL", url);
    }
    command.env("LEVH_HOME", home);
    // Outside any git repository: inside one, `levh capture` takes the repository's name
    // as the project (this checkout's, or a CI clone's, would leak into every test).
    command.current_dir(if home.is_dir() {
        home.to_path_buf()
    } else {
        std::env::temp_dir()
    });
    command
}

/// `levh serve --port 0` in `home` with extra environment; the child and its address.
pub fn serve(home: &std::path::Path, env: &[(&str, &str)]) -> (std::process::Child, String) {
    let mut command = levh(home);
    for (key, value) in env {
        command.env(key, value);
    }
    command
        .args(["serve", "--port", "0"])
        .stderr(std::process::Stdio::piped());
    spawn_server(&mut command)
}

/// Starts a prepared `levh serve --port 0` command and reads the address it prints; the
/// child and its address.
pub fn spawn_server(command: &mut Command) -> (std::process::Child, String) {
    let mut server = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (server, address)
}

/// A two-thread runtime for tests that drive async clients (MCP, HTTP).
pub fn runtime() -> levh_mcp::tokio::runtime::Runtime {
    levh_mcp::tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs a command and returns its output, failing the test with stderr when it fails.
pub fn ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs a command and parses its stdout as JSON.
pub fn json(command: &mut Command) -> serde_json::Value {
    let output = ok(command);
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{command:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// A sentence unlike any other `n` gives: six words drawn from a list of 120, so the
/// gate never takes two of them for near-duplicates.
pub fn distinct_sentence(n: u64) -> String {
    const WORDS: &[&str] = &[
        "apple", "river", "quartz", "signal", "harbor", "cobalt", "meadow", "lantern", "pixel",
        "tundra", "violet", "gravel", "saddle", "orbit", "falcon", "marble", "ember", "canyon",
        "willow", "cipher", "anchor", "basil", "cactus", "dune", "echo", "fjord", "glacier",
        "hazel", "iris", "jasper", "kettle", "lotus", "maple", "nectar", "onyx", "pepper", "quill",
        "raven", "sierra", "thistle", "umber", "velvet", "walnut", "xenon", "yarrow", "zephyr",
        "acorn", "bramble", "cedar", "dahlia", "elm", "fennel", "garnet", "heron", "indigo",
        "juniper", "kelp", "lilac", "mango", "nutmeg", "olive", "plum", "quince", "rosemary",
        "sage", "tulip", "urchin", "vanilla", "wren", "yew", "amber", "birch", "coral", "dove",
        "flint", "ginger", "holly", "ivory", "jade", "kiwi", "lemon", "mint", "nickel", "opal",
        "pearl", "ruby", "slate", "topaz", "umbra", "vine", "wolf", "yak", "zinc", "arrow",
        "bison", "comet", "delta", "eagle", "frost", "grove", "hawk", "island", "jungle", "koala",
        "lynx", "moose", "nova", "otter", "panda", "quail", "robin", "shark", "tiger", "unicorn",
        "viper", "whale", "yeti", "zebra", "badger", "crane",
    ];
    let mut x = n
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut words = Vec::new();
    for _ in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(WORDS[(x % WORDS.len() as u64) as usize]);
    }
    format!("{} note {n}", words.join(" "))
}

/// Says on stderr that a test was skipped and why — or, where `LEVH_REQUIRE_TEST_ASSETS`
/// is set (CI sets it, after installing everything), fails it: a skip there means an
/// install step is missing, and a green run would hide it.
pub fn skip(why: &str) {
    if std::env::var_os("LEVH_REQUIRE_TEST_ASSETS").is_some() {
        panic!("LEVH_REQUIRE_TEST_ASSETS is set, but {why}");
    }
    eprintln!("skipped: {why}");
}

/// The repository root (for fixtures and the guests' target directories).
pub fn repository_root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `cargo build` run in `dir` as a plugin author would run it: without the settings the
/// outer `cargo test` exported to this process.
pub fn guest_cargo(dir: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(dir).arg("build").args(args);
    for (key, _) in std::env::vars() {
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            command.env_remove(key);
        }
    }
    command
}

/// The (source id, reason) of each item a sync report names with this `fate` (`skipped`,
/// `held`, `rejected`, `failed`), in the report's order.
pub fn not_stored_as<'r>(report: &'r serde_json::Value, fate: &str) -> Vec<(&'r str, &'r str)> {
    report["not_stored"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["fate"] == fate)
        .map(|i| {
            (
                i["source_id"].as_str().unwrap(),
                i["reason"].as_str().unwrap(),
            )
        })
        .collect()
}
