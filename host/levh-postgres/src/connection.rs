//! Opening the store: a pool of connections to one database, the migration on open, and
//! the transaction every change runs in.
//!
//! The driver is the synchronous `postgres` client: the store traits are synchronous and
//! the engine calls them from `tokio::task::spawn_blocking` threads. (It runs a small
//! runtime of its own per call, so it must never be called on an async worker thread.)
//!
//! Round trips, not the server's work, bound a store whose gate reads a dozen small rows
//! per memory (measured: 20 ms a memory on loopback, of which the server worked 5). So
//! each pooled connection keeps the statements it prepared ([`Statements`]): a statement
//! run again is one round trip (bind and execute) instead of two (parse, then bind and
//! execute); and a connection that answered a moment ago is handed out without the
//! pool's `SELECT`-nothing check ([`Manager::is_valid`]).

use std::borrow::BorrowMut;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{GenericClient, NoTls, Row, Statement};
use r2d2_postgres::PostgresConnectionManager;

use crate::{PostgresStoreError, migrations};

/// A pooled connection.
pub(crate) type Connection = r2d2::PooledConnection<Manager>;

/// Statements kept prepared per connection at most: the store's own SQL is a few
/// hundred texts (filters are written into some), so the cap only bounds a surprise.
const STATEMENTS_KEPT: usize = 512;

/// A connection that answered within this long is handed out without a check: a server
/// gone since then fails the caller's statement instead, and the pool drops the
/// connection (`has_broken`).
const FRESH_FOR: Duration = Duration::from_secs(2);

/// One pooled connection and what it keeps between uses.
pub(crate) struct Client {
    client: postgres::Client,
    statements: Statements,
    /// The session's `hnsw.ef_search`, once set (see [`Client::search_breadth`]).
    ef_search: Option<usize>,
}

/// The statements a connection has prepared, by their SQL, and when it last answered.
pub(crate) struct Statements {
    prepared: HashMap<String, Statement>,
    answered_at: Instant,
}

impl Statements {
    fn new() -> Self {
        Self {
            prepared: HashMap::new(),
            answered_at: Instant::now(),
        }
    }

    /// The prepared statement of `sql`, preparing it with `prepare` the first time.
    fn get(
        &mut self,
        sql: &str,
        prepare: impl FnOnce(&str) -> Result<Statement, postgres::Error>,
    ) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = prepare(sql)?;
        if self.prepared.len() >= STATEMENTS_KEPT {
            // Dropping a statement closes it on the server.
            self.prepared.clear();
        }
        self.prepared.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Notes how running `sql` went: an answer keeps the connection fresh; an error
    /// forgets the statement (a table changed under it by a newer levh's migration,
    /// say), so the next run prepares it again.
    fn ran<T>(
        &mut self,
        sql: &str,
        outcome: Result<T, postgres::Error>,
    ) -> Result<T, postgres::Error> {
        match &outcome {
            Ok(_) => self.answered_at = Instant::now(),
            Err(_) => {
                self.prepared.remove(sql);
            }
        }
        outcome
    }
}

/// A statement's parameters.
pub(crate) type Params<'a> = [&'a (dyn ToSql + Sync)];

