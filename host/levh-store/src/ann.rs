//! An approximate vector index for large stores, behind [`VectorIndex`].
//!
//! The exact scan reads every vector of a model (154 MB at 100k × 384 f32): about 6 ms a
//! query on these machines, bound by memory bandwidth. Below [`AnnConfig::exact_below`]
//! vectors that is fine and this index is the exact scan. Above it, per model:
//!
//! - a **snapshot**: an HNSW graph (usearch) of the vectors written up to change number
//!   `covered` (the `vector_changes` log, migration 0005);
//! - the **fresh tail**: vectors written after `covered`, scanned exactly through the
//!   change log's index — new memories, and also vectors re-written for old memories —
//!   until a background job adds them to the graph and moves `covered` past them;
//! - every snapshot candidate is checked and **re-scored in SQL** against the live rows
//!   with the caller's filter, so forgotten, purged, superseded, filtered-out and
//!   other-workspace memories never come back, and scores are exact whatever the
//!   snapshot holds. The graph is asked for `ef_search` candidates (over-fetch); when
//!   the filter leaves fewer than `limit` of them, the query falls back to the exact scan.
//!
//! Snapshots are built (or loaded) on a background thread once a model passes the
//! threshold. A query that finds a tail starts a job adding it to the graph (captures
//! one by one: the tail stays a handful of vectors); a tail past
//! [`AnnConfig::rebuild_tail`] (a bulk import) starts a rebuild instead. Queries keep
//! using the old snapshot and the tail meanwhile. Each build is written to
//! `<cache>/<model>-<dimension>.hnsw` (temp file + rename, so processes sharing a store
//! never read half a file); a process starting up loads it instead of rebuilding. A file
//! is never trusted: a wrong header, a payload that does not decode, a change number the
//! database has not reached, or sampled vectors that differ from the database's, and it
//! is rebuilt.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Instant;

use levh_core::{MemoryFilter, MemoryId, StoreError, VectorIndex};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::exact_scan::{exact_nearest, exact_scan};
use crate::{SqliteStore, SqliteStoreError, vectors};

/// When the approximate path takes over, and how its graph is built.
#[derive(Debug, Clone)]
pub struct AnnConfig {
    /// Below this many vectors of a model, queries scan exactly (no graph is built).
    /// 5k, from `benches/ann.rs` on a 2-core machine (384-d): at 5k the graph answers in
    /// 0.30 ms against the scan's 1.1 ms and builds in 0.3 s; at 10k 0.40 against 3.7 ms.
    /// Below that the scan is about as fast as re-scoring the graph's candidates.
    pub exact_below: usize,
    /// A rebuild starts once the fresh tail passes this many vectors or a tenth of the
    /// snapshot, whichever is larger; a smaller tail is added to the graph one vector at
    /// a time (a build of that many is faster than adding them to a large graph).
    pub rebuild_tail: usize,
    /// HNSW `M`: links per node (twice as many on the bottom layer). 32 with
    /// `ef_construction` 128 finds as many of the exact top 100 in 256 candidates as
    /// the previous graph library did (0.88 on the hash vectors of the 100k scale bench,
    /// where 16 finds 0.69–0.75) while building in 20 s instead of 210 s on 2 cores.
    pub connectivity: usize,
    /// HNSW `ef_construction`: graph quality against build time (64 found 0.83 of the
    /// top 100 above, 128 0.88 for 1.5× the build time).
    pub ef_construction: usize,
    /// HNSW `ef`: candidates fetched per query. Recall asks for 100 candidates by
    /// default and a query asking for more than half of `ef` scans exactly, so over-fetch
    /// has room to absorb filtering. 200 rather than 256: recall at 100k (scale bench,
    /// same store, alternating runs) 2.5–2.9 ms p50 against 2.9–3.2, recall@10 against
    /// the exact scan 1.000 for both.
    pub ef_search: usize,
}

impl Default for AnnConfig {
    fn default() -> Self {
        Self {
            exact_below: 5_000,
            rebuild_tail: 5_000,
            connectivity: 32,
            ef_construction: 128,
            ef_search: 200,
        }
    }
}

/// What the index did, for tests and diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnnStats {
    /// Graphs built from the database.
    pub builds: u64,
    /// Snapshots loaded from a file.
    pub loads: u64,
    /// Vectors added to a snapshot's graph after it was built or loaded.
    pub absorbed: u64,
    /// Snapshot files rejected (stale, corrupt or foreign).
    pub rejected_files: u64,
    /// Queries answered by graph + tail.
    pub approximate_queries: u64,
    /// Queries answered by the exact scan.
    pub exact_queries: u64,
}

#[derive(Debug, Default)]
struct Counters {
    builds: AtomicU64,
    loads: AtomicU64,
    absorbed: AtomicU64,
    rejected_files: AtomicU64,
    approximate_queries: AtomicU64,
    exact_queries: AtomicU64,
}

/// A vector as the graph holds it: a byte a dimension, scaled so the largest component is
/// ±127 — a quarter of the memory, so a query's thousands of distances read a quarter of
/// the bytes. The graph compares them by cosine, which the per-vector scale does not
/// change. It only picks candidates; every one is re-scored exactly against the stored
/// vector, so the small error moves a candidate near the edge of the over-fetch at most.
fn quantize(vector: &[f32]) -> Vec<i8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return vec![0; vector.len()];
    }
    vector
        .iter()
        .map(|x| (x * 127.0 / largest).round() as i8)
        .collect()
}

/// Searches one graph runs at once. usearch keeps a scratch context per concurrent
/// search or insert, reserved up front, and one that finds none free fails: more
/// searches wait, and one more context is reserved for the one job adding to the graph.
const SEARCH_CONTEXTS: usize = 16;
const GRAPH_CONTEXTS: usize = SEARCH_CONTEXTS + 1;

/// A graph's shape: the model's dimension and the configured link counts; cosine over
/// bytes ([`quantize`]).
fn graph_options(dimension: usize, config: &AnnConfig) -> IndexOptions {
    IndexOptions {
        dimensions: dimension,
        metric: MetricKind::Cos,
        quantization: ScalarKind::I8,
        connectivity: config.connectivity,
        expansion_add: config.ef_construction,
        expansion_search: config.ef_search,
        multi: false,
    }
}

fn graph_error(doing: &'static str, error: impl std::fmt::Display) -> SqliteStoreError {
    SqliteStoreError::VectorIndex {
        doing,
        cause: error.to_string(),
    }
}

