//! A fresh engine on a temporary store, with a clock the harness moves.

use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, Result};
use levh_core::{Clock, Config, Embedder, Levh, Parts, Scope, Timestamp, Workspace};
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

/// Where every sandbox's clock starts: fixed, so two runs of a harness see the same times.
const START: &str = "2026-01-05T09:00:00Z";

/// An engine over a real SQLite file (WAL) in a temporary directory, deleted on drop.
#[derive(Debug)]
pub struct Sandbox {
    /// The engine.
    pub levh: Levh,
    parts: (Arc<SqliteStore>, Arc<AnnIndex>, Arc<dyn Embedder>),
    /// The one workspace harnesses write to.
    pub scope: Scope,
    clock: Arc<SteppedClock>,
    // Dropped last: the store's file lives here.
    _dir: tempfile::TempDir,
}

impl Sandbox {
    /// A new empty store with `embedder` and `config`.
    pub fn new(embedder: Arc<dyn Embedder>, config: Config) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("levh-eval-")
            .tempdir()
            .context("creating a temporary directory for the evaluation store")?;
        let path = dir.path().join("levh.db");
        let store = Arc::new(
            SqliteStore::open(&path).with_context(|| format!("opening {}", path.display()))?,
        );
        // No cache directory: a sandbox is thrown away, so is any index snapshot.
        let index = Arc::new(AnnIndex::new(store.clone(), None, AnnConfig::default()));
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
            _dir: dir,
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
