//! levh-migrate: `levh migrate --from sqlite PATH --to postgres://…` — moves a person's
//! SQLite store into a team's PostgreSQL database.
//!
//! A crate of its own rather than a module of `levh-postgres`: it is the one place that
//! reads SQLite *and* writes PostgreSQL, and keeping it apart keeps rusqlite out of the
//! team server's store (which every `levh serve` links) and the PostgreSQL store's
//! internals out of reach of anything but its public API. It depends on `levh-store` only
//! for the schema version the SQLite store of this build writes.
//!
//! How a move goes (see [`move_in`]):
//! - the source is opened read-only and read in one transaction (one consistent snapshot,
//!   whatever other levh processes write meanwhile); a schema other than this build's is
//!   refused, naming both versions;
//! - the target is opened through [`levh_postgres::PostgresStore`], which applies its
//!   migrations under an advisory lock; a move then holds an advisory lock of its own, so
//!   two moves into one database never interleave;
//! - tables are copied in order ([`steps::STEPS`]), a batch per transaction, with
//!   `ON CONFLICT DO NOTHING`: a row already there stays as it is, and a different row
//!   under the same id (a team's memory) is reported, never overwritten;
//! - after each batch, in the same transaction, the step's cursor is written to
//!   `levh_moves_in` in the target: a move killed at any point and started again goes on
//!   from the last committed batch and skips finished tables.
//!
//! Nothing goes through the admission gate: these memories were admitted once already,
//! by the person's own levh; the move copies them as they are (ids, states, vectors).

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod source;
mod steps;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Client, NoTls, Transaction};
use rusqlite::types::Value;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::source::Source;
use crate::steps::{Kind, STEPS, Step};

/// What to move, and how.
#[derive(Debug, Clone)]
pub struct MoveRequest {
    /// The personal store: its `levh.db`, or the home directory that holds it.
    pub source: PathBuf,
    /// The team database's connection URL (password included: only for connecting).
    pub target_url: String,
    /// Rows per transaction.
    pub batch_size: usize,
    /// A pause after each batch (for tests that interrupt a move mid-way).
    pub pause_between_batches: Duration,
}

impl MoveRequest {
    /// The default batch: large enough that a round trip per batch costs little, small
    /// enough that a transaction of vectors stays a few megabytes.
    pub const DEFAULT_BATCH_SIZE: usize = 1000;
}

/// What can go wrong moving a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MoveError {
    /// The source file is missing or is not a store this build reads.
    #[error("{0}")]
    Source(String),
    /// Reading the source failed.
    #[error("reading {path}: {error}")]
    Sqlite {
        /// The source file.
        path: PathBuf,
        /// What SQLite said.
        error: rusqlite::Error,
    },
    /// The target could not be opened or migrated.
    #[error(transparent)]
    Open(#[from] levh_postgres::PostgresStoreError),
    /// Writing the target failed.
    #[error("writing {step} into the database: {message}")]
    Target {
        /// The step that failed.
        step: String,
        /// The server's message.
        message: String,
    },
    /// Another move into the same database is running.
    #[error(
        "another levh migrate is moving a store into this database right now; wait for it to finish"
    )]
    Busy,
}