/// A graph (keys are memory seqs) and the change number it covers: built or loaded,
/// then grown by [`Snapshot::absorb`].
struct Snapshot {
    covered: AtomicI64,
    /// The graph's keys when it was built or loaded, saved with it: a loaded file's
    /// sample check compares some of them with the database.
    seqs: Vec<i64>,
    /// Searches and inserts share it (usearch allows both at once); growing its capacity
    /// takes it alone.
    graph: RwLock<Index>,
    /// Free search contexts ([`SEARCH_CONTEXTS`]); a query waits on `freed` for one.
    free_contexts: Mutex<usize>,
    freed: Condvar,
}

impl Snapshot {
    /// A graph holding the vectors of `seqs`, made ready for concurrent searches.
    fn new(covered: i64, seqs: Vec<i64>, graph: Index) -> Result<Self, SqliteStoreError> {
        graph
            .reserve_capacity_and_threads(seqs.len(), GRAPH_CONTEXTS)
            .map_err(|e| graph_error("sizing", e))?;
        Ok(Self {
            covered: AtomicI64::new(covered),
            seqs,
            graph: RwLock::new(graph),
            free_contexts: Mutex::new(SEARCH_CONTEXTS),
            freed: Condvar::new(),
        })
    }

    /// The change number the graph holds every vector up to.
    fn covered(&self) -> i64 {
        self.covered.load(Ordering::Acquire)
    }

    /// How many vectors the graph holds.
    fn len(&self) -> usize {
        self.graph().size()
    }

    fn graph(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.graph.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Memory seqs of the graph's nearest points, nearest first (up to `ef_search`).
    fn candidates(&self, query: &[f32]) -> Result<Vec<i64>, SqliteStoreError> {
        let _context = self.context();
        let graph = self.graph();
        let found = graph
            .search(&quantize(query), graph.expansion_search())
            .map_err(|e| graph_error("searching", e))?;
        Ok(found.keys.into_iter().map(|key| key as i64).collect())
    }

    /// Adds vectors written after the graph was built (a re-written one replaces its old
    /// point), then covers `through`. Searches go on meanwhile; they scan anything after
    /// the `covered` they read exactly, so a vector is never missed while it is added.
    fn absorb(&self, points: &[(i64, Vec<i8>)], through: i64) -> Result<(), SqliteStoreError> {
        let needed = self.len() + points.len();
        if self.graph().capacity() < needed {
            // Growing reallocates, so it waits for every search. A quarter more than
            // needed, so captures one by one do not each do it.
            self.graph
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .reserve_capacity_and_threads(needed + needed / 4, GRAPH_CONTEXTS)
                .map_err(|e| graph_error("growing", e))?;
        }
        let graph = self.graph();
        for (seq, point) in points {
            let key = *seq as u64;
            if graph.contains(key) {
                graph.remove(key).map_err(|e| graph_error("updating", e))?;
            }
            graph
                .add(key, point)
                .map_err(|e| graph_error("adding to", e))?;
        }
        self.covered.fetch_max(through, Ordering::AcqRel);
        Ok(())
    }

    /// Waits for a free search context; it is given back when the guard drops.
    fn context(&self) -> SearchContext<'_> {
        let mut free = self
            .free_contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SearchContext(self)
    }
}

struct SearchContext<'a>(&'a Snapshot);

