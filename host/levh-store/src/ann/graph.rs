//! A snapshot's graph: usearch's HNSW over quantized vectors (keys are memory seqs),
//! the change number it covers, and the search contexts queries share.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};

use rustc_hash::{FxHashMap, FxHashSet};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::AnnConfig;
use crate::SqliteStoreError;

/// A vector as the graph holds it: a byte a dimension, scaled so the largest component is
/// ±127 — a quarter of the memory, so a query's thousands of distances read a quarter of
/// the bytes. The graph compares them by cosine, which the per-vector scale does not
/// change. It only picks candidates; every one is re-scored exactly against the stored
/// vector, so the small error moves a candidate near the edge of the over-fetch at most.
pub(super) fn quantize(vector: &[f32]) -> Vec<i8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return vec![0; vector.len()];
    }
    vector
        .iter()
        .map(|x| (x * 127.0 / largest).round() as i8)
        .collect()
}

/// The Euclidean length of a quantized vector.
fn norm(vector: &[i8]) -> f32 {
    (vector
        .iter()
        .map(|x| i32::from(*x) * i32::from(*x))
        .sum::<i32>() as f32)
        .sqrt()
}

/// Searches one graph runs at once. usearch keeps a scratch context per concurrent
/// search or insert, reserved up front, and one that finds none free fails: more
/// searches wait, and one more context is reserved for the one job adding to the graph.
pub(super) const SEARCH_CONTEXTS: usize = 16;

pub(super) const GRAPH_CONTEXTS: usize = SEARCH_CONTEXTS + 1;