/// Told how the move goes, to draw a progress bar.
pub trait Progress {
    /// A step begins: `rows` to read in all, `done` of them by an earlier run.
    fn step(&self, name: &str, rows: u64, done: u64);
    /// `rows` more were read and written.
    fn advance(&self, rows: u64);
    /// The step is over.
    fn finish(&self);
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn step(&self, _: &str, _: u64, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What a move did.
#[derive(Debug, Clone, Serialize)]
pub struct MoveReport {
    /// The source file.
    pub source: PathBuf,
    /// Its schema version.
    pub source_schema_version: i64,
    /// The target's schema version (after its migrations).
    pub target_schema_version: i64,
    /// Whether this run went on from an interrupted one.
    pub resumed: bool,
    /// One entry per table moved, in order.
    pub tables: Vec<TableReport>,
    /// The SQLite tables not moved, each with why.
    pub not_moved: Vec<NotMoved>,
    /// The vectors moved, by embedding model.
    pub vectors: Vec<ModelVectors>,
    /// Vectors the database already held, by model (another embedder's are a warning).
    pub database_vectors: Vec<ModelVectors>,
    /// What the person should know (an embedder mismatch, refused rows, …).
    pub warnings: Vec<String>,
    /// How long building the vector index of a new dimension took, after the copy (0
    /// when the database had it already).
    pub vector_index_seconds: f64,
    /// How long the move took.
    pub elapsed_seconds: f64,
}

impl MoveReport {
    /// Rows refused, over every table.
    pub fn refused(&self) -> u64 {
        self.tables.iter().map(|t| t.refused).sum()
    }

    /// Rows copied by this run, over every table.
    pub fn copied(&self) -> u64 {
        self.tables.iter().map(|t| t.copied).sum()
    }
}

/// One table's share of a move.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// The SQLite table (`memories.superseded_by`: the links between memories).
    pub table: String,
    /// Rows in the source.
    pub read: u64,
    /// Rows this run wrote.
    pub copied: u64,
    /// Rows the database held already (copied by an earlier run, or the same row).
    pub already_there: u64,
    /// Rows not written, each for a reason (the first few in `refusals`).
    pub refused: u64,
    /// The first refused rows, named, with why.
    pub refusals: Vec<Refusal>,
    /// Whether an earlier, interrupted run had finished this table.
    pub finished_earlier: bool,
    /// How long this run spent on it.
    pub elapsed_seconds: f64,
}

/// A row that was not moved.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    /// What names it (a memory id, a key, …).
    pub row: String,
    /// Why it was not moved.
    pub reason: String,
}

/// A table of the source that is not moved.
#[derive(Debug, Clone, Serialize)]
pub struct NotMoved {
    /// The SQLite table.
    pub table: String,
    /// Why it stays behind.
    pub reason: String,
}

/// Vectors of one embedding model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelVectors {
    /// The model id recorded with each vector, e.g. `hash-v1-256`.
    pub model: String,
    /// Their dimension.
    pub dimension: i64,
    /// How many.
    pub vectors: u64,
}

/// Attachments per transaction at most (each carries its file).
const ATTACHMENTS_PER_BATCH: usize = 16;

/// How many refused rows a table's report names.
const NAMED_REFUSALS: usize = 5;

/// The advisory lock a move holds for its whole run ("levh" in ASCII, then "movein").
const MOVE_LOCK: i64 = 0x6c65_7668_6d76_696e;

/// Where the target records how far each move went: one row per source store and step.
/// Created by the first move rather than by a numbered migration: it is the move's
/// bookkeeping, not part of the store, and a database nobody moved into never has it.
const PROGRESS_TABLE: &str = "CREATE TABLE IF NOT EXISTS levh_moves_in (
    source     text NOT NULL,      -- the personal store's fingerprint (see source.rs)
    step       text NOT NULL,      -- a table of the personal store
    cursor     jsonb,              -- the key of the last row copied, in this pass
    finished   boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, step)
)";

