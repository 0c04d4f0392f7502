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
//!   the filter leaves fewer than `limit` of them, the query lists the memories the filter
//!   allows and scores those (few) or walks the graph with the filter (many).
//!
//! Snapshots are built (or loaded) on a background thread once a model passes the
//! threshold. A build first reads every vector and publishes them quantized as a
//! **staged** copy ([`Staged`]): until its graph is ready (20 s at 100k on 2 cores) queries
//! compare the staged points instead of reading vectors out of SQLite — right after a bulk
//! import a search scoped to a project of 10k memories took 45–53 ms from SQLite, the
//! staged points a byte a dimension in memory. A query that finds a tail starts a job adding it to the graph (captures
//! one by one: the tail stays a handful of vectors); a tail past
//! [`AnnConfig::rebuild_tail`] (a bulk import) starts a rebuild instead. Queries keep
//! using the old snapshot and the tail meanwhile. Each build is written to
//! `<cache>/<model>-<dimension>.hnsw` (temp file + rename, so processes sharing a store
//! never read half a file); a process starting up loads it instead of rebuilding. A file
//! is never trusted: a wrong header, a payload that does not decode, a change number the
//! database has not reached, or sampled vectors that differ from the database's, and it
//! is rebuilt.
//!
//! Parts: `graph.rs` holds a snapshot's graph and its search contexts, `query.rs`
//! answers a query, `build.rs` builds and grows snapshots on a background job, and
//! `snapshot_file.rs` writes and checks the saved file.

mod build;
mod graph;
mod in_memory;
mod query;
mod snapshot_file;
#[cfg(test)]
mod test_support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use levh_core::StoreError;

use crate::SqliteStore;
use build::Job;
use graph::Snapshot;

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
    /// A query whose filter leaves few of the graph's candidates (recall scoped to one
    /// project) and allows at most this many memories compares each allowed memory's
    /// quantized vector read from the graph; above it, the graph is walked with the
    /// filter. 30k: see `query.rs` for the measurement.
    pub scan_among_at_most: usize,
}

impl Default for AnnConfig {
    fn default() -> Self {
        Self {
            exact_below: 5_000,
            rebuild_tail: 5_000,
            connectivity: 32,
            ef_construction: 128,
            ef_search: 200,
            scan_among_at_most: 30_000,
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
    /// Queries whose filter left too few of the graph's candidates, answered from the
    /// memories the filter allows (their vectors scored, or the graph walked with the
    /// filter) plus the tail.
    pub filtered_queries: u64,
    /// Queries answered from a build's staged points while its graph was being built.
    pub staged_queries: u64,
    /// Queries whose fresh tail was compared from an absorb job's staged copy of it.
    pub staged_tail_queries: u64,
    /// Exact scans (counted in `exact_queries` too) that compared a small store's vectors
    /// in memory (`in_memory.rs`) instead of reading them out of SQLite.
    pub in_memory_queries: u64,
}

#[derive(Debug, Default)]
struct Counters {
    builds: AtomicU64,
    loads: AtomicU64,
    absorbed: AtomicU64,
    rejected_files: AtomicU64,
    approximate_queries: AtomicU64,
    exact_queries: AtomicU64,
    filtered_queries: AtomicU64,
    staged_queries: AtomicU64,
    staged_tail_queries: AtomicU64,
    in_memory_queries: AtomicU64,
}

/// One model's state, shared with its background job.
#[derive(Default)]
struct ModelIndex {
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    job_running: AtomicBool,
    /// Changes counted after the snapshot: (snapshot covered, counted through, count).
    /// Counting only the new changes keeps the per-query check cheap.
    tail: Mutex<(i64, i64, usize)>,
    /// A running build's vectors, before its graph is ready (then `None` again).
    staged: RwLock<Option<Arc<Staged>>>,
    /// The vectors a running absorb job is adding to the snapshot's graph, until it has.
    staged_tail: RwLock<Option<Arc<Staged>>>,
    /// Every vector in memory while there are too few for a graph (the exact scan's).
    in_memory: in_memory::InMemory,
}

impl ModelIndex {
    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn staged(&self) -> Option<Arc<Staged>> {
        self.staged
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_staged(&self, staged: Option<Arc<Staged>>) {
        *self.staged.write().unwrap_or_else(PoisonError::into_inner) = staged;
    }

    fn staged_tail(&self) -> Option<Arc<Staged>> {
        self.staged_tail
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_staged_tail(&self, staged: Option<Arc<Staged>>) {
        *self
            .staged_tail
            .write()
            .unwrap_or_else(PoisonError::into_inner) = staged;
    }
}

/// Every vector of a model up to change number `covered`, quantized as a graph holds
/// them, published by a build as soon as it has read them: queries compare these
/// points until the build's graph replaces them.
struct Staged {
    covered: i64,
    points: graph::Points,
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
            filtered_queries: c.filtered_queries.load(Ordering::Relaxed),
            staged_queries: c.staged_queries.load(Ordering::Relaxed),
            staged_tail_queries: c.staged_tail_queries.load(Ordering::Relaxed),
            in_memory_queries: c.in_memory_queries.load(Ordering::Relaxed),
        }
    }

    /// Where the snapshot of `model` at `dimension` is persisted.
    pub fn snapshot_path(&self, model: &str, dimension: usize) -> Option<PathBuf> {
        self.cache_dir
            .as_ref()
            .map(|dir| dir.join(snapshot_file::file_name(model, dimension)))
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
                    // Said as every store failure is said ("storage error: …").
                    let error = StoreError::from(error);
                    tracing::warn!(%error, model = job.model, ?work, "updating the vector index failed; exact scans continue");
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "could not start the vector index thread");
        }
    }
}

/// What a background job does.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// Load a newer saved snapshot, or build one from every vector.
    Rebuild,
    /// Add the vectors written since the snapshot to its graph.
    Absorb,
}
