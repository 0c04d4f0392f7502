//! Building a snapshot from every vector of a model, and growing it with the vectors
//! written since, on a background job that owns what it needs.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use rusqlite::{Connection, params};
use usearch::Index;

use super::graph::{GRAPH_CONTEXTS, Points, Snapshot, graph_error, graph_options, quantize};
use super::{AnnConfig, Counters, ModelIndex, Staged};
use crate::{SqliteStore, SqliteStoreError, vectors};

/// A load-or-build of one model's snapshot, owning what it needs to run on its own thread.
pub(super) struct Job {
    pub(super) store: Arc<SqliteStore>,
    pub(super) path: Option<PathBuf>,
    pub(super) model: String,
    pub(super) dimension: usize,
    pub(super) config: AnnConfig,
    pub(super) counters: Arc<Counters>,
}

/// A tail's vectors by seq, quantized, each once.
pub(super) type TailPoints = Vec<(i64, Vec<i8>)>;

/// Graphs this small are built on one thread (see [`Job::build`]).
pub(super) const PARALLEL_BUILD_FROM: usize = 10_000;

impl Job {
    pub(super) fn run(&self, state: &ModelIndex) -> Result<(), SqliteStoreError> {
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
        // The staged points answer only while this build runs, also when it fails.
        let _unstage = Unstage(state);
        let snapshot = self.build(Some(state))?;
        self.save(&snapshot);
        *state
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(snapshot));
        Ok(())
    }

    /// Adds the vectors written after the current snapshot's change number to its graph
    /// (each at most once, as it is now) and moves the number past them.
    pub(super) fn absorb(&self, state: &ModelIndex) -> Result<(), SqliteStoreError> {
        let Some(snapshot) = state.snapshot() else {
            return Ok(());
        };
        let after = snapshot.covered();
        let (through, points) = self.read_tail(after)?;
        if through <= after {
            return Ok(());
        }
        // A tail of more than a few vectors is compared from memory while it is added to
        // the graph (one thread, ~1 ms a vector at 100k), not read out of SQLite by every
        // query meanwhile.
        let _unstage = (points.len() >= STAGE_TAIL_FROM).then(|| {
            state.set_staged_tail(Some(Arc::new(Staged::of_tail(
                through,
                &points,
                self.dimension,
            ))));
            UnstageTail(state)
        });
        snapshot.absorb(&points, through)?;
        self.counters
            .absorbed
            .fetch_add(points.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// The vectors written after change number `after` (each once, as it is now),
    /// quantized, and the latest change number they are as of.
    pub(super) fn read_tail(&self, after: i64) -> Result<(i64, TailPoints), SqliteStoreError> {
        self.read_at_once(|conn| {
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
        })
    }

    /// Runs `read` in one read transaction (so the change number and the vectors it reads
    /// agree) on a connection of its own when the store is a file, so a build's long read
    /// does not hold the store's connection; on the store's otherwise.
    pub(super) fn read_at_once<T>(
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
    pub(super) fn last_change(&self, conn: &Connection) -> Result<i64, SqliteStoreError> {
        Ok(conn.query_row(
            "SELECT coalesce(max(change), 0) FROM vector_changes
             WHERE model = ?1 AND dimension = ?2",
            params![self.model, self.dimension as i64],
            |row| row.get(0),
        )?)
    }

    /// Runs `f` on a read-only connection of its own when the store is a file (see
    /// [`Job::read_at_once`]); on the store's otherwise.
    pub(super) fn with_connection<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, SqliteStoreError>,
    ) -> Result<T, SqliteStoreError> {
        match self.store.file_path() {
            Some(path) => f(&crate::readers::open_for_build(path)?),
            None => f(&self.store.read()),
        }
    }

    /// Builds a snapshot of every vector; with `stage`, publishes them there as soon as
    /// they are read, for queries to use until the graph is ready.
    pub(super) fn build(&self, stage: Option<&ModelIndex>) -> Result<Snapshot, SqliteStoreError> {
        let started = Instant::now();
        let staged = Arc::new(self.read_every_point()?);
        if let Some(state) = stage {
            // Only ahead of the snapshot queries have: an older build must not go back.
            if state
                .snapshot()
                .is_none_or(|s| s.covered() < staged.covered)
            {
                state.set_staged(Some(staged.clone()));
            }
        }
        let (covered, seqs) = (staged.covered, staged.points.seqs().to_vec());
        let count = seqs.len();
        let graph = Index::new(&graph_options(self.dimension, &self.config))
            .map_err(|e| graph_error("creating", e))?;
        // Small graphs (tests) are built on one thread, so a rebuild of the same vectors
        // gives the same graph; large ones on every core but one, left to the queries
        // the staged points answer meanwhile.
        let threads = if count < PARALLEL_BUILD_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
        };
        graph
            .reserve_capacity_and_threads(count, threads.max(GRAPH_CONTEXTS))
            .map_err(|e| graph_error("sizing", e))?;
        let (graph_ref, seqs_ref, points_ref) = (&graph, &seqs, &staged.points);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|first| {
                    scope.spawn(move || {
                        for i in (first..count).step_by(threads) {
                            let point = points_ref.point(i, self.dimension);
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
        // The staged copy is still read by queries: the snapshot takes its own.
        Snapshot::with_points(covered, seqs, graph, staged.points.clone())
    }
}

impl Job {
    /// Every vector of the model and the change number they are as of, read in one
    /// transaction and quantized into one flat array (a quarter of the f32s, no
    /// allocation a vector).
    pub(super) fn read_every_point(&self) -> Result<Staged, SqliteStoreError> {
        self.read_at_once(|conn| {
            let covered = self.last_change(conn)?;
            let mut statement = conn.prepare(
                "SELECT memory_seq, vector FROM memory_embeddings
                     WHERE model = ?1 AND dimension = ?2",
            )?;
            let mut rows = statement.query(params![self.model, self.dimension as i64])?;
            let (mut seqs, mut points) = (Vec::new(), Vec::new());
            while let Some(row) = rows.next()? {
                seqs.push(row.get::<_, i64>(0)?);
                points.extend(quantize(&vectors::decode(vectors::blob(row, 1)?)));
            }
            Ok(Staged {
                covered,
                points: Points::from_flat(seqs, points, self.dimension),
            })
        })
    }
}

impl Staged {
    /// A tail read by [`Job::read_tail`], as of change number `through`.
    pub(super) fn of_tail(through: i64, points: &[(i64, Vec<i8>)], dimension: usize) -> Self {
        let seqs = points.iter().map(|(seq, _)| *seq).collect();
        let flat = points
            .iter()
            .flat_map(|(_, point)| point.iter().copied())
            .collect();
        Self {
            covered: through,
            points: Points::from_flat(seqs, flat, dimension),
        }
    }
}

/// Tails this long or longer are staged while they are absorbed (shorter ones are read
/// exactly at about the cost of comparing them).
pub(super) const STAGE_TAIL_FROM: usize = 256;

/// Takes an absorb's staged tail down when it ends (the graph covers it by then).
struct UnstageTail<'a>(&'a ModelIndex);

impl Drop for UnstageTail<'_> {
    fn drop(&mut self) {
        self.0.set_staged_tail(None);
    }
}

/// Takes a build's staged points down when it ends (its snapshot is published first).
struct Unstage<'a>(&'a ModelIndex);

impl Drop for Unstage<'_> {
    fn drop(&mut self) {
        self.0.set_staged(None);
    }
}

pub(super) fn count_after(
    conn: &Connection,
    job: &Job,
    covered: i64,
) -> Result<usize, SqliteStoreError> {
    Ok(conn
        .query_row(
            "SELECT count(*) FROM vector_changes
         WHERE model = ?1 AND dimension = ?2 AND change > ?3",
            params![job.model, job.dimension as i64, covered],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as usize)?)
}

#[cfg(test)]
mod tests {
    use levh_core::{MemoryId, VectorIndex};

    use super::*;
    use crate::ann::test_support::*;

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
        // Past the threshold with no snapshot: a build starts, and the query is answered
        // exactly — or from the build's staged points, if it has read them already.
        let query = corpus.draw();
        let first = index.nearest(&everywhere(), MODEL, &query, 10).unwrap();
        let stats = index.stats();
        assert_eq!(stats.exact_queries + stats.staged_queries, 1, "{stats:?}");
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