/// A graph's shape: the model's dimension and the configured link counts; cosine over
/// bytes ([`quantize`]).
pub(super) fn graph_options(dimension: usize, config: &AnnConfig) -> IndexOptions {
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

pub(super) fn graph_error(doing: &'static str, error: impl std::fmt::Display) -> SqliteStoreError {
    SqliteStoreError::VectorIndex {
        doing,
        cause: error.to_string(),
    }
}

/// A graph (keys are memory seqs) and the change number it covers: built or loaded,
/// then grown by [`Snapshot::absorb`].
pub(super) struct Snapshot {
    pub(super) covered: AtomicI64,
    /// The graph's keys when it was built or loaded, saved with it: a loaded file's
    /// sample check compares some of them with the database.
    pub(super) seqs: Vec<i64>,
    /// Searches and inserts share it (usearch allows both at once); growing its capacity
    /// takes it alone.
    pub(super) graph: RwLock<Index>,
    /// Free search contexts ([`SEARCH_CONTEXTS`]); a query waits on `freed` for one.
    pub(super) free_contexts: Mutex<usize>,
    pub(super) freed: Condvar,
    /// A copy of the graph's quantized points, one after another, for
    /// [`Self::scan_among`]: reading 10k points out of usearch one by one (`get`) cost
    /// more than comparing them. A byte a dimension: 38 MB at 100k 384-d vectors.
    points: RwLock<Points>,
    /// By (workspace, project): where the project's points are ([`Self::scan_among`]).
    slots: Mutex<FxHashMap<(String, String), KeptSlots>>,
}

/// Projects whose slot lists are kept at most; past it they start over (a store with
/// more projects than this scoped by turns pays the lookups again, as before).
const KEPT_SLOT_LISTS: usize = 256;

/// A project's slot list, valid while its seq set and the points are the ones it was
/// made from (a set is replaced, not changed, when the project changes; points are only
/// added or overwritten in place, so an unchanged count means unchanged slots).
struct KeptSlots {
    allowed: Arc<FxHashSet<i64>>,
    points: usize,
    slots: Arc<Vec<u32>>,
}

/// Quantized points laid end to end with their lengths, the seq of each and where each
/// seq's is: a graph's copy of its points (see [`Snapshot`]), and a build's vectors before
/// its graph exists ([`super::Staged`]).
#[derive(Default, Clone)]
pub(super) struct Points {
    data: Vec<i8>,
    norms: Vec<f32>,
    seqs: Vec<i64>,
    slot: FxHashMap<i64, usize>,
}

impl Points {
    /// The points of `seqs`, one after another in `data` (`dimension` bytes each).
    pub(super) fn from_flat(seqs: Vec<i64>, data: Vec<i8>, dimension: usize) -> Self {
        let norms = data.chunks_exact(dimension.max(1)).map(norm).collect();
        let slot = seqs.iter().enumerate().map(|(n, &seq)| (seq, n)).collect();
        Self {
            data,
            norms,
            seqs,
            slot,
        }
    }

    /// The seqs of the points, in their order.
    pub(super) fn seqs(&self) -> &[i64] {
        &self.seqs
    }

    /// How many points there are.
    pub(super) fn len(&self) -> usize {
        self.seqs.len()
    }

    /// The `n`th point, `dimension` bytes.
    pub(super) fn point(&self, n: usize, dimension: usize) -> &[i8] {
        &self.data[n * dimension..(n + 1) * dimension]
    }

    fn set(&mut self, seq: i64, point: &[i8]) {
        match self.slot.get(&seq) {
            Some(&n) => {
                self.data[n * point.len()..(n + 1) * point.len()].copy_from_slice(point);
                self.norms[n] = norm(point);
            }
            None => {
                self.slot.insert(seq, self.norms.len());
                self.data.extend_from_slice(point);
                self.norms.push(norm(point));
                self.seqs.push(seq);
            }
        }
    }

    /// The seqs among `allowed` whose points are nearest to `query`, nearest first (up
    /// to `take`), by comparing each allowed point: linear in `allowed`, with no walk.
    /// A seq without a point here (written after these points were read, or without a
    /// vector) is skipped: the caller scans what came after exactly.
    pub(super) fn nearest_among(
        &self,
        query: &[f32],
        allowed: &FxHashSet<i64>,
        take: usize,
    ) -> Vec<i64> {
        let query = quantize(query);
        let query_norm = norm(&query);
        let scored = allowed.iter().filter_map(|&seq| {
            let n = *self.slot.get(&seq)?;
            Some((self.cosine(&query, query_norm, n), seq))
        });
        best(scored, take)
    }

    /// Where the points of `allowed` are, in memory order (seqs without a point here
    /// are left out, as [`Self::nearest_among`] skips them).
    pub(super) fn slots_of(&self, allowed: &FxHashSet<i64>) -> Vec<u32> {
        let mut slots: Vec<u32> = allowed
            .iter()
            .filter_map(|seq| self.slot.get(seq).map(|&n| n as u32))
            .collect();
        slots.sort_unstable();
        slots
    }

    /// [`Self::nearest_among`] for the points at `slots` ([`Self::slots_of`]).
    pub(super) fn nearest_at(&self, query: &[f32], slots: &[u32], take: usize) -> Vec<i64> {
        let query = quantize(query);
        let query_norm = norm(&query);
        let scored = slots.iter().map(|&n| {
            let n = n as usize;
            (self.cosine(&query, query_norm, n), self.seqs[n])
        });
        best(scored, take)
    }

    /// The seqs of the points nearest to `query` of them all, nearest first (up to
    /// `take`): every point compared, a byte a dimension (4 ms for 100k 384-d points on
    /// these machines) — what answers while a graph is being built.
    pub(super) fn nearest(&self, query: &[f32], take: usize) -> Vec<i64> {
        let query = quantize(query);
        let query_norm = norm(&query);
        let scored = (0..self.len()).map(|n| (self.cosine(&query, query_norm, n), self.seqs[n]));
        best(scored, take)
    }

    fn cosine(&self, query: &[i8], query_norm: f32, n: usize) -> f32 {
        let point = self.point(n, query.len());
        dot(query, point) as f32 / (query_norm * self.norms[n]).max(f32::MIN_POSITIVE)
    }
}

/// The seqs of the `take` highest scores, highest first (ties by seq, so answers repeat).
fn best(scored: impl Iterator<Item = (f32, i64)>, take: usize) -> Vec<i64> {
    let mut scored: Vec<(f32, i64)> = scored.collect();
    let best_first = |a: &(f32, i64), b: &(f32, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if scored.len() > take {
        scored.select_nth_unstable_by(take, best_first);
        scored.truncate(take);
    }
    scored.sort_unstable_by(best_first);
    scored.into_iter().map(|(_, seq)| seq).collect()
}

/// The dot product of two quantized vectors: with AVX2 where the processor has it.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `dot_avx2` only needs AVX2, which the processor was just found to have.
        #[allow(unsafe_code)]
        return unsafe { dot_avx2(a, b) };
    }
    dot_lanes(a, b)
}

/// [`dot_lanes`] compiled for AVX2: the release build targets the x86-64 baseline
/// (SSE2), where widening bytes to 32 bits takes several instructions per 16 bytes; with
/// AVX2 it is 32 bytes in a few, and the scan of a build's staged points (every point,
/// see `Points::nearest`) takes half the time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_lanes(a, b)
}

/// The dot product in lanes the compiler turns into SIMD.
#[inline(always)]
fn dot_lanes(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let mut lanes = [0i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let rest: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for k in 0..LANES {
            lanes[k] += i32::from(x[k]) * i32::from(y[k]);
        }
    }
    lanes.iter().sum::<i32>() + rest
}

impl Snapshot {
    /// A graph holding the vectors of `seqs` (a loaded file: its points are read back out
    /// of the graph), made ready for concurrent searches.
    pub(super) fn new(
        covered: i64,
        seqs: Vec<i64>,
        graph: Index,
    ) -> Result<Self, SqliteStoreError> {
        let mut points = Points::default();
        let mut point = vec![0i8; graph.dimensions()];
        for &seq in &seqs {
            if graph
                .get(seq as u64, &mut point)
                .map_err(|e| graph_error("reading", e))?
                > 0
            {
                points.set(seq, &point);
            }
        }
        Self::with_points(covered, seqs, graph, points)
    }