/// Moves the store at `request.source` into the database at `request.target_url`.
pub fn move_in(request: &MoveRequest, progress: &dyn Progress) -> Result<MoveReport, MoveError> {
    let started = Instant::now();
    let source = Source::open(&request.source)?;
    let store = levh_postgres::PostgresStore::open(&request.target_url)?;
    let mut client = connect(&request.target_url)?;
    let target_error = |step: &str| {
        let step = step.to_owned();
        move |error: postgres::Error| MoveError::Target {
            step: step.clone(),
            message: describe(&error),
        }
    };
    let locked: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&MOVE_LOCK])
        .map_err(target_error("the move's lock"))?
        .get(0);
    if !locked {
        return Err(MoveError::Busy);
    }
    client
        .batch_execute(PROGRESS_TABLE)
        .map_err(target_error("levh_moves_in"))?;
    let target_schema_version: i64 = client
        .query_one(
            "SELECT coalesce(max(version), 0)::bigint FROM levh_schema_migrations",
            &[],
        )
        .map_err(target_error("levh_schema_migrations"))?
        .get(0);
    let database_vectors = vectors_in_target(&mut client).map_err(target_error("vectors"))?;
    let resumed =
        begin_pass(&mut client, &source.fingerprint).map_err(target_error("levh_moves_in"))?;

    let mut tables = Vec::new();
    for step in STEPS {
        tables.push(run_step(&source, &mut client, step, request, progress)?);
    }

    let vectors = source.vectors()?;
    // The HNSW index of each dimension moved, built once over all of them rather than
    // row by row as they arrived (the store creates it the same way on a first write).
    let indexing = Instant::now();
    let indexed: u64 = vectors.iter().map(|v| v.vectors).sum();
    progress.step("vector index (HNSW)", indexed, 0);
    store.ensure_vector_indexes(vectors.iter().map(|v| v.dimension as usize))?;
    // The planner's statistics of the tables just filled: without them the team server's
    // searches plan as if they were empty until autovacuum comes by (see levh-postgres's
    // `statistics.rs`).
    store.analyze_stale_tables()?;
    progress.advance(indexed);
    progress.finish();
    let vector_index_seconds = indexing.elapsed().as_secs_f64();

    let mut warnings = Vec::new();
    for theirs in &database_vectors {
        if !vectors.iter().any(|ours| ours.model == theirs.model) {
            warnings.push(format!(
                "the database already holds {} vectors of {} ({} dimensions): its embedder differs \
                 from this store's; recall compares like with like, so run `levh reembed` on the \
                 team server to give every memory a vector of the one it uses",
                theirs.vectors, theirs.model, theirs.dimension
            ));
        }
    }
    // A personal token opens the team server too once it is there, with its role, in the
    // workspace it names — which may be one the team shares.
    if let Some(tokens) = tables.iter().find(|t| t.table == "tokens" && t.copied > 0) {
        warnings.push(format!(
            "{} API tokens moved: each now opens this database's workspace it names, with its \
             role, through any levh serve on it; `levh token list` and `levh token revoke` on \
             the team server remove those not meant for it",
            tokens.copied
        ));
    }
    let refused: u64 = tables.iter().map(|t| t.refused).sum();
    if refused > 0 {
        warnings.push(format!(
            "{refused} rows were not moved; each table's report says why"
        ));
    }
    Ok(MoveReport {
        source: source.path.clone(),
        source_schema_version: source.schema_version,
        target_schema_version,
        resumed,
        tables,
        not_moved: source.not_moved(),
        vectors,
        database_vectors,
        warnings,
        vector_index_seconds,
        elapsed_seconds: started.elapsed().as_secs_f64(),
    })
}

fn connect(url: &str) -> Result<Client, MoveError> {
    // The store opened the same URL a moment ago, so it parses and answers.
    Client::connect(url, NoTls).map_err(|error| MoveError::Target {
        step: "a connection".to_owned(),
        message: describe(&error),
    })
}

/// Starts this run's pass over the steps: goes on with an interrupted pass, or begins a
/// new one (every cursor but the event log's cleared) when the last one finished.
/// Returns whether it goes on.
fn begin_pass(client: &mut Client, fingerprint: &str) -> Result<bool, postgres::Error> {
    let rows = client.query(
        "SELECT step, finished FROM levh_moves_in WHERE source = $1",
        &[&fingerprint],
    )?;
    let started = !rows.is_empty();
    let all_finished = STEPS.iter().all(|step| {
        rows.iter()
            .any(|row| row.get::<_, String>(0) == step.name && row.get::<_, bool>(1))
    });
    if started && !all_finished {
        return Ok(true);
    }
    client.execute(
        "UPDATE levh_moves_in SET finished = false,
             cursor = CASE WHEN step = $2 THEN cursor END, updated_at = now()
          WHERE source = $1",
        &[&fingerprint, &steps::EVENTS],
    )?;
    Ok(false)
}

/// The vectors in the target, by model.
fn vectors_in_target(client: &mut Client) -> Result<Vec<ModelVectors>, postgres::Error> {
    Ok(client
        .query(
            "SELECT model, dimension::bigint, count(*)::bigint FROM memory_embeddings
              GROUP BY model, dimension ORDER BY model, dimension",
            &[],
        )?
        .iter()
        .map(|row| ModelVectors {
            model: row.get(0),
            dimension: row.get(1),
            vectors: row.get::<_, i64>(2).max(0) as u64,
        })
        .collect())
}