impl Drop for SearchContext<'_> {
    fn drop(&mut self) {
        *self
            .0
            .free_contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// One model's state, shared with its background job.
#[derive(Default)]
struct ModelIndex {
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    job_running: AtomicBool,
    /// Changes counted after the snapshot: (snapshot covered, counted through, count).
    /// Counting only the new changes keeps the per-query check cheap.
    tail: Mutex<(i64, i64, usize)>,
}

impl ModelIndex {
    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Clears a model's "job running" flag when dropped.
struct Running<'a>(&'a AtomicBool);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The approximate index over a [`SqliteStore`]'s vectors. Cheap to share (`Arc`); one
/// per process.
pub struct AnnIndex {
    store: Arc<SqliteStore>,
    cache_dir: Option<PathBuf>,
    config: AnnConfig,
    models: Mutex<HashMap<(String, usize), Arc<ModelIndex>>>,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for AnnIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnIndex")
            .field("cache_dir", &self.cache_dir)
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl AnnIndex {
    /// An index over `store`, persisting snapshots under `cache_dir` (none: every process
    /// builds its own, as for an in-memory store).
    pub fn new(store: Arc<SqliteStore>, cache_dir: Option<PathBuf>, config: AnnConfig) -> Self {
        Self {
            store,
            cache_dir,
            config,
            models: Mutex::new(HashMap::new()),
            counters: Arc::default(),
        }
    }

    /// What the index has done so far.
    pub fn stats(&self) -> AnnStats {
        let c = &self.counters;
        AnnStats {
            builds: c.builds.load(Ordering::Relaxed),
            loads: c.loads.load(Ordering::Relaxed),
            absorbed: c.absorbed.load(Ordering::Relaxed),
            rejected_files: c.rejected_files.load(Ordering::Relaxed),
            approximate_queries: c.approximate_queries.load(Ordering::Relaxed),
            exact_queries: c.exact_queries.load(Ordering::Relaxed),
        }
    }

    /// Where the snapshot of `model` at `dimension` is persisted.
    pub fn snapshot_path(&self, model: &str, dimension: usize) -> Option<PathBuf> {
        self.cache_dir
            .as_ref()
            .map(|dir| dir.join(file_name(model, dimension)))
    }

    /// Brings `model`'s snapshot up to date on the calling thread (load or build as a
    /// query would in the background), then returns. For tests, benches, and warming
    /// the index at start-up.
    pub fn refresh(&self, model: &str, dimension: usize) -> Result<(), StoreError> {
        let state = self.model(model, dimension);
        while state.job_running.swap(true, Ordering::AcqRel) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _running = Running(&state.job_running);
        Ok(self.job(model, dimension).run(&state)?)
    }

    /// Waits until no background job runs for `model` (tests, benches).
    pub fn wait_idle(&self, model: &str, dimension: usize) {
        let state = self.model(model, dimension);
        while state.job_running.load(Ordering::Acquire) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn model(&self, model: &str, dimension: usize) -> Arc<ModelIndex> {
        self.models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((model.to_owned(), dimension))
            .or_default()
            .clone()
    }

    fn job(&self, model: &str, dimension: usize) -> Job {
        Job {
            store: self.store.clone(),
            path: self.snapshot_path(model, dimension),
            model: model.to_owned(),
            dimension,
            config: self.config.clone(),
            counters: self.counters.clone(),
        }
    }

    /// Starts `work` for `model` on a background thread unless a job is running.
    fn start_job(&self, model: &str, dimension: usize, state: &Arc<ModelIndex>, work: Work) {
        if state.job_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let job = self.job(model, dimension);
        let state = state.clone();
        let spawned = std::thread::Builder::new()
            .name("levh-ann".into())
            .spawn(move || {
                // Cleared even if the job panics, so a later query can try again.
                let _running = Running(&state.job_running);
                let done = match work {
                    Work::Rebuild => job.run(&state),
                    Work::Absorb => job.absorb(&state),
                };
                if let Err(error) = done {
                    tracing::warn!(%error, model = job.model, ?work, "updating the vector index failed; exact scans continue");
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "could not start the vector index thread");
        }
    }

    /// How many vectors of the model were written after `covered` (a snapshot's change
    /// number, 0 without one). Counts only changes not yet counted.
    fn tail_len(
        &self,
        state: &ModelIndex,
        model: &str,
        dimension: usize,
        covered: i64,
    ) -> Result<usize, SqliteStoreError> {
        let mut tail = state.tail.lock().unwrap_or_else(PoisonError::into_inner);
        if tail.0 != covered || tail.1 < covered {
            *tail = (covered, covered, 0);
        }
        let (count, last): (i64, Option<i64>) = self.store.lock().query_row(
            "SELECT count(*), max(change) FROM vector_changes
                 WHERE model = ?1 AND dimension = ?2 AND change > ?3",
            params![model, dimension as i64, tail.1],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        if let Some(last) = last {
            tail.1 = last;
            tail.2 += count as usize;
        }
        Ok(tail.2)
    }

    fn exact(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
        self.counters.exact_queries.fetch_add(1, Ordering::Relaxed);
        exact_nearest(&self.store.read(), filter, model, query, limit)
    }
}

impl VectorIndex for AnnIndex {
    fn nearest(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, StoreError> {
        Ok(self.search(filter, model, query, limit)?)
    }
}

impl AnnIndex {
    /// The nearest `limit` vectors: graph candidates re-scored, plus the fresh tail, or
    /// the exact scan when the graph cannot answer (see the module docs).
    fn search(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
        let dimension = query.len();
        if limit == 0 || dimension == 0 {
            return self.exact(filter, model, query, limit);
        }
        let state = self.model(model, dimension);
        let snapshot = state.snapshot();
        let covered = snapshot.as_ref().map_or(0, |s| s.covered());
        let tail = self.tail_len(&state, model, dimension, covered)?;
        let Some(snapshot) = snapshot else {
            if tail >= self.config.exact_below {
                self.start_job(model, dimension, &state, Work::Rebuild);
            }
            return self.exact(filter, model, query, limit);
        };
        if tail >= self.config.rebuild_tail.max(snapshot.len() / 10) {
            self.start_job(model, dimension, &state, Work::Rebuild);
        } else if tail > 0 {
            self.start_job(model, dimension, &state, Work::Absorb);
        }
        // Over-fetch needs headroom: a page close to `ef` would be cut short by the
        // first filtered-out candidate.
        if limit * 2 > self.config.ef_search {
            return self.exact(filter, model, query, limit);
        }

        let candidates = snapshot.candidates(query)?;
        let mut top = vectors::TopK::new(limit);
        let conn = self.store.read();
        let seen = score_candidates(&conn, filter, model, query, &candidates, &mut top)?;
        if seen.len() < limit && candidates.len() < snapshot.len() {
            // The filter discarded most of what the graph offered (a selective project or
            // kind): the best matches may lie beyond `ef`, so only a full scan is right.
            drop(conn);
            return self.exact(filter, model, query, limit);
        }
        exact_scan(
            &conn,
            filter,
            model,
            query,
            Some((covered, &seen)),
            &mut top,
        )?;
        self.counters
            .approximate_queries
            .fetch_add(1, Ordering::Relaxed);
        Ok(top.into_sorted())
    }
}

/// Checks the graph's candidates against the live rows and the filter, scoring each
/// survivor with its stored vector (so a vector re-written since the build scores as it
/// is now). Returns the seqs that survived.
fn score_candidates(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    candidates: &[i64],
    top: &mut vectors::TopK,
) -> Result<HashSet<i64>, SqliteStoreError> {
    let (clause, values) = crate::query::where_clause(filter);
    // One statement for any number of candidates: the seqs travel as one JSON array.
    let sql = format!(
        "SELECT m.id, e.vector, e.memory_seq FROM json_each(?1) j
         CROSS JOIN memory_embeddings e ON e.memory_seq = j.value
         CROSS JOIN memories m ON m.seq = e.memory_seq
         WHERE e.model = ?2 AND e.dimension = ?3 AND {clause}"
    );
    let seqs = serde_json::to_string(candidates)?;
    let params = [
        rusqlite::types::Value::from(seqs),
        model.to_owned().into(),
        (query.len() as i64).into(),
    ]
    .into_iter()
    .chain(values);
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(rusqlite::params_from_iter(params))?;
    let mut seen = HashSet::with_capacity(candidates.len());
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(2)?;
        if !seen.insert(seq) {
            continue;
        }
        let blob = vectors::blob(row, 1)?;
        let score = vectors::dot(query, blob);
        if top.would_keep(score) {
            let id: String = row.get(0)?;
            top.push(score, crate::rows::parse_id(&id)?);
        }
    }
    Ok(seen)
}

/// `<model>-<dimension>.hnsw`, the model name reduced to characters safe in a file name
/// (the header keeps the real name, so two models that reduce alike never mix).
fn file_name(model: &str, dimension: usize) -> String {
    let safe: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}-{dimension}.hnsw")
}

/// What a background job does.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// Load a newer saved snapshot, or build one from every vector.
    Rebuild,
    /// Add the vectors written since the snapshot to its graph.
    Absorb,
}

/// A load-or-build of one model's snapshot, owning what it needs to run on its own thread.
struct Job {
    store: Arc<SqliteStore>,
    path: Option<PathBuf>,
    model: String,
    dimension: usize,
    config: AnnConfig,
    counters: Arc<Counters>,
}

/// Bumped whenever the file layout or the graph library changes.
const FORMAT_VERSION: u32 = 3;
const MAGIC: &[u8; 8] = b"LEVHHNSW";
/// Vectors compared with the database when a file is loaded.
const SAMPLES: usize = 32;
/// Graphs this small are built on one thread (see [`Job::build`]).
const PARALLEL_BUILD_FROM: usize = 10_000;

impl Job {
    fn run(&self, state: &ModelIndex) -> Result<(), SqliteStoreError> {
        let current = state.snapshot().map_or(0, |s| s.covered());
        // Another process may have written a newer snapshot: loading it is far cheaper
        // than building one.
        if let Some(snapshot) = self.load_newer_than(current)? {
            let (covered, count) = (snapshot.covered(), snapshot.len());
            *state
                .snapshot
                .write()
                .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(snapshot));
            self.counters.loads.fetch_add(1, Ordering::Relaxed);
            let tail = self.with_connection(|conn| count_after(conn, self, covered))?;
            if tail < self.config.rebuild_tail.max(count / 10) {
                return Ok(());
            }
        }
        let snapshot = self.build()?;
        self.save(&snapshot);
        *state
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(snapshot));
        Ok(())
    }

    /// Adds the vectors written after the current snapshot's change number to its graph
    /// (each at most once, as it is now) and moves the number past them.
    fn absorb(&self, state: &ModelIndex) -> Result<(), SqliteStoreError> {
        let Some(snapshot) = state.snapshot() else {
            return Ok(());
        };
        let after = snapshot.covered();
        let (through, points) = self.read_at_once(|conn| {
            let through = self.last_change(conn)?;
            let mut statement = conn.prepare_cached(
                "SELECT e.memory_seq, e.vector FROM vector_changes c
                         CROSS JOIN memory_embeddings e ON e.memory_seq = c.memory_seq
                         WHERE c.model = ?1 AND c.dimension = ?2 AND c.change > ?3
                           AND e.model = ?1 AND e.dimension = ?2",
            )?;
            let mut rows = statement.query(params![self.model, self.dimension as i64, after])?;
            let (mut seen, mut points) = (HashSet::new(), Vec::new());
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                // A vector written twice has two changes; the row is its latest.
                if !seen.insert(seq) {
                    continue;
                }
                points.push((seq, quantize(&vectors::decode(vectors::blob(row, 1)?))));
            }
            Ok((through, points))
        })?;
        if through <= after {
            return Ok(());
        }
        snapshot.absorb(&points, through)?;
        self.counters
            .absorbed
            .fetch_add(points.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Runs `read` in one read transaction (so the change number and the vectors it reads
    /// agree) on a connection of its own when the store is a file, so a build's long read
    /// does not hold the store's connection; on the store's otherwise.
    fn read_at_once<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, SqliteStoreError>,
    ) -> Result<T, SqliteStoreError> {
        self.with_connection(|conn| {
            conn.execute_batch("BEGIN")?;
            let result = read(conn);
            // A read transaction: ending it cannot lose anything.
            let _ = conn.execute_batch("COMMIT");
            result
        })
    }

    /// The latest change number of this model's vectors (0 without any).
    fn last_change(&self, conn: &Connection) -> Result<i64, SqliteStoreError> {
        Ok(conn.query_row(
            "SELECT coalesce(max(change), 0) FROM vector_changes
             WHERE model = ?1 AND dimension = ?2",
            params![self.model, self.dimension as i64],
            |row| row.get(0),
        )?)
    }

    /// Runs `f` on a read-only connection of its own when the store is a file (see
    /// [`Job::read_at_once`]); on the store's otherwise.
    fn with_connection<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, SqliteStoreError>,
    ) -> Result<T, SqliteStoreError> {
        match self.store.file_path() {
            Some(path) => f(&crate::readers::open_for_build(path)?),
            None => f(&self.store.read()),
        }
    }

    fn build(&self) -> Result<Snapshot, SqliteStoreError> {
        let started = Instant::now();
        let (covered, seqs, points) = self.read_at_once(|conn| {
            let covered = self.last_change(conn)?;
            let mut statement = conn.prepare(
                "SELECT memory_seq, vector FROM memory_embeddings
                     WHERE model = ?1 AND dimension = ?2",
            )?;
            let mut rows = statement.query(params![self.model, self.dimension as i64])?;
            // Bytes in one flat array: a quarter of the f32s, no allocation a vector.
            let (mut seqs, mut points) = (Vec::new(), Vec::new());
            while let Some(row) = rows.next()? {
                seqs.push(row.get::<_, i64>(0)?);
                points.extend(quantize(&vectors::decode(vectors::blob(row, 1)?)));
            }
            Ok((covered, seqs, points))
        })?;
        let count = seqs.len();
        let graph = Index::new(&graph_options(self.dimension, &self.config))
            .map_err(|e| graph_error("creating", e))?;
        // Small graphs (tests) are built on one thread, so a rebuild of the same vectors
        // gives the same graph; large ones on every core.
        let threads = if count < PARALLEL_BUILD_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        };
        graph
            .reserve_capacity_and_threads(count, threads.max(GRAPH_CONTEXTS))
            .map_err(|e| graph_error("sizing", e))?;
        let (graph_ref, seqs_ref, points_ref) = (&graph, &seqs, &points);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|first| {
                    scope.spawn(move || {
                        for i in (first..count).step_by(threads) {
                            let point = &points_ref[i * self.dimension..(i + 1) * self.dimension];
                            graph_ref
                                .add(seqs_ref[i] as u64, point)
                                .map_err(|e| graph_error("building", e))?;
                        }
                        Ok::<_, SqliteStoreError>(())
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err(SqliteStoreError::VectorIndexBuildPanicked))
            })
        })?;
        self.counters.builds.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            model = self.model,
            count,
            seconds = started.elapsed().as_secs_f64(),
            "built the vector index"
        );
        Snapshot::new(covered, seqs, graph)
    }

    /// Writes the snapshot atomically. A failure only costs a rebuild at the next start.
    fn save(&self, snapshot: &Snapshot) {
        let Some(path) = &self.path else { return };
        if let Err(error) = self.write_file(path, snapshot) {
            tracing::warn!(%error, path = %path.display(), "could not save the vector index");
        }
    }

    /// The header, then the payload: the graph's keys (little-endian i64s) and the graph
    /// as usearch serializes it. The header carries the payload's SHA-256.
    fn write_file(&self, path: &Path, snapshot: &Snapshot) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let temp = dir.join(format!(
            ".{}.{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("index"),
            std::process::id()
        ));
        let result = (|| {
            let keys: Vec<u8> = snapshot.seqs.iter().flat_map(|s| s.to_le_bytes()).collect();
            // Saved right after a build or load, before anything is absorbed: the keys,
            // the change number and the graph describe the same vectors.
            let graph = {
                let index = snapshot.graph();
                let mut bytes = vec![0u8; index.serialized_length()];
                index
                    .save_to_buffer(&mut bytes)
                    .map_err(std::io::Error::other)?;
                bytes
            };
            let digest: [u8; 32] = Sha256::new()
                .chain_update(&keys)
                .chain_update(&graph)
                .finalize()
                .into();
            let mut header = Vec::new();
            header.extend_from_slice(MAGIC);
            header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            header.extend_from_slice(&(self.model.len() as u32).to_le_bytes());
            header.extend_from_slice(self.model.as_bytes());
            header.extend_from_slice(&(self.dimension as u32).to_le_bytes());
            header.extend_from_slice(&snapshot.covered().to_le_bytes());
            header.extend_from_slice(&(snapshot.seqs.len() as u64).to_le_bytes());
            header.extend_from_slice(&digest);
            let mut file = File::create(&temp)?;
            file.write_all(&header)?;
            file.write_all(&keys)?;
            file.write_all(&graph)?;
            file.sync_all()?;
            std::fs::rename(&temp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// The persisted snapshot if it covers more than `current` and passes every check.
    fn load_newer_than(&self, current: i64) -> Result<Option<Snapshot>, SqliteStoreError> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let Ok(mut file) = File::open(path) else {
            return Ok(None);
        };
        let header = match read_header(&mut file) {
            Ok(header) => header,
            Err(reason) => return Ok(self.reject(path, &reason)),
        };
        if header.model != self.model || header.dimension != self.dimension {
            return Ok(self.reject(path, "written for another model"));
        }
        if header.covered <= current {
            return Ok(None);
        }
        let last = self.with_connection(|conn| self.last_change(conn))?;
        if header.covered > last {
            return Ok(self.reject(path, "covers changes this database never had"));
        }
        let mut payload = Vec::new();
        if let Err(error) = file.read_to_end(&mut payload) {
            return Ok(self.reject(path, &format!("payload: {error}")));
        }
        // A flipped bit in the graph could load fine and send a search astray: the
        // digest over the payload catches it first.
        let digest: [u8; 32] = Sha256::digest(&payload).into();
        if digest != header.digest {
            return Ok(self.reject(path, "checksum mismatch"));
        }
        let Some((keys, graph_bytes)) = header
            .count
            .checked_mul(8)
            .and_then(|length| payload.split_at_checked(length))
        else {
            return Ok(self.reject(path, "shorter than its keys"));
        };
        let seqs: Vec<i64> = keys
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let graph = Index::new(&graph_options(self.dimension, &self.config))
            .map_err(|e| graph_error("creating", e))?;
        if let Err(error) = graph.load_from_buffer(graph_bytes) {
            return Ok(self.reject(path, &format!("graph: {error}")));
        }
        if graph.size() != header.count || graph.dimensions() != self.dimension {
            return Ok(self.reject(path, "counts or dimensions disagree with the header"));
        }
        let step = (seqs.len() / SAMPLES).max(1);
        let sample: Vec<i64> = seqs.iter().step_by(step).copied().collect();
        let matching = self.with_connection(|conn| {
            let mut statement = conn.prepare(
                "SELECT vector FROM memory_embeddings
                     WHERE memory_seq = ?1 AND model = ?2 AND dimension = ?3",
            )?;
            let mut matching = 0;
            let mut point = vec![0i8; self.dimension];
            for seq in &sample {
                let stored: Option<Vec<u8>> = statement
                    .query_row(params![seq, self.model, self.dimension as i64], |row| {
                        row.get(0)
                    })
                    .optional()?;
                let in_graph = graph.get(*seq as u64, &mut point).is_ok_and(|n| n == 1);
                if in_graph && stored.is_some_and(|blob| quantize(&vectors::decode(&blob)) == point)
                {
                    matching += 1;
                }
            }
            Ok(matching)
        })?;
        // Purges and re-embeds since the build explain a few misses; a file from another
        // database misses nearly all.
        if matching * 2 < sample.len() {
            return Ok(self.reject(path, "its vectors are not this database's"));
        }
        Snapshot::new(header.covered, seqs, graph).map(Some)
    }

    fn reject(&self, path: &Path, reason: &str) -> Option<Snapshot> {
        self.counters.rejected_files.fetch_add(1, Ordering::Relaxed);
        tracing::info!(path = %path.display(), reason, "ignoring the saved vector index; rebuilding");
        None
    }
}

fn count_after(conn: &Connection, job: &Job, covered: i64) -> Result<usize, SqliteStoreError> {
    Ok(conn
        .query_row(
            "SELECT count(*) FROM vector_changes
         WHERE model = ?1 AND dimension = ?2 AND change > ?3",
            params![job.model, job.dimension as i64, covered],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as usize)?)
}

struct Header {
    model: String,
    dimension: usize,
    covered: i64,
    count: usize,
    digest: [u8; 32],
}

fn read_header(reader: &mut impl Read) -> Result<Header, String> {
    fn bytes<const N: usize>(reader: &mut impl Read) -> Result<[u8; N], String> {
        let mut buffer = [0u8; N];
        reader
            .read_exact(&mut buffer)
            .map_err(|e| format!("header: {e}"))?;
        Ok(buffer)
    }
    if &bytes::<8>(reader)? != MAGIC {
        return Err("not a levh vector index".into());
    }
    if u32::from_le_bytes(bytes(reader)?) != FORMAT_VERSION {
        return Err("written by another levh version".into());
    }
    let length = u32::from_le_bytes(bytes(reader)?) as usize;
    if length > 1024 {
        return Err("model name too long".into());
    }
    let mut model = vec![0u8; length];
    reader
        .read_exact(&mut model)
        .map_err(|e| format!("header: {e}"))?;
    let model = String::from_utf8(model).map_err(|_| "model name is not UTF-8".to_owned())?;
    Ok(Header {
        model,
        dimension: u32::from_le_bytes(bytes(reader)?) as usize,
        covered: i64::from_le_bytes(bytes(reader)?),
        count: u64::from_le_bytes(bytes(reader)?) as usize,
        digest: bytes(reader)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use levh_core::{Actor, Store, Timestamp, Workspace};

    const MODEL: &str = "test-model";

    /// Clustered unit vectors like sentence embeddings (topics with sub-topics); uniform
    /// random ones would make any HNSW look broken, and no embedder produces them.
    struct Corpus {
        state: u64,
        dimension: usize,
        centres: Vec<Vec<f32>>,
    }

    impl Corpus {
        fn new(seed: u64, dimension: usize, topics: usize) -> Self {
            let mut corpus = Self {
                state: seed | 1,
                dimension,
                centres: Vec::new(),
            };
            for _ in 0..topics {
                let topic = corpus.around(None, 1.0);
                for _ in 0..8 {
                    let sub =
                        corpus.around(Some(&topic), 0.045 * (384.0 / dimension as f32).sqrt());
                    corpus.centres.push(sub);
                }
            }
            corpus
        }

        fn uniform(&mut self) -> f64 {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }

        fn gaussian(&mut self) -> f32 {
            let u = self.uniform().max(1e-12);
            let v = self.uniform();
            ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
        }

        fn around(&mut self, centre: Option<&[f32]>, noise: f32) -> Vec<f32> {
            let mut v: Vec<f32> = (0..self.dimension)
                .map(|i| centre.map_or(0.0, |c| c[i]) + noise * self.gaussian())
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        }

        /// A stored text's vector.
        fn draw(&mut self) -> Vec<f32> {
            let at = (self.uniform() * self.centres.len() as f64) as usize;
            let centre = self.centres[at].clone();
            self.around(
                Some(&centre),
                0.035 * (384.0 / self.dimension as f32).sqrt(),
            )
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        cache: PathBuf,
        store: Arc<SqliteStore>,
        written: u64,
    }

    impl Fixture {
        /// A real WAL file, as in production (a separate read connection builds).
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).unwrap());
            Self {
                cache: dir.path().join("cache").join("index"),
                _dir: dir,
                store,
                written: 0,
            }
        }

        fn index(&self, config: AnnConfig) -> AnnIndex {
            AnnIndex::new(self.store.clone(), Some(self.cache.clone()), config)
        }

        fn add(&mut self, vector: Vec<f32>, workspace: &str, project: &str) -> MemoryId {
            self.written += 1;
            let at = Timestamp::from_second(1_700_000_000 + self.written as i64).unwrap();
            let content = format!("memory {}", self.written);
            let record =
                crate::test_records::record(content, at, workspace, project, Some((MODEL, vector)));
            let id = record.memory.id;
            self.store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            id
        }

        fn fill(&mut self, corpus: &mut Corpus, count: usize) -> Vec<(MemoryId, Vec<f32>)> {
            (0..count)
                .map(|n| {
                    let vector = corpus.draw();
                    let project = format!("p{}", n % 4);
                    (self.add(vector.clone(), "default", &project), vector)
                })
                .collect()
        }
    }

    fn everywhere() -> MemoryFilter {
        MemoryFilter::workspace(Workspace::default())
    }

    fn ids(found: &[(MemoryId, f32)]) -> Vec<MemoryId> {
        found.iter().map(|(id, _)| *id).collect()
    }

    /// Small graphs in debug builds: behaviour, not speed, is under test here.
    fn small() -> AnnConfig {
        AnnConfig {
            exact_below: 100,
            rebuild_tail: 1_000,
            connectivity: 16,
            ef_construction: 32,
            ef_search: 64,
        }
    }

    #[test]
    fn approximate_top_10_matches_the_exact_scan_on_clustered_384_d_vectors() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(11, 384, 40);
        fixture.fill(&mut corpus, 2_000);
        let index = fixture.index(AnnConfig {
            ef_search: 96,
            ..small()
        });
        index.refresh(MODEL, 384).unwrap();
        let (mut hits, mut total) = (0, 0);
        for _ in 0..60 {
            let query = corpus.draw();
            let exact = fixture
                .store
                .nearest(&everywhere(), MODEL, &query, 10)
                .unwrap();
            let approximate = index.nearest(&everywhere(), MODEL, &query, 10).unwrap();
            assert_eq!(approximate.len(), 10);
            // Scores come from the stored vectors, so a shared id has the exact score.
            for (id, score) in &approximate {
                if let Some((_, exact_score)) = exact.iter().find(|(e, _)| e == id) {
                    assert_eq!(score, exact_score);
                }
            }
            hits += ids(&approximate)
                .iter()
                .filter(|id| ids(&exact).contains(id))
                .count();
            total += 10;
        }
        let recall = hits as f64 / total as f64;
        assert!(recall >= 0.98, "recall@10 {recall}");
        assert_eq!(index.stats().approximate_queries, 60);
        assert_eq!(index.stats().exact_queries, 0);
    }

    #[test]
    fn more_concurrent_queries_than_search_contexts_wait_for_one_and_all_answer() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(23, 48, 10);
        fixture.fill(&mut corpus, 400);
        let index = fixture.index(small());
        index.refresh(MODEL, 48).unwrap();
        let snapshot = index.model(MODEL, 48).snapshot().unwrap();
        let queries: Vec<Vec<f32>> = (0..SEARCH_CONTEXTS * 3).map(|_| corpus.draw()).collect();
        let expected: Vec<Vec<MemoryId>> = queries
            .iter()
            .map(|q| ids(&index.nearest(&everywhere(), MODEL, q, 10).unwrap()))
            .collect();

        // Every context taken: a query waits instead of failing, and runs once one is free.
        let held: Vec<SearchContext<'_>> =
            (0..SEARCH_CONTEXTS).map(|_| snapshot.context()).collect();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let (index, query) = (&index, &queries[0]);
            scope.spawn(move || {
                let found = index.nearest(&everywhere(), MODEL, query, 10).unwrap();
                sender.send(ids(&found)).unwrap();
            });
            assert!(
                receiver
                    .recv_timeout(std::time::Duration::from_millis(200))
                    .is_err(),
                "a query ran with no free context"
            );
            drop(held);
            assert_eq!(receiver.recv().unwrap(), expected[0]);
        });

        // Three times as many threads as contexts, all at once: each gets its own answer.
        let start = std::sync::Barrier::new(queries.len());
        std::thread::scope(|scope| {
            for (query, want) in queries.iter().zip(&expected) {
                let (index, start) = (&index, &start);
                scope.spawn(move || {
                    start.wait();
                    for _ in 0..5 {
                        let found = index.nearest(&everywhere(), MODEL, query, 10).unwrap();
                        assert_eq!(&ids(&found), want);
                    }
                });
            }
        });
        assert_eq!(*snapshot.free_contexts.lock().unwrap(), SEARCH_CONTEXTS);
        assert_eq!(index.stats().exact_queries, 0);
    }

    #[test]
    fn a_small_store_is_scanned_exactly_and_builds_nothing() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(3, 48, 5);
        fixture.fill(&mut corpus, 80);
        let index = fixture.index(small());
        let query = corpus.draw();
        let found = index.nearest(&everywhere(), MODEL, &query, 5).unwrap();
        index.wait_idle(MODEL, 48);
        assert_eq!(
            found,
            fixture
                .store
                .nearest(&everywhere(), MODEL, &query, 5)
                .unwrap()
        );
        let stats = index.stats();
        assert_eq!((stats.builds, stats.exact_queries), (0, 1));
        assert!(!index.snapshot_path(MODEL, 48).unwrap().exists());
    }

    #[test]
    fn vectors_written_after_the_snapshot_are_found_without_a_rebuild() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(5, 48, 10);
        let stored = fixture.fill(&mut corpus, 400);
        let index = fixture.index(small());
        index.refresh(MODEL, 48).unwrap();

        let query = corpus.draw();
        let fresh = fixture.add(query.clone(), "default", "p0");
        // An old memory re-embedded after the build (its seq is inside the snapshot's
        // range, so only the change log shows it is new): its new vector must count.
        let (old, _) = stored[7];
        let near_query: Vec<f32> = query.iter().map(|x| x * 0.999).collect();
        fixture.store.with_connection(|conn| {
            conn.execute(
                "UPDATE memory_embeddings SET vector = ?1
                 WHERE memory_seq = (SELECT seq FROM memories WHERE id = ?2)",
                params![vectors::encode(&near_query), old.to_string()],
            )
            .unwrap()
        });

        let found = index.nearest(&everywhere(), MODEL, &query, 3).unwrap();
        assert_eq!(ids(&found)[..2], [fresh, old]);
        assert!(found[0].1 > 0.999);
        let stats = index.stats();
        assert_eq!((stats.builds, stats.approximate_queries), (1, 1));

        // That query found a tail and started adding it to the graph in the background:
        // both vectors are in it now, the old one at its new place, and nothing is left
        // to scan exactly.
        index.wait_idle(MODEL, 48);
        let state = index.model(MODEL, 48);
        let snapshot = state.snapshot().unwrap();
        assert_eq!(index.stats().absorbed, 2);
        assert_eq!((snapshot.len(), snapshot.seqs.len()), (401, 400));
        assert_eq!(
            index
                .tail_len(&state, MODEL, 48, snapshot.covered())
                .unwrap(),
            0
        );
        let seq_of = |id: MemoryId| -> i64 {
            fixture.store.with_connection(|conn| {
                conn.query_row(
                    "SELECT seq FROM memories WHERE id = ?1",
                    [id.to_string()],
                    |r| r.get(0),
                )
                .unwrap()
            })
        };
        let mut point = vec![0i8; 48];
        assert_eq!(
            snapshot
                .graph()
                .get(seq_of(old) as u64, &mut point)
                .unwrap(),
            1
        );
        assert_eq!(point, quantize(&near_query));
        assert!(snapshot.graph().contains(seq_of(fresh) as u64));
        // The graph alone finds them now (same direction: either may come first).
        let mut from_graph = snapshot.candidates(&query).unwrap()[..2].to_vec();
        from_graph.sort_unstable();
        assert_eq!(from_graph, [seq_of(old), seq_of(fresh)]);
        let again = index.nearest(&everywhere(), MODEL, &query, 3).unwrap();
        assert_eq!(again, found);
        assert_eq!(index.stats().builds, 1);
    }

    #[test]
    fn forgotten_purged_and_other_workspace_memories_are_never_returned() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(9, 48, 10);
        let stored = fixture.fill(&mut corpus, 400);
        let (forgotten, forgotten_vector) = stored[10].clone();
        let (purged, purged_vector) = stored[20].clone();
        let elsewhere_vector = corpus.draw();
        let elsewhere = fixture.add(elsewhere_vector.clone(), "other", "p0");
        let index = fixture.index(small());
        index.refresh(MODEL, 48).unwrap();

        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let workspace = Workspace::default();
        assert!(
            fixture
                .store
                .forget(&workspace, forgotten, now, &Actor::cli())
                .unwrap()
        );
        assert!(
            fixture
                .store
                .purge(&workspace, purged, now, &Actor::cli())
                .unwrap()
                .is_some()
        );
        // One more in the other workspace, in the fresh tail this time.
        let tail_vector = corpus.draw();
        let tail_elsewhere = fixture.add(tail_vector.clone(), "other", "p0");

        for query in [
            &forgotten_vector,
            &purged_vector,
            &elsewhere_vector,
            &tail_vector,
        ] {
            let found = ids(&index.nearest(&everywhere(), MODEL, query, 10).unwrap());
            assert_eq!(found.len(), 10);
            for banned in [forgotten, purged, elsewhere, tail_elsewhere] {
                assert!(!found.contains(&banned), "{banned} came back");
            }
        }
        // The other workspace still sees its own.
        let theirs = MemoryFilter::workspace(Workspace::new("other").unwrap());
        let found = ids(&index.nearest(&theirs, MODEL, &tail_vector, 10).unwrap());
        assert_eq!(found, [tail_elsewhere, elsewhere]);
        assert_eq!(index.stats().builds, 1);
    }

    #[test]
    fn filters_are_respected_and_a_selective_one_falls_back_to_the_exact_scan() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(13, 48, 10);
        let stored = fixture.fill(&mut corpus, 400);
        let rare = [
            fixture.add(corpus.draw(), "default", "rare"),
            fixture.add(corpus.draw(), "default", "rare"),
        ];
        // Superseded: its validity ended, so a recall "as of now" must not see it.
        let (superseded, superseded_vector) = stored[3].clone();
        fixture.store.with_connection(|conn| {
            conn.execute(
                "UPDATE memories SET valid_to = 1700000500000000 WHERE id = ?1",
                [superseded.to_string()],
            )
            .unwrap()
        });
        let index = fixture.index(small());
        index.refresh(MODEL, 48).unwrap();

        let project = MemoryFilter {
            project: Some("p2".into()),
            ..everywhere()
        };
        let query = corpus.draw();
        let found = index.nearest(&project, MODEL, &query, 10).unwrap();
        assert_eq!(found.len(), 10);
        for (id, _) in &found {
            let memory = fixture
                .store
                .get(&Workspace::default(), *id)
                .unwrap()
                .unwrap();
            assert_eq!(memory.project.as_deref(), Some("p2"));
        }
        let exact = fixture.store.nearest(&project, MODEL, &query, 10).unwrap();
        assert_eq!(ids(&found), ids(&exact));
        assert_eq!(index.stats().exact_queries, 0);

        let now = MemoryFilter {
            valid_at: Some(Timestamp::from_second(1_800_000_000).unwrap()),
            ..everywhere()
        };
        let found = ids(&index.nearest(&now, MODEL, &superseded_vector, 10).unwrap());
        assert!(!found.contains(&superseded));
        assert_eq!(found.len(), 10);

        // Two matches among 402: the graph's 64 candidates hold too few of them, so the
        // answer comes from the exact scan, and it is complete.
        let rare_filter = MemoryFilter {
            project: Some("rare".into()),
            ..everywhere()
        };
        let found = ids(&index.nearest(&rare_filter, MODEL, &query, 10).unwrap());
        assert_eq!(found.len(), 2);
        assert!(rare.iter().all(|id| found.contains(id)));
        assert_eq!(index.stats().exact_queries, 1);
    }

    #[test]
    fn a_saved_snapshot_is_loaded_on_restart_and_a_corrupt_one_is_rebuilt() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(17, 48, 10);
        fixture.fill(&mut corpus, 300);
        let first = fixture.index(small());
        first.refresh(MODEL, 48).unwrap();
        let path = first.snapshot_path(MODEL, 48).unwrap();
        assert!(path.exists());
        assert_eq!(first.stats().builds, 1);
        let query = corpus.draw();
        let before = first.nearest(&everywhere(), MODEL, &query, 10).unwrap();

        // A restart: the file is loaded, nothing is built, answers are the same.
        let second = fixture.index(small());
        second.refresh(MODEL, 48).unwrap();
        assert_eq!((second.stats().loads, second.stats().builds), (1, 0));
        assert_eq!(
            second.nearest(&everywhere(), MODEL, &query, 10).unwrap(),
            before
        );
        assert_eq!(second.stats().approximate_queries, 1);

        // One flipped byte deep in the graph: the checksum rejects it and it is rebuilt.
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let third = fixture.index(small());
        third.refresh(MODEL, 48).unwrap();
        let stats = third.stats();
        assert_eq!((stats.rejected_files, stats.loads, stats.builds), (1, 0, 1));
        assert_eq!(
            third.nearest(&everywhere(), MODEL, &query, 10).unwrap(),
            before
        );
        // The rebuilt snapshot replaced the corrupt file.
        let fourth = fixture.index(small());
        fourth.refresh(MODEL, 48).unwrap();
        assert_eq!((fourth.stats().loads, fourth.stats().builds), (1, 0));

        // A truncated file is no better.
        std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
        let fifth = fixture.index(small());
        fifth.refresh(MODEL, 48).unwrap();
        assert_eq!((fifth.stats().rejected_files, fifth.stats().builds), (1, 1));
    }

    #[test]
    fn a_snapshot_from_another_database_is_not_trusted() {
        let mut ours = Fixture::new();
        let mut theirs = Fixture::new();
        ours.fill(&mut Corpus::new(1, 48, 10), 300);
        // More changes than ours, so only the sampled vectors can tell the files apart.
        theirs.fill(&mut Corpus::new(2, 48, 10), 250);
        let foreign = theirs.index(small());
        foreign.refresh(MODEL, 48).unwrap();
        std::fs::create_dir_all(&ours.cache).unwrap();
        std::fs::copy(
            foreign.snapshot_path(MODEL, 48).unwrap(),
            ours.index(small()).snapshot_path(MODEL, 48).unwrap(),
        )
        .unwrap();

        let index = ours.index(small());
        index.refresh(MODEL, 48).unwrap();
        let stats = index.stats();
        assert_eq!((stats.rejected_files, stats.loads, stats.builds), (1, 0, 1));
    }

    #[test]
    fn the_background_rebuild_swaps_in_once_the_tail_grows() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(21, 48, 10);
        fixture.fill(&mut corpus, 300);
        let index = fixture.index(AnnConfig {
            exact_below: 200,
            rebuild_tail: 50,
            ..small()
        });
        // Past the threshold with no snapshot: answered exactly while a build starts.
        let query = corpus.draw();
        let first = index.nearest(&everywhere(), MODEL, &query, 10).unwrap();
        assert_eq!(index.stats().exact_queries, 1);
        index.wait_idle(MODEL, 48);
        assert_eq!(index.stats().builds, 1);

        let added: Vec<MemoryId> = (0..60)
            .map(|_| fixture.add(corpus.draw(), "default", "p1"))
            .collect();
        let target = fixture.add(query.clone(), "default", "p1");
        // Old snapshot + a tail past the threshold: still answered, rebuild started.
        let during = index.nearest(&everywhere(), MODEL, &query, 10).unwrap();
        assert_eq!(during[0].0, target);
        assert!(first.len() == 10 && index.stats().approximate_queries == 1);
        index.wait_idle(MODEL, 48);
        assert_eq!(index.stats().builds, 2);

        // The new snapshot covers the added vectors: the tail is empty again.
        let state = index.model(MODEL, 48);
        let snapshot = state.snapshot().unwrap();
        assert_eq!(snapshot.len(), 361);
        assert_eq!(
            index
                .tail_len(&state, MODEL, 48, snapshot.covered())
                .unwrap(),
            0
        );
        let after = index.nearest(&everywhere(), MODEL, &query, 10).unwrap();
        assert_eq!(after[0].0, target);
        let exact = ids(&fixture
            .store
            .nearest(&everywhere(), MODEL, &query, 10)
            .unwrap());
        let overlap = ids(&after).iter().filter(|id| exact.contains(id)).count();
        assert!(overlap >= 9, "{overlap} of the exact top 10");
        // The new snapshot holds the added vectors themselves, not only the tail.
        let in_graph: HashSet<i64> = snapshot.seqs.iter().copied().collect();
        let added_seqs: Vec<i64> = fixture.store.with_connection(|conn| {
            added
                .iter()
                .map(|id| {
                    conn.query_row(
                        "SELECT seq FROM memories WHERE id = ?1",
                        [id.to_string()],
                        |r| r.get(0),
                    )
                    .unwrap()
                })
                .collect()
        });
        assert!(added_seqs.iter().all(|seq| in_graph.contains(seq)));
    }
}