/// Running SQL on a connection or in a transaction, through the connection's prepared
/// statements. (The driver's `GenericClient` cannot be implemented outside it.)
pub(crate) trait Db {
    /// The rows `sql` returns.
    fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, postgres::Error>;
    /// The one row `sql` returns (an error for none or several).
    fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, postgres::Error>;
    /// The row `sql` returns, if any (an error for several).
    fn query_opt(&mut self, sql: &str, params: &Params<'_>)
    -> Result<Option<Row>, postgres::Error>;
    /// How many rows `sql` changed.
    fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, postgres::Error>;
    /// Statements without parameters, sent as one text (never prepared).
    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error>;
}

/// Runs `sql` on `client` as the prepared statement `statements` keep for it.
fn prepared<C: GenericClient, T>(
    client: &mut C,
    statements: &mut Statements,
    sql: &str,
    run: impl FnOnce(&mut C, &Statement) -> Result<T, postgres::Error>,
) -> Result<T, postgres::Error> {
    let statement = statements.get(sql, |sql| client.prepare(sql))?;
    let outcome = run(client, &statement);
    statements.ran(sql, outcome)
}

/// [`Db`] for a type holding a driver client (`$client`) and its [`Statements`].
macro_rules! db_through_statements {
    ($type:ty, $client:ident) => {
        impl Db for $type {
            fn query(
                &mut self,
                sql: &str,
                params: &Params<'_>,
            ) -> Result<Vec<Row>, postgres::Error> {
                prepared(
                    &mut self.$client,
                    BorrowMut::<Statements>::borrow_mut(&mut self.statements),
                    sql,
                    |c, s| c.query(s, params),
                )
            }
            fn query_one(
                &mut self,
                sql: &str,
                params: &Params<'_>,
            ) -> Result<Row, postgres::Error> {
                prepared(
                    &mut self.$client,
                    BorrowMut::<Statements>::borrow_mut(&mut self.statements),
                    sql,
                    |c, s| c.query_one(s, params),
                )
            }
            fn query_opt(
                &mut self,
                sql: &str,
                params: &Params<'_>,
            ) -> Result<Option<Row>, postgres::Error> {
                prepared(
                    &mut self.$client,
                    BorrowMut::<Statements>::borrow_mut(&mut self.statements),
                    sql,
                    |c, s| c.query_opt(s, params),
                )
            }
            fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, postgres::Error> {
                prepared(
                    &mut self.$client,
                    BorrowMut::<Statements>::borrow_mut(&mut self.statements),
                    sql,
                    |c, s| c.execute(s, params),
                )
            }
            fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
                let outcome = self.$client.batch_execute(sql);
                self.statements.ran(sql, outcome)
            }
        }
    };
}

db_through_statements!(Client, client);

/// The driver's own client, unpooled (the first connection, which migrates): nothing
/// kept between statements.
impl Db for postgres::Client {
    fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, postgres::Error> {
        postgres::Client::query(self, sql, params)
    }
    fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, postgres::Error> {
        postgres::Client::query_one(self, sql, params)
    }
    fn query_opt(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        postgres::Client::query_opt(self, sql, params)
    }
    fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, postgres::Error> {
        postgres::Client::execute(self, sql, params)
    }
    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        postgres::Client::batch_execute(self, sql)
    }
}
db_through_statements!(Tx<'_>, tx);

impl Client {
    /// Makes the session's vector searches look at least `breadth` candidates deep
    /// (`hnsw.ef_search`), sending the setting only when it changes: a setting of the
    /// session, not of a transaction, so that a search is one statement (with `SET
    /// LOCAL` it was five round trips).
    pub(crate) fn search_breadth(&mut self, breadth: usize) -> Result<(), postgres::Error> {
        if self.ef_search != Some(breadth) {
            // An integer of ours, written into the statement (SET takes no parameters).
            self.client
                .batch_execute(&format!("SET hnsw.ef_search = {breadth}"))?;
            self.ef_search = Some(breadth);
        }
        Ok(())
    }

    /// Starts a transaction; it rolls back unless committed.
    pub(crate) fn transaction(&mut self) -> Result<Tx<'_>, postgres::Error> {
        Ok(Tx {
            tx: self.client.transaction()?,
            statements: &mut self.statements,
        })
    }
}

/// A transaction on a pooled connection, running SQL through the connection's prepared
/// statements.
pub(crate) struct Tx<'a> {
    tx: postgres::Transaction<'a>,
    statements: &'a mut Statements,
}

impl Tx<'_> {
    /// Commits the transaction.
    pub(crate) fn commit(self) -> Result<(), postgres::Error> {
        self.tx.commit()
    }
}