/// Copies one table, a batch per transaction, from where the last run left it.
fn run_step(
    source: &Source,
    client: &mut Client,
    step: &Step,
    request: &MoveRequest,
    progress: &dyn Progress,
) -> Result<TableReport, MoveError> {
    let started = Instant::now();
    let target_error = |error: postgres::Error| MoveError::Target {
        step: step.name.to_owned(),
        message: describe(&error),
    };
    let total = source.count(step)?;
    let state = client
        .query_opt(
            "SELECT cursor, finished FROM levh_moves_in WHERE source = $1 AND step = $2",
            &[&source.fingerprint, &step.name],
        )
        .map_err(target_error)?;
    let (mut cursor, finished): (Option<serde_json::Value>, bool) = match state {
        Some(row) => (row.get(0), row.get(1)),
        None => (None, false),
    };
    let mut report = TableReport {
        table: step.name.to_owned(),
        read: total,
        copied: 0,
        already_there: 0,
        refused: 0,
        refusals: Vec::new(),
        finished_earlier: finished,
        elapsed_seconds: 0.0,
    };
    if finished {
        report.already_there = total;
        return Ok(report);
    }
    let done_before = match &cursor {
        Some(cursor) => source.count_up_to(step, cursor)?,
        None => 0,
    };
    progress.step(step.name, total, done_before);
    // An attachment brings its file (up to 10 MiB) into the transaction: a few at a time
    // keep a batch's memory and its transaction small.
    let batch_size = if step.name == "attachments" {
        request.batch_size.min(ATTACHMENTS_PER_BATCH)
    } else {
        request.batch_size
    };
    let mut read_now = 0u64;
    loop {
        let rows = source.page(step, cursor.as_ref(), batch_size)?;
        let Some(last) = rows.last() else { break };
        let next_cursor = serde_json::Value::Array(last.key.iter().map(key_json).collect());
        let mut tx = client.transaction().map_err(target_error)?;
        let outcome = write_batch(&mut tx, source, step, &rows)?;
        tx.execute(
            "INSERT INTO levh_moves_in (source, step, cursor) VALUES ($1, $2, $3)
             ON CONFLICT (source, step) DO UPDATE SET cursor = excluded.cursor, updated_at = now()",
            &[&source.fingerprint, &step.name, &next_cursor],
        )
        .map_err(target_error)?;
        tx.commit().map_err(target_error)?;
        let batch = rows.len() as u64;
        read_now += batch;
        report.copied += outcome.copied;
        report.refused += outcome.refusals.len() as u64;
        report.already_there += batch
            .saturating_sub(outcome.copied)
            .saturating_sub(outcome.refusals.len() as u64);
        for refusal in outcome.refusals {
            if report.refusals.len() < NAMED_REFUSALS {
                report.refusals.push(refusal);
            }
        }
        progress.advance(batch);
        cursor = Some(next_cursor);
        if !request.pause_between_batches.is_zero() {
            std::thread::sleep(request.pause_between_batches);
        }
        if rows.len() < batch_size {
            break;
        }
    }
    client
        .execute(
            "INSERT INTO levh_moves_in (source, step, cursor, finished) VALUES ($1, $2, $3, true)
             ON CONFLICT (source, step) DO UPDATE SET finished = true, updated_at = now()",
            &[&source.fingerprint, &step.name, &cursor],
        )
        .map_err(target_error)?;
    progress.finish();
    // Rows an interrupted run of this pass copied before (and, for the event log, every
    // earlier move) are there already.
    report.already_there += total.saturating_sub(read_now);
    report.elapsed_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// What one batch did.
struct Outcome {
    copied: u64,
    refusals: Vec<Refusal>,
}

/// A source row: its keyset values and the batch's columns.
pub(crate) struct Row {
    pub key: Vec<Value>,
    pub values: Vec<Value>,
}

fn write_batch(
    tx: &mut Transaction<'_>,
    source: &Source,
    step: &Step,
    rows: &[Row],
) -> Result<Outcome, MoveError> {
    let target_error = |error: postgres::Error| MoveError::Target {
        step: step.name.to_owned(),
        message: describe(&error),
    };
    if step.name == "attachments" {
        copy_files(tx, source, rows).map_err(target_error)?;
    }
    let arrays = columns_of(step, rows)?;
    let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a.as_sql()).collect();
    let batch = batch_cte(step);
    let copied: i64 = tx
        .query_one(&format!("{batch}, {}", step.write), &params)
        .map_err(target_error)?
        .get(0);
    let copied = copied.max(0) as u64;
    let mut refusals = Vec::new();
    if copied < rows.len() as u64 && !step.refusals.is_empty() {
        for row in tx
            .query(&format!("{batch} {}", step.refusals), &params)
            .map_err(target_error)?
        {
            refusals.push(Refusal {
                row: row.get(0),
                reason: row.get(1),
            });
        }
    }
    Ok(Outcome { copied, refusals })
}

