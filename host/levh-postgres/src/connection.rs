//! Opening the store: a pool of connections to one database, the migration on open, and
//! the transaction every change runs in.
//!
//! The driver is the synchronous `postgres` client: the store traits are synchronous and
//! the engine calls them from `tokio::task::spawn_blocking` threads. (It runs a small
//! runtime of its own per call, so it must never be called on an async worker thread.)

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use postgres::{NoTls, Transaction};
use r2d2_postgres::PostgresConnectionManager;

use crate::{PostgresStoreError, migrations};

/// A pooled connection.
pub(crate) type Connection = r2d2::PooledConnection<PostgresConnectionManager<NoTls>>;

/// How many times a transaction that lost to a concurrent one (deadlock, serialization
/// failure) is run again before its error is returned.
const RETRIES: usize = 4;

/// How the pool is sized and how long a caller waits for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// Connections kept open at most (the server's `max_connections` is shared by every
    /// levh process on the database).
    pub max_connections: u32,
    /// How long a call waits for a free connection before failing.
    pub connection_timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            connection_timeout: Duration::from_secs(30),
        }
    }
}

/// levh's store on a PostgreSQL database with pgvector: many `levh` processes on many
/// machines may open one database at once; every write is one transaction, and decisions
/// that must be taken once (held candidates, keyed memories) lock the rows they decide.
pub struct PostgresStore {
    pub(crate) pool: r2d2::Pool<PostgresConnectionManager<NoTls>>,
    /// The URL without its password: what `levh doctor` shows as the store's place.
    pub(crate) place: String,
    /// Dimensions whose HNSW index is known to exist (see `vectors.rs`).
    pub(crate) vector_indexes: Mutex<HashSet<i32>>,
    /// Rows written since the planner statistics were last looked at (`statistics.rs`).
    pub(crate) written_since_look: std::sync::atomic::AtomicU64,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("place", &self.place)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`
    /// or a `key=value` string), makes sure pgvector is there and applies pending
    /// migrations. Refuses a database migrated by a newer levh.
    pub fn open(url: &str) -> Result<Self, PostgresStoreError> {
        Self::open_with(url, PoolOptions::default())
    }

    /// [`PostgresStore::open`] with a chosen pool.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn open_with(url: &str, options: PoolOptions) -> Result<Self, PostgresStoreError> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e: postgres::Error| PostgresStoreError::Url(e.to_string()))?;
        let place = describe_place(&config);
        let mut config = config;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connection_timeout);
        }
        // The first connection is made directly: a server that is down, unreachable or
        // refuses us is reported at once, with the driver's reason, instead of after the
        // pool has retried for its whole timeout. It migrates, then goes.
        let mut first = config.connect(NoTls)?;
        migrations::apply(&mut first)?;
        drop(first);
        let manager = PostgresConnectionManager::new(config, NoTls);
        let pool = r2d2::Pool::builder()
            .connection_customizer(Box::new(PendingEvents))
            .max_size(options.max_connections.max(1))
            .min_idle(Some(0))
            .connection_timeout(options.connection_timeout)
            .build(manager)?;
        let store = Self {
            pool,
            place,
            vector_indexes: Mutex::new(HashSet::new()),
            written_since_look: std::sync::atomic::AtomicU64::new(0),
        };
        store.load_vector_indexes()?;
        Ok(store)
    }

    /// A connection from the pool.
    pub(crate) fn connection(&self) -> Result<Connection, PostgresStoreError> {
        Ok(self.pool.get()?)
    }

    /// Runs `work` in one transaction, appends the events it logged, and commits it. (Every
    /// event is logged through here: see `events.rs`.) A transaction that lost a deadlock
    /// or a serialization conflict to a concurrent one is run again from the start (so
    /// `work` must have no effect outside the transaction).
    pub(crate) fn write<T>(
        &self,
        mut work: impl FnMut(&mut Transaction<'_>) -> Result<T, PostgresStoreError>,
    ) -> Result<T, PostgresStoreError> {
        let mut connection = self.connection()?;
        let mut attempt = 0;
        loop {
            let mut tx = connection.transaction()?;
            let outcome = work(&mut tx).and_then(|value| {
                crate::events::flush(&mut tx)?;
                tx.commit()?;
                Ok(value)
            });
            match outcome {
                Err(error) if error.is_retryable() && attempt < RETRIES => {
                    attempt += 1;
                    tracing::debug!(attempt, %error, "a transaction lost to a concurrent one; running it again");
                }
                outcome => return outcome,
            }
        }
    }
}

/// Gives each new connection the table its transactions' events wait in until they
/// commit (see `events.rs`).
#[derive(Debug)]
struct PendingEvents;

impl r2d2::CustomizeConnection<postgres::Client, postgres::Error> for PendingEvents {
    fn on_acquire(&self, client: &mut postgres::Client) -> Result<(), postgres::Error> {
        client.batch_execute(crate::events::PENDING_TABLE)
    }
}

/// `user@host:port/database`, never the password.
fn describe_place(config: &postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|host| match host {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".to_owned());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}