    /// A graph built from `points` (whose seqs are `seqs`), made ready for concurrent
    /// searches.
    pub(super) fn with_points(
        covered: i64,
        seqs: Vec<i64>,
        graph: Index,
        points: Points,
    ) -> Result<Self, SqliteStoreError> {
        graph
            .reserve_capacity_and_threads(seqs.len(), GRAPH_CONTEXTS)
            .map_err(|e| graph_error("sizing", e))?;
        Ok(Self {
            covered: AtomicI64::new(covered),
            seqs,
            graph: RwLock::new(graph),
            free_contexts: Mutex::new(SEARCH_CONTEXTS),
            freed: Condvar::new(),
            points: RwLock::new(points),
            slots: Mutex::default(),
        })
    }

    /// The change number the graph holds every vector up to.
    pub(super) fn covered(&self) -> i64 {
        self.covered.load(Ordering::Acquire)
    }

    /// How many vectors the graph holds.
    pub(super) fn len(&self) -> usize {
        self.graph().size()
    }

    pub(super) fn graph(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.graph.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Memory seqs of the graph's nearest points, nearest first (up to `ef_search`).
    pub(super) fn candidates(&self, query: &[f32]) -> Result<Vec<i64>, SqliteStoreError> {
        let _context = self.context();
        let graph = self.graph();
        let found = graph
            .search(&quantize(query), graph.expansion_search())
            .map_err(|e| graph_error("searching", e))?;
        Ok(found.keys.into_iter().map(|key| key as i64).collect())
    }

    /// Memory seqs of the graph's nearest points among `allowed`, nearest first (up to
    /// `ef_search`): the graph walked with the filter applied as it goes, so a project
    /// holding a tenth of the store still yields a full page of candidates.
    pub(super) fn candidates_among(
        &self,
        query: &[f32],
        allowed: &FxHashSet<i64>,
    ) -> Result<Vec<i64>, SqliteStoreError> {
        let _context = self.context();
        let graph = self.graph();
        let found = graph
            .filtered_search(&quantize(query), graph.expansion_search(), |key| {
                allowed.contains(&(key as i64))
            })
            .map_err(|e| graph_error("searching", e))?;
        Ok(found.keys.into_iter().map(|key| key as i64).collect())
    }

    /// Memory seqs of the graph's points among `allowed` nearest to `query`, nearest
    /// first (up to `take`), by comparing each allowed point's quantized vector (the
    /// copy in `points`): linear in `allowed`, with no walk. For a small allowed set
    /// (one project of many) this is several times cheaper than [`Self::candidates_among`],
    /// whose walk visits about ten points for each one it keeps when a tenth pass.
    ///
    /// With a `project` (whose `allowed` is the store's kept set of its seqs), where its
    /// points are is kept between queries until the set or the points change: looking
    /// each seq up was a third of a scoped query at 100k (a profile of the scale bench's
    /// scoped recall: 21% finding the slots, 39% comparing).
    pub(super) fn scan_among(
        &self,
        query: &[f32],
        allowed: &Arc<FxHashSet<i64>>,
        project: Option<(&str, &str)>,
        take: usize,
    ) -> Result<Vec<i64>, SqliteStoreError> {
        let points = self.points.read().unwrap_or_else(PoisonError::into_inner);
        let Some((workspace, project)) = project else {
            return Ok(points.nearest_among(query, allowed, take));
        };
        let slots = {
            let mut kept = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (workspace.to_owned(), project.to_owned());
            match kept.get(&key) {
                Some(k) if Arc::ptr_eq(&k.allowed, allowed) && k.points == points.len() => {
                    k.slots.clone()
                }
                _ => {
                    let slots = Arc::new(points.slots_of(allowed));
                    if kept.len() >= KEPT_SLOT_LISTS {
                        kept.clear();
                    }
                    kept.insert(
                        key,
                        KeptSlots {
                            allowed: allowed.clone(),
                            points: points.len(),
                            slots: slots.clone(),
                        },
                    );
                    slots
                }
            }
        };
        Ok(points.nearest_at(query, &slots, take))
    }

    /// Adds vectors written after the graph was built (a re-written one replaces its old
    /// point), then covers `through`. Searches go on meanwhile; they scan anything after
    /// the `covered` they read exactly, so a vector is never missed while it is added.
    pub(super) fn absorb(
        &self,
        points: &[(i64, Vec<i8>)],
        through: i64,
    ) -> Result<(), SqliteStoreError> {
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
            self.points
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .set(*seq, point);
        }
        self.covered.fetch_max(through, Ordering::AcqRel);
        Ok(())
    }

    /// Waits for a free search context; it is given back when the guard drops.
    pub(super) fn context(&self) -> SearchContext<'_> {
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

pub(super) struct SearchContext<'a>(pub(super) &'a Snapshot);

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