/// Makes the pool's connections [`Client`]s: the driver's connection manager, with a
/// check on checkout only for connections that have not answered lately.
#[derive(Debug)]
pub(crate) struct Manager(PostgresConnectionManager<NoTls>);

impl r2d2::ManageConnection for Manager {
    type Connection = Client;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Client, postgres::Error> {
        Ok(Client {
            client: self.0.connect()?,
            statements: Statements::new(),
            ef_search: None,
        })
    }

    fn is_valid(&self, connection: &mut Client) -> Result<(), postgres::Error> {
        if connection.statements.answered_at.elapsed() < FRESH_FOR {
            return Ok(());
        }
        connection.client.simple_query("")?;
        connection.statements.answered_at = Instant::now();
        Ok(())
    }

    fn has_broken(&self, connection: &mut Client) -> bool {
        connection.client.is_closed()
    }
}

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
    pub(crate) pool: r2d2::Pool<Manager>,
    /// How to connect, for a connection of its own outside the pool (the feed's
    /// `LISTEN`, see `events.rs`).
    pub(crate) config: postgres::Config,
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
        let manager = Manager(PostgresConnectionManager::new(config.clone(), NoTls));
        let pool = r2d2::Pool::builder()
            .connection_customizer(Box::new(PendingEvents))
            .max_size(options.max_connections.max(1))
            .min_idle(Some(0))
            .connection_timeout(options.connection_timeout)
            .build(manager)?;
        let store = Self {
            pool,
            config,
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
        mut work: impl FnMut(&mut Tx<'_>) -> Result<T, PostgresStoreError>,
    ) -> Result<T, PostgresStoreError> {
        let mut connection = self.connection()?;
        let mut attempt = 0;
        let mut reconnected = false;
        loop {
            match Self::attempt(&mut connection, &mut work) {
                // The pool handed out a connection the server has closed since it last
                // answered (a restart, a failover; see `FRESH_FOR`): nothing was sent, so
                // the work starts again on a new one. (Once: a server that is down fails.)
                Err(Attempt::ClosedBeforeBegin(error)) if !reconnected => {
                    tracing::debug!(%error, "a pooled connection was closed; taking another");
                    reconnected = true;
                    connection = self.connection()?;
                }
                Err(Attempt::ClosedBeforeBegin(error)) => return Err(error.into()),
                Err(Attempt::Failed(error)) if error.is_retryable() && attempt < RETRIES => {
                    attempt += 1;
                    tracing::debug!(attempt, %error, "a transaction lost to a concurrent one; running it again");
                }
                Err(Attempt::Failed(error)) => return Err(error),
                Ok(value) => return Ok(value),
            }
        }
    }

    /// One run of [`PostgresStore::write`]'s work in a transaction of `connection`.
    fn attempt<T>(
        connection: &mut Connection,
        work: &mut impl FnMut(&mut Tx<'_>) -> Result<T, PostgresStoreError>,
    ) -> Result<T, Attempt> {
        let mut tx = connection.transaction().map_err(|error| {
            if session_ended(&error) {
                Attempt::ClosedBeforeBegin(error)
            } else {
                Attempt::Failed(error.into())
            }
        })?;
        work(&mut tx)
            .and_then(|value| {
                crate::events::flush(&mut tx)?;
                tx.commit()?;
                Ok(value)
            })
            .map_err(Attempt::Failed)
    }
}

/// Whether `error` says the connection's session is over: closed, or ended by the server
/// (a shutdown, `pg_terminate_backend`), whose farewell the driver reads on its next use.
fn session_ended(error: &postgres::Error) -> bool {
    error.is_closed()
        || error.as_db_error().is_some_and(|db| {
            matches!(
                db.parsed_severity(),
                Some(postgres::error::Severity::Fatal | postgres::error::Severity::Panic)
            )
        })
}

/// How one run of a write's transaction failed.
enum Attempt {
    /// Its connection was closed before the transaction began: nothing was sent.
    ClosedBeforeBegin(postgres::Error),
    /// The transaction failed (and rolled back, or its commit failed).
    Failed(PostgresStoreError),
}

/// Gives each new connection the table its transactions' events wait in until they
/// commit (see `events.rs`), and its vector searches their filter rule: keep reading the
/// index until the filter passed as many rows as asked for, in exact order (`vectors.rs`).
#[derive(Debug)]
struct PendingEvents;

impl r2d2::CustomizeConnection<Client, postgres::Error> for PendingEvents {
    fn on_acquire(&self, client: &mut Client) -> Result<(), postgres::Error> {
        client.client.batch_execute(crate::events::PENDING_TABLE)?;
        client
            .client
            .batch_execute("SET hnsw.iterative_scan = strict_order")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The statement a connection runs again is the one it prepared the first time: the
    /// server lists it once among the session's prepared statements.
    #[test]
    fn a_statement_run_again_is_not_prepared_again() {
        let Some(store) = crate::testing::store() else {
            return;
        };
        let mut connection = store.connection().unwrap();
        let sql = "SELECT count(*) FROM memories WHERE workspace = $1";
        for _ in 0..3 {
            connection.query_one(sql, &[&"default"]).unwrap();
        }
        let mut tx = connection.transaction().unwrap();
        tx.query_one(sql, &[&"other"]).unwrap();
        tx.commit().unwrap();
        let prepared: i64 = connection
            .query_one(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1",
                &[&sql],
            )
            .unwrap()
            .get(0);
        assert_eq!(prepared, 1, "{sql} was prepared {prepared} times");
    }

    /// A statement that failed is prepared again next time: the table it read may have
    /// changed under it.
    #[test]
    fn a_statement_that_failed_is_prepared_again() {
        let Some(store) = crate::testing::store() else {
            return;
        };
        let mut connection = store.connection().unwrap();
        connection
            .batch_execute("CREATE TABLE probe (a int); INSERT INTO probe VALUES (1)")
            .unwrap();
        let sql = "SELECT * FROM probe";
        assert_eq!(connection.query(sql, &[]).unwrap().len(), 1);
        // A cached plan whose result type changed fails once...
        connection
            .batch_execute("ALTER TABLE probe ADD COLUMN b int")
            .unwrap();
        let first = connection.query(sql, &[]);
        // ...and the next run prepares it again and reads the new columns.
        let rows = connection.query(sql, &[]).unwrap();
        assert_eq!(rows[0].len(), 2, "first run: {first:?}");
    }

    /// A write on a pooled connection the server closed since (a restart, an
    /// administrator's `pg_terminate_backend`) runs on a new one instead of failing.
    #[test]
    fn a_write_on_a_connection_the_server_closed_runs_on_a_new_one() {
        let Some(store) = crate::testing::store() else {
            return;
        };
        let pid: i32 = store
            .connection()
            .unwrap()
            .query_one("SELECT pg_backend_pid()", &[])
            .unwrap()
            .get(0);
        let mut admin = postgres::Client::connect(store.url_for_tests(), NoTls).unwrap();
        admin
            .execute("SELECT pg_terminate_backend($1)", &[&pid])
            .unwrap();
        // Terminating only signals the backend: wait until it is gone, so the store's
        // next statement meets a closed session rather than one still ending.
        while admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                &[&pid],
            )
            .unwrap()
            .get::<_, i64>(0)
            > 0
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        // The pool's only connection is the closed one, and it answered a moment ago.
        let written = store.write(|tx| {
            Ok(tx
                .query_one("SELECT pg_backend_pid()", &[])?
                .get::<_, i32>(0))
        });
        let new_pid = written.unwrap();
        assert_ne!(new_pid, pid);
    }
}
