//! A fresh engine on a temporary store, with a clock the harness moves: a SQLite file in
//! a temporary directory, or — to measure the team server's ranking beside it
//! ([`measure_on_postgres`]) — a throwaway database on a PostgreSQL server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::{Context as _, Result};
use levh_core::{
    Clock, Config, Embedder, Levh, Parts, Scope, Store, Timestamp, VectorIndex, Workspace,
};
use levh_postgres::PostgresStore;
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

/// The PostgreSQL server every sandbox of this process is made on, when one was chosen:
/// a setting of the whole run (`levh benchmark --postgres URL`), not of each harness,
/// which all make their sandboxes the same way.
static POSTGRES: OnceLock<String> = OnceLock::new();

/// Makes every sandbox of this process a throwaway database on the PostgreSQL server at
/// `url` (whose role may create databases) instead of a SQLite file. Checked at once:
/// an unreachable server or a role that may not create databases is an error here, not
/// in the middle of a run. Once per process.
pub fn measure_on_postgres(url: &str) -> Result<()> {
    let probe = ThrowawayDatabase::create(url)?;
    drop(probe);
    POSTGRES
        .set(url.to_owned())
        .map_err(|_| anyhow::anyhow!("the sandboxes' PostgreSQL server is chosen once"))
}

/// A database created for one sandbox and dropped with it.
#[derive(Debug)]
struct ThrowawayDatabase {
    server: postgres::Config,
    name: String,
    url: String,
}

impl ThrowawayDatabase {
    fn create(server_url: &str) -> Result<Self> {
        static CREATED: AtomicUsize = AtomicUsize::new(0);
        let server: postgres::Config = server_url
            .parse()
            .context("reading the PostgreSQL URL of the sandboxes")?;
        let name = format!(
            "levh_eval_{}_{}",
            std::process::id(),
            CREATED.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = server
            .connect(postgres::NoTls)
            .context("connecting to the sandboxes' PostgreSQL server")?;
        // Our own name, of letters, digits and underscores (CREATE DATABASE takes no
        // parameters).
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .with_context(|| {
                format!("creating the throwaway database {name} (the role needs CREATEDB)")
            })?;
        let url = if server_url.contains("://") {
            let mut url = url::Url::parse(server_url).context("reading the PostgreSQL URL")?;
            url.set_path(&name);
            url.to_string()
        } else {
            // A `key=value` string: a later key wins.
            format!("{server_url} dbname={name}")
        };
        Ok(Self { server, name, url })
    }
}

impl Drop for ThrowawayDatabase {
    fn drop(&mut self) {
        let dropped = self.server.connect(postgres::NoTls).and_then(|mut admin| {
            admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
        });
        if let Err(error) = dropped {
            eprintln!(
                "warning: could not drop the throwaway database {}: {error}",
                self.name
            );
        }
    }
}

/// What a sandbox's store lives in, dropped after the engine.
#[derive(Debug)]
enum Place {
    Directory(#[allow(dead_code, reason = "held until the sandbox is dropped")] tempfile::TempDir),
    Database(
        #[allow(dead_code, reason = "held until the sandbox is dropped")] Box<ThrowawayDatabase>,
    ),
}

/// Where every sandbox's clock starts: fixed, so two runs of a harness see the same times.
const START: &str = "2026-01-05T09:00:00Z";

/// An engine over a real SQLite file (WAL) in a temporary directory, deleted on drop —
/// or over a throwaway PostgreSQL database ([`measure_on_postgres`]).
#[derive(Debug)]
pub struct Sandbox {
    /// The engine.
    pub levh: Levh,
    parts: (Arc<dyn Store>, Arc<dyn VectorIndex>, Arc<dyn Embedder>),
    /// The one workspace harnesses write to.
    pub scope: Scope,
    clock: Arc<SteppedClock>,
    // Dropped last: the store lives here.
    _place: Place,
}

impl Sandbox {
    /// A new empty store with `embedder` and `config`.
    pub fn new(embedder: Arc<dyn Embedder>, config: Config) -> Result<Self> {
        let (store, index, place): (Arc<dyn Store>, Arc<dyn VectorIndex>, Place) =
            match POSTGRES.get() {
                Some(server) => {
                    let database = ThrowawayDatabase::create(server)?;
                    let store = Arc::new(
                        PostgresStore::open(&database.url)
                            .with_context(|| format!("opening {}", database.name))?,
                    );
                    (store.clone(), store, Place::Database(Box::new(database)))
                }
                None => {
                    let dir = tempfile::Builder::new()
                        .prefix("levh-eval-")
                        .tempdir()
                        .context("creating a temporary directory for the evaluation store")?;
                    let path = dir.path().join("levh.db");
                    let store = Arc::new(
                        SqliteStore::open(&path)
                            .with_context(|| format!("opening {}", path.display()))?,
                    );
                    // No cache directory: a sandbox is thrown away, so is any index snapshot.
                    let index = Arc::new(AnnIndex::new(store.clone(), None, AnnConfig::default()));
                    (store, index, Place::Directory(dir))
                }
            };
        let start: Timestamp = START.parse().context("parsing the sandbox start time")?;
        let clock = Arc::new(SteppedClock(Mutex::new(start)));
        let levh = Levh::new(Parts {
            store: store.clone(),
            index: index.clone(),
            embedder: embedder.clone(),
            clock: clock.clone(),
            config,
        });
        let mut scope = Scope::cli(Workspace::new("eval")?);
        scope.actor.principal = Some("levh-eval".to_owned());
        Ok(Self {
            levh,
            parts: (store, index, embedder),
            scope,
            clock,
            _place: place,
        })
    }

    /// Another engine over the same store, clock and embedder with `config`: what was
    /// stored once is ranked again with other settings (a sweep of a fusion weight).
    pub fn engine_with(&self, config: Config) -> Levh {
        let (store, index, embedder) = self.parts.clone();
        Levh::new(Parts {
            store,
            index,
            embedder,
            clock: self.clock.clone(),
            config,
        })
    }

    /// The sandbox's `now`.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Moves the clock forward by `hours`.
    pub fn advance_hours(&self, hours: f64) -> Result<()> {
        let millis = (hours * 3_600_000.0).round() as i64;
        let span = jiff::Span::new()
            .try_milliseconds(millis)
            .with_context(|| format!("{hours} hours is too far to move the clock"))?;
        let mut now = self.clock.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now
            .checked_add(span)
            .with_context(|| format!("moving the clock {hours} hours past {now}"))?;
        Ok(())
    }
}

/// A clock that stands still until the harness moves it.
#[derive(Debug)]
struct SteppedClock(Mutex<Timestamp>);

impl Clock for SteppedClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