/// `WITH batch AS (SELECT * FROM unnest($1::text[], …) AS x(name, …))`.
fn batch_cte(step: &Step) -> String {
    let arrays: Vec<String> = step
        .columns
        .iter()
        .enumerate()
        .map(|(index, (_, _, kind))| format!("${}::{}", index + 1, array_type(*kind)))
        .collect();
    let names: Vec<&str> = step.columns.iter().map(|(name, _, _)| *name).collect();
    format!(
        "WITH batch AS (SELECT * FROM unnest({}) AS x({}))",
        arrays.join(", "),
        names.join(", ")
    )
}

fn array_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Text => "text[]",
        Kind::Int => "bigint[]",
        Kind::Float => "float8[]",
        Kind::Bool => "boolean[]",
        Kind::Vector => "vector[]",
        Kind::Bytes => "bytea[]",
    }
}

/// One column of a batch, as the array PostgreSQL receives.
enum Array {
    Text(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Vector(Vec<Option<pgvector::Vector>>),
    Bytes(Vec<Option<Vec<u8>>>),
}

impl Array {
    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Self::Text(values) => values,
            Self::Int(values) => values,
            Self::Float(values) => values,
            Self::Bool(values) => values,
            Self::Vector(values) => values,
            Self::Bytes(values) => values,
        }
    }
}

/// The batch's rows, column by column, in the types PostgreSQL receives.
fn columns_of(step: &Step, rows: &[Row]) -> Result<Vec<Array>, MoveError> {
    step.columns
        .iter()
        .enumerate()
        .map(|(index, (name, _, kind))| {
            let values = rows.iter().map(|row| &row.values[index]);
            let wrong = |value: &Value| {
                MoveError::Source(format!(
                    "{}.{name} holds {value:?} where levh writes {kind:?}",
                    steps::source_table(step)
                ))
            };
            Ok(match kind {
                Kind::Text => Array::Text(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Text(text) => Ok(Some(text.clone())),
                            Value::Integer(number) => Ok(Some(number.to_string())),
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Kind::Int => Array::Int(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Integer(number) => Ok(Some(*number)),
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Kind::Float => Array::Float(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Real(number) => Ok(Some(*number)),
                            Value::Integer(number) => Ok(Some(*number as f64)),
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Kind::Bool => Array::Bool(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Integer(number) => Ok(Some(*number != 0)),
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Kind::Vector => Array::Vector(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Blob(bytes) if bytes.len() % 4 == 0 => {
                                Ok(Some(pgvector::Vector::from(floats(bytes))))
                            }
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                Kind::Bytes => Array::Bytes(
                    values
                        .map(|v| match v {
                            Value::Null => Ok(None),
                            Value::Blob(bytes) => Ok(Some(bytes.clone())),
                            other => Err(wrong(other)),
                        })
                        .collect::<Result<_, _>>()?,
                ),
            })
        })
        .collect()
}

/// A vector as SQLite keeps it: little-endian `f32`s.
fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Puts the files of a batch of attachments into `attachment_files`, each read from the
/// personal store's `attachments/` folder and checked against its digest. A file that is
/// missing or does not match is left out; its attachment row is then refused.
fn copy_files(
    tx: &mut Transaction<'_>,
    source: &Source,
    rows: &[Row],
) -> Result<(), postgres::Error> {
    let mut digests = Vec::new();
    let mut files = Vec::new();
    for row in rows {
        let Some(Value::Text(sha256)) = row.values.get(4) else {
            continue;
        };
        match source.attachment_file(sha256) {
            Some(bytes) if hex(&Sha256::digest(&bytes)) == *sha256 => {
                digests.push(sha256.clone());
                files.push(bytes);
            }
            _ => tracing::warn!(sha256, "an attached file is missing or damaged; not moved"),
        }
    }
    if !digests.is_empty() {
        tx.execute(
            "INSERT INTO attachment_files (sha256, bytes)
             SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT DO NOTHING",
            &[&digests, &files],
        )?;
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A keyset value as the cursor keeps it.
fn key_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Integer(number) => serde_json::Value::from(*number),
        Value::Text(text) => serde_json::Value::from(text.clone()),
        Value::Real(number) => serde_json::Value::from(*number),
        Value::Null | Value::Blob(_) => serde_json::Value::Null,
    }
}

/// The server's message, its detail and SQLSTATE (the driver's own `Display` says only
/// "db error").
fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(": ");
                text.push_str(detail);
            }
            text
        }
        None => error.to_string(),
    }
}

/// The store file `path` names: the file itself, or `levh.db` in the home it names.
pub fn store_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("levh.db")
    } else {
        path.to_path_buf()
    }
}
