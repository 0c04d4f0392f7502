//! Answering a query: graph candidates re-scored against the live rows with the
//! caller's filter, plus the fresh tail scanned exactly; the exact scan when the graph
//! cannot answer.

use std::collections::HashSet;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use levh_core::{MemoryFilter, MemoryId, StoreError, VectorIndex};
use rusqlite::{Connection, params};

use super::{AnnIndex, ModelIndex, Work};
use crate::exact_scan::{exact_nearest, exact_scan};
use crate::{SqliteStoreError, vectors};

impl AnnIndex {
    /// How many vectors of the model were written after `covered` (a snapshot's change
    /// number, 0 without one). Counts only changes not yet counted.
    pub(super) fn tail_len(
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

    pub(super) fn exact(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
        self.counters.exact_queries.fetch_add(1, Ordering::Relaxed);
        let conn = self.store.read();
        // Scoped: only the project's memories are scored (by seq, from its index), not
        // every vector of the store — at 3k memories in seven projects a scoped search's
        // scan took most of its 3.5 ms over REST.
        let allowed = match &filter.project {
            Some(project) => Some(self.store.project_seqs.get(
                &conn,
                &filter.workspace,
                project,
            )?),
            None => None,
        };
        if limit > 0 && !query.is_empty() {
            let state = self.model(model, query.len());
            if let Some(ranked) = state.in_memory.ranked(
                &conn,
                model,
                query,
                allowed.as_deref(),
                self.config.exact_below,
            )? {
                self.counters
                    .in_memory_queries
                    .fetch_add(1, Ordering::Relaxed);
                return in_rank_order(&conn, filter, model, query, &ranked, limit);
            }
        }
        if let Some(allowed) = allowed {
            let seqs: Vec<i64> = allowed.iter().copied().collect();
            let mut top = vectors::TopK::new(limit);
            score_candidates(&conn, filter, model, query, &seqs, &mut top)?;
            return Ok(top.into_sorted());
        }
        exact_nearest(&conn, filter, model, query, limit)
    }
}

/// The best `limit` of `ranked` (memory seqs, best first by the score of the vector the
/// in-memory copy holds) that pass `filter`: checked against the live rows a chunk at a
/// time, re-scored from the stored vector. Once `limit` have passed, every seq after them
/// scores lower, so this is the exact scan's answer; a chunk runs on past its end while
/// scores tie, so ties are broken as the exact scan breaks them.
fn in_rank_order(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    ranked: &[(f32, i64)],
    limit: usize,
) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
    let mut top = vectors::TopK::new(limit);
    let (mut start, mut chunk, mut passed) = (0, limit + limit / 4 + 1, 0);
    while start < ranked.len() && passed < limit {
        let mut end = (start + chunk).min(ranked.len());
        while end < ranked.len() && ranked[end].0 == ranked[end - 1].0 {
            end += 1;
        }
        let seqs: Vec<i64> = ranked[start..end].iter().map(|&(_, seq)| seq).collect();
        passed += score_candidates(conn, filter, model, query, &seqs, &mut top)?.len();
        start = end;
        chunk *= 2;
    }
    Ok(top.into_sorted())
}

impl AnnIndex {
    /// Starts what brings `model`'s index up to date with `tail` vectors written after
    /// its snapshot: the first build once there are enough, a rebuild after a bulk
    /// import, else adding them to the graph. Nothing while a job runs.
    fn catch_up(
        &self,
        model: &str,
        dimension: usize,
        state: &std::sync::Arc<ModelIndex>,
        snapshot: Option<&super::graph::Snapshot>,
        tail: usize,
    ) {
        match snapshot {
            None if tail >= self.config.exact_below => {
                self.start_job(model, dimension, state, Work::Rebuild)
            }
            None => {}
            Some(snapshot) if tail >= self.config.rebuild_tail.max(snapshot.len() / 10) => {
                self.start_job(model, dimension, state, Work::Rebuild)
            }
            Some(_) if tail > 0 => self.start_job(model, dimension, state, Work::Absorb),
            Some(_) => {}
        }
    }

    /// Brings `model`'s index up to date in the background without a query, as a query
    /// would (a server calls this every few seconds, so that after a bulk import by any
    /// process the build has started — and its staged points answer — before the next
    /// query asks).
    pub fn keep_up(&self, model: &str, dimension: usize) -> Result<(), StoreError> {
        self.caught_up(model, dimension)?;
        Ok(())
    }

    /// `model`'s state, its snapshot and the change number that covers, after starting
    /// what brings it up to date ([`Self::catch_up`]): where a query and [`Self::keep_up`]
    /// begin.
    #[allow(clippy::type_complexity)]
    fn caught_up(
        &self,
        model: &str,
        dimension: usize,
    ) -> Result<
        (
            std::sync::Arc<ModelIndex>,
            Option<std::sync::Arc<super::graph::Snapshot>>,
            i64,
        ),
        SqliteStoreError,
    > {
        let state = self.model(model, dimension);
        let snapshot = state.snapshot();
        let covered = snapshot.as_ref().map_or(0, |s| s.covered());
        let tail = self.tail_len(&state, model, dimension, covered)?;
        self.catch_up(model, dimension, &state, snapshot.as_deref(), tail);
        Ok((state, snapshot, covered))
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
        let (state, snapshot, covered) = self.caught_up(model, dimension)?;
        let Some(snapshot) = snapshot else {
            return match state.staged() {
                Some(staged) if limit * 2 <= self.config.ef_search => {
                    self.staged(&staged, filter, model, query, limit)
                }
                _ => self.exact(filter, model, query, limit),
            };
        };
        // Over-fetch needs headroom: a page close to `ef` would be cut short by the
        // first filtered-out candidate.
        if limit * 2 > self.config.ef_search {
            return self.exact(filter, model, query, limit);
        }
        if let Some(staged) = state.staged().filter(|s| s.covered > covered) {
            return self.staged(&staged, filter, model, query, limit);
        }

        let tail = state.staged_tail().filter(|t| t.covered > covered);
        let tail = tail.as_deref();
        let conn = self.store.read();
        // Scoped to a project holding under a quarter of the graph (how agents recall),
        // the unfiltered walk would mostly find other projects' memories: go to the
        // project's own memories at once.
        if let Some(project) = &filter.project {
            let allowed = self
                .store
                .project_seqs
                .get(&conn, &filter.workspace, project)?;
            if allowed.len() < snapshot.len() / 4 {
                return self.selective(
                    &conn, &snapshot, covered, tail, filter, model, query, limit, &allowed,
                );
            }
        }
        let candidates = snapshot.candidates(query)?;
        let mut top = vectors::TopK::new(limit);
        let seen = score_candidates(&conn, filter, model, query, &candidates, &mut top)?;
        if seen.len() < limit && candidates.len() < snapshot.len() {
            // The filter discarded most of what the graph offered (a selective project,
            // kind or time range): the best matches may lie beyond `ef`.
            let allowed = allowed_seqs(&self.store, &conn, filter)?;
            return self.selective(
                &conn, &snapshot, covered, tail, filter, model, query, limit, &allowed,
            );
        }
        self.score_tail(
            &conn, covered, tail, filter, model, query, None, limit, seen, &mut top,
        )?;
        self.counters
            .approximate_queries
            .fetch_add(1, Ordering::Relaxed);
        Ok(top.into_sorted())
    }
}

impl AnnIndex {
    /// A query answered from a build's staged points (its graph not ready yet): the
    /// `ef` nearest points — among those the filter allows when it names a project, else
    /// of them all, then of what the filter allows when it discarded too many — scored
    /// exactly against the live rows, plus every vector written after the points were
    /// read.
    fn staged(
        &self,
        staged: &super::Staged,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
        let conn = self.store.read();
        let ef = self.config.ef_search;
        let among = |allowed: &rustc_hash::FxHashSet<i64>| -> Vec<i64> {
            if allowed.len() <= ef {
                allowed.iter().copied().collect()
            } else {
                staged.points.nearest_among(query, allowed, ef)
            }
        };
        let mut top = vectors::TopK::new(limit);
        let seen = if let Some(project) = &filter.project {
            let allowed = self
                .store
                .project_seqs
                .get(&conn, &filter.workspace, project)?;
            score_candidates(&conn, filter, model, query, &among(&allowed), &mut top)?
        } else {
            let candidates = staged.points.nearest(query, ef);
            let seen = score_candidates(&conn, filter, model, query, &candidates, &mut top)?;
            if seen.len() < limit && candidates.len() < staged.points.len() {
                let allowed = allowed_seqs(&self.store, &conn, filter)?;
                top = vectors::TopK::new(limit);
                score_candidates(&conn, filter, model, query, &among(&allowed), &mut top)?
            } else {
                seen
            }
        };
        exact_scan(
            &conn,
            filter,
            model,
            query,
            Some((staged.covered, &seen)),
            &mut top,
        )?;
        self.counters.staged_queries.fetch_add(1, Ordering::Relaxed);
        Ok(top.into_sorted())
    }

    /// A query whose filter leaves few of the graph's unfiltered candidates (how agents
    /// call recall: scoped to one project). Scanning every vector of the model for it
    /// cost 65–75 ms at 100k; instead the memories the filter allows (`allowed`, a
    /// superset: an index walk for a project) are taken and then:
    ///
    /// - no more than `ef` of them: each one's vector is scored — exact (comparing
    ///   quantized points first would pick them all anyway);
    /// - up to [`AnnConfig::scan_among_at_most`](super::AnnConfig): each one's quantized vector is read from the graph
    ///   and compared, and the best `ef` are scored exactly;
    /// - more: the graph is walked with the filter applied as it goes, so its `ef`
    ///   candidates all belong to the allowed set.
    ///
    /// Either way the fresh tail is scanned exactly, as for any query.
    #[allow(clippy::too_many_arguments)]
    fn selective(
        &self,
        conn: &Connection,
        snapshot: &super::graph::Snapshot,
        covered: i64,
        tail: Option<&super::Staged>,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        limit: usize,
        allowed: &std::sync::Arc<rustc_hash::FxHashSet<i64>>,
    ) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
        let candidates: Vec<i64> = if allowed.len() <= self.config.ef_search {
            allowed.iter().copied().collect()
        } else if allowed.len() <= self.config.scan_among_at_most {
            let project = filter
                .project
                .as_deref()
                .map(|project| (filter.workspace.as_str(), project));
            snapshot.scan_among(query, allowed, project, self.config.ef_search)?
        } else {
            snapshot.candidates_among(query, allowed)?
        };
        let mut top = vectors::TopK::new(limit);
        let seen = score_candidates(conn, filter, model, query, &candidates, &mut top)?;
        self.score_tail(
            conn,
            covered,
            tail,
            filter,
            model,
            query,
            Some(allowed),
            limit,
            seen,
            &mut top,
        )?;
        self.counters
            .filtered_queries
            .fetch_add(1, Ordering::Relaxed);
        Ok(top.into_sorted())
    }

    /// Scores into `top` what was written after the graph's `covered` and not `seen`
    /// yet: with an absorb job's staged `tail`, the `ef` nearest of its points (among
    /// `allowed`, when given) scored exactly and every vector written after the tail
    /// scanned exactly; without one — or when the filter discarded too many of those
    /// candidates to trust them — every vector after `covered` scanned exactly.
    #[allow(clippy::too_many_arguments)]
    fn score_tail(
        &self,
        conn: &Connection,
        covered: i64,
        tail: Option<&super::Staged>,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        allowed: Option<&rustc_hash::FxHashSet<i64>>,
        limit: usize,
        mut seen: HashSet<i64>,
        top: &mut vectors::TopK,
    ) -> Result<(), SqliteStoreError> {
        let ef = self.config.ef_search;
        let mut after = covered;
        if let Some(tail) = tail {
            let nearest = match allowed {
                Some(allowed) => tail.points.nearest_among(query, allowed, ef),
                None => tail.points.nearest(query, ef),
            };
            let compared = nearest.len();
            let candidates: Vec<i64> = nearest.into_iter().filter(|s| !seen.contains(s)).collect();
            let passed = score_candidates(conn, filter, model, query, &candidates, top)?;
            // Too few passed the filter among many more points: the best matches may lie
            // beyond `ef` — the tail is scanned exactly (past what was just scored), as
            // without a staged copy.
            // (Fewer than `ef` compared: every point the filter could allow was.)
            if passed.len() >= limit || compared < ef {
                after = tail.covered;
                self.counters
                    .staged_tail_queries
                    .fetch_add(1, Ordering::Relaxed);
            }
            seen.extend(passed);
        }
        exact_scan(conn, filter, model, query, Some((after, &seen)), top)
    }
}

/// The seqs of the memories `filter` may allow, whatever their vectors: a superset the
/// candidates' scoring checks against the whole filter. Scoped to a project it is the
/// project's memories, read from the (workspace, project) index alone — no row is
/// visited, where the whole filter cost a row lookup and a working-memory probe per
/// memory (10k of them for one project of a 100k store).
fn allowed_seqs(
    store: &crate::SqliteStore,
    conn: &Connection,
    filter: &MemoryFilter,
) -> Result<std::sync::Arc<rustc_hash::FxHashSet<i64>>, SqliteStoreError> {
    if let Some(project) = &filter.project {
        return store.project_seqs.get(conn, &filter.workspace, project);
    }
    let (clause, values) = crate::query::where_clause(filter);
    let mut statement =
        conn.prepare_cached(&format!("SELECT m.seq FROM memories m WHERE {clause}"))?;
    let seqs = statement
        .query_map(rusqlite::params_from_iter(values), |row| {
            row.get::<_, i64>(0)
        })?
        .collect::<Result<rustc_hash::FxHashSet<i64>, _>>()?;
    Ok(std::sync::Arc::new(seqs))
}

/// Checks the graph's candidates against the live rows and the filter, scoring each
/// survivor with its stored vector (so a vector re-written since the build scores as it
/// is now). Returns the seqs that survived.
pub(super) fn score_candidates(
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

#[cfg(test)]
mod tests {
    use levh_core::{Actor, Store, Timestamp, Workspace};
    use rusqlite::params;

    use super::*;
    use crate::ann::AnnConfig;
    use crate::ann::graph::{SEARCH_CONTEXTS, SearchContext, quantize};
    use crate::ann::test_support::*;

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
        // Scoped to a project, only its vectors are read — and the answer is the same.
        let scoped = MemoryFilter {
            project: Some("p1".into()),
            ..everywhere()
        };
        let found = index.nearest(&scoped, MODEL, &query, 5).unwrap();
        assert_eq!(
            found,
            fixture.store.nearest(&scoped, MODEL, &query, 5).unwrap()
        );
        assert_eq!(found.len(), 5);
        let stats = index.stats();
        assert_eq!((stats.builds, stats.exact_queries), (0, 2));
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

    /// Below `exact_below` the exact scan compares the vectors in memory and reads only
    /// the best out of SQLite: the answer is the scan out of SQLite's, scoped and not, at
    /// every limit — also after a vector is re-written, a memory forgotten, one purged (no
    /// longer held in memory) and one added, each by a write the copy did not see.
    #[test]
    fn a_small_store_is_scanned_in_memory_with_the_answer_of_the_scan_out_of_sqlite() {
        fn agrees(fixture: &Fixture, index: &AnnIndex, query: &[f32]) {
            let scoped = MemoryFilter {
                project: Some("p1".into()),
                ..everywhere()
            };
            for filter in [&everywhere(), &scoped] {
                for limit in [1, 10, 40] {
                    let from_sqlite = fixture.store.nearest(filter, MODEL, query, limit).unwrap();
                    assert_eq!(from_sqlite.len(), limit);
                    let found = index.nearest(filter, MODEL, query, limit).unwrap();
                    assert_eq!(found, from_sqlite, "limit {limit}, {filter:?}");
                }
            }
        }
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(21, 48, 10);
        let stored = fixture.fill(&mut corpus, 300);
        let index = fixture.index(AnnConfig {
            exact_below: 1_000,
            ..small()
        });
        for _ in 0..10 {
            agrees(&fixture, &index, &corpus.draw());
        }
        let state = index.model(MODEL, 48);
        assert_eq!(state.in_memory.held(), 300);
        assert_eq!(index.stats().in_memory_queries, 60);
        assert_eq!(index.stats().exact_queries, 60);

        // A vector re-written in place (a re-embed): scored as it is now.
        let query = corpus.draw();
        let (rewritten, _) = stored[41].clone(); // project p1
        fixture.store.with_connection(|conn| {
            conn.execute(
                "UPDATE memory_embeddings SET vector = ?1
                     WHERE memory_seq = (SELECT seq FROM memories WHERE id = ?2)",
                params![vectors::encode(&query), rewritten.to_string()],
            )
            .unwrap();
        });
        let scoped = MemoryFilter {
            project: Some("p1".into()),
            ..everywhere()
        };
        assert_eq!(
            ids(&index.nearest(&scoped, MODEL, &query, 3).unwrap())[0],
            rewritten
        );
        agrees(&fixture, &index, &query);

        // Forgotten, purged, added.
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let workspace = Workspace::default();
        let (forgotten, forgotten_vector) = stored[45].clone();
        let (purged, purged_vector) = stored[49].clone();
        assert!(
            fixture
                .store
                .forget(&workspace, forgotten, now, &Actor::cli())
                .unwrap()
        );
        let purge = fixture.store.purge(&workspace, purged, now, &Actor::cli());
        assert!(purge.unwrap().is_some());
        let added_vector = corpus.draw();
        let added = fixture.add(added_vector.clone(), "default", "p1");
        for query in [&forgotten_vector, &purged_vector, &added_vector] {
            let found = ids(&index.nearest(&scoped, MODEL, query, 10).unwrap());
            assert!(!found.contains(&forgotten) && !found.contains(&purged));
            agrees(&fixture, &index, query);
        }
        assert_eq!(
            ids(&index.nearest(&scoped, MODEL, &added_vector, 1).unwrap()),
            [added]
        );
        // Read afresh after the purge: 300 - 1 + 1, the purged vector gone from memory.
        assert_eq!(state.in_memory.held(), 300);
        assert_eq!(index.stats().exact_queries, index.stats().in_memory_queries);

        // Past `exact_below` nothing is kept, and the scan reads SQLite as before.
        let small_index = fixture.index(AnnConfig {
            exact_below: 100,
            ..small()
        });
        let query = corpus.draw();
        let from_sqlite = fixture.store.nearest(&scoped, MODEL, &query, 10).unwrap();
        assert_eq!(
            small_index.exact(&scoped, MODEL, &query, 10).unwrap(),
            from_sqlite
        );
        assert_eq!(small_index.model(MODEL, 48).in_memory.held(), 0);
        assert_eq!(small_index.stats().in_memory_queries, 0);
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
    fn filters_are_respected_and_a_selective_one_is_answered_from_the_memories_it_allows() {
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
        // answer comes from the two memories the filter allows, and it is complete —
        // without scanning every vector.
        let rare_filter = MemoryFilter {
            project: Some("rare".into()),
            ..everywhere()
        };
        let found = ids(&index.nearest(&rare_filter, MODEL, &query, 10).unwrap());
        assert_eq!(found.len(), 2);
        assert!(rare.iter().all(|id| found.contains(id)));
        let stats = index.stats();
        assert_eq!((stats.exact_queries, stats.filtered_queries), (0, 1));
    }

    #[test]
    fn while_a_graph_is_built_queries_compare_its_staged_points_and_match_the_exact_scan() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(31, 48, 30);
        for n in 0..2_000 {
            let project = format!("p{}", n % 10);
            fixture.add(corpus.draw(), "default", &project);
        }
        let theirs: Vec<MemoryId> = (0..3)
            .map(|_| fixture.add(corpus.draw(), "other", "p0"))
            .collect();
        let index = fixture.index(small());
        let state = index.model(MODEL, 48);
        // As a build is once it has read every vector and before its graph is ready:
        // running (so no other job starts) with its points staged.
        state.job_running.store(true, Ordering::Release);
        let staged = index.job(MODEL, 48).read_every_point().unwrap();
        assert_eq!(staged.points.len(), 2_003);
        state.set_staged(Some(std::sync::Arc::new(staged)));
        // Written after the points were read: scanned exactly beside them.
        let fresh_vector = corpus.draw();
        let fresh = fixture.add(fresh_vector.clone(), "default", "p3");
        matches_the_exact_scan_scoped_and_not(&fixture, &index, &mut corpus, fresh, &fresh_vector);
        // Another workspace: its three are far down the unfiltered points; the query
        // goes on to the memories its filter allows and finds them all.
        let other = MemoryFilter::workspace(Workspace::new("other").unwrap());
        let found = ids(&index.nearest(&other, MODEL, &fresh_vector, 10).unwrap());
        assert_eq!(found.len(), 3);
        assert!(theirs.iter().all(|id| found.contains(id)));
        let stats = index.stats();
        assert_eq!(
            (stats.exact_queries, stats.staged_queries),
            (0, 43),
            "{stats:?}"
        );

        // The build's end takes the staged points down; its graph answers from then on.
        state.job_running.store(false, Ordering::Release);
        index.refresh(MODEL, 48).unwrap();
        assert!(state.staged().is_none() && state.snapshot().is_some());
        index
            .nearest(&everywhere(), MODEL, &fresh_vector, 10)
            .unwrap();
        assert_eq!(index.stats().staged_queries, 43);
    }

    #[test]
    fn kept_up_between_queries_the_index_builds_and_absorbs_without_being_asked() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(37, 48, 10);
        fixture.fill(&mut corpus, 150);
        let index = fixture.index(small());
        index.keep_up(MODEL, 48).unwrap();
        index.wait_idle(MODEL, 48);
        assert_eq!(index.stats().builds, 1);
        let vector = corpus.draw();
        let fresh = fixture.add(vector.clone(), "default", "p1");
        index.keep_up(MODEL, 48).unwrap();
        index.wait_idle(MODEL, 48);
        let stats = index.stats();
        assert_eq!((stats.builds, stats.absorbed), (1, 1), "{stats:?}");
        assert_eq!(stats.exact_queries + stats.approximate_queries, 0);
        let found = index.nearest(&everywhere(), MODEL, &vector, 10).unwrap();
        assert_eq!(found[0].0, fresh);
    }

    #[test]
    fn while_a_tail_is_added_to_the_graph_queries_compare_its_staged_points() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(41, 48, 30);
        for n in 0..1_000 {
            fixture.add(corpus.draw(), "default", &format!("p{}", n % 10));
        }
        let index = fixture.index(small());
        index.refresh(MODEL, 48).unwrap();
        // A tail past STAGE_TAIL_FROM and under the rebuild threshold: absorbed.
        for n in 0..400 {
            fixture.add(corpus.draw(), "default", &format!("p{}", n % 10));
        }
        let theirs: Vec<MemoryId> = (0..2)
            .map(|_| fixture.add(corpus.draw(), "other", "p0"))
            .collect();
        let state = index.model(MODEL, 48);
        // As an absorb job is once it has read the tail and while it adds it to the graph.
        state.job_running.store(true, Ordering::Release);
        let covered = state.snapshot().unwrap().covered();
        let (through, points) = index.job(MODEL, 48).read_tail(covered).unwrap();
        assert_eq!(points.len(), 402);
        state.set_staged_tail(Some(std::sync::Arc::new(super::super::Staged::of_tail(
            through, &points, 48,
        ))));
        // Written after the tail was read: scanned exactly beside it.
        let fresh_vector = corpus.draw();
        let fresh = fixture.add(fresh_vector.clone(), "default", "p3");
        matches_the_exact_scan_scoped_and_not(&fixture, &index, &mut corpus, fresh, &fresh_vector);
        assert_eq!(index.stats().staged_tail_queries, 42);
        // Another workspace's two are only in the tail: none of the graph's candidates
        // pass its filter, so the memories it allows are listed and scored, and the
        // tail's points among them compared (all of them: fewer than `ef`).
        let other = MemoryFilter::workspace(Workspace::new("other").unwrap());
        let found = ids(&index.nearest(&other, MODEL, &fresh_vector, 10).unwrap());
        assert_eq!(found.len(), 2);
        assert!(theirs.iter().all(|id| found.contains(id)), "{found:?}");
        let stats = index.stats();
        assert_eq!((stats.exact_queries, stats.staged_tail_queries), (0, 43));
    }

    /// 40 queries scoped to project p3 and unscoped (20 each) find at least 95% of the
    /// exact scan's top 10, and `fresh` — written after whatever the index holds or
    /// staged — is found first for its own vector both ways.
    fn matches_the_exact_scan_scoped_and_not(
        fixture: &Fixture,
        index: &AnnIndex,
        corpus: &mut Corpus,
        fresh: MemoryId,
        fresh_vector: &[f32],
    ) {
        let scoped = MemoryFilter {
            project: Some("p3".into()),
            ..everywhere()
        };
        let (mut found_total, mut wanted_total) = (0, 0);
        for _ in 0..20 {
            let query = corpus.draw();
            for filter in [&scoped, &everywhere()] {
                let found = ids(&index.nearest(filter, MODEL, &query, 10).unwrap());
                let exact = ids(&fixture.store.nearest(filter, MODEL, &query, 10).unwrap());
                assert_eq!(found.len(), 10);
                found_total += exact.iter().filter(|id| found.contains(id)).count();
                wanted_total += exact.len();
            }
        }
        let recall = found_total as f64 / wanted_total as f64;
        assert!(recall >= 0.95, "recall@10 against the exact scan: {recall}");
        for filter in [&scoped, &everywhere()] {
            let found = ids(&index.nearest(filter, MODEL, fresh_vector, 10).unwrap());
            assert_eq!(found[0], fresh, "the vectors written since are scanned too");
        }
    }

    #[test]
    fn a_selective_filter_over_many_memories_walks_the_graph_with_the_filter() {
        scoped_search_matches_the_exact_scan(0);
    }

    #[test]
    fn a_selective_filter_over_many_memories_compares_the_allowed_points_of_the_graph() {
        scoped_search_matches_the_exact_scan(1_000);
    }

    /// 3,000 vectors, one project in ten: 300 allowed (above `ef_search`), so the graph
    /// answers with the filter applied — walked, or its allowed points compared, as
    /// `scan_among_at_most` says — and matches the exact scan.
    fn scoped_search_matches_the_exact_scan(scan_among_at_most: usize) {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(17, 48, 30);
        for n in 0..3_000 {
            let project = format!("p{}", n % 10);
            fixture.add(corpus.draw(), "default", &project);
        }
        let index = fixture.index(AnnConfig {
            scan_among_at_most,
            ..small()
        });
        index.refresh(MODEL, 48).unwrap();
        // Written after the build: the fresh tail, scanned exactly beside the graph.
        let fresh_vector = corpus.draw();
        let fresh = fixture.add(fresh_vector.clone(), "default", "p3");
        let scoped = MemoryFilter {
            project: Some("p3".into()),
            ..everywhere()
        };
        let (mut found_total, mut wanted_total) = (0, 0);
        for _ in 0..30 {
            let query = corpus.draw();
            let found = ids(&index.nearest(&scoped, MODEL, &query, 10).unwrap());
            let exact = ids(&fixture.store.nearest(&scoped, MODEL, &query, 10).unwrap());
            assert_eq!(found.len(), 10);
            for id in &found {
                let memory = fixture
                    .store
                    .get(&Workspace::default(), *id)
                    .unwrap()
                    .unwrap();
                assert_eq!(memory.project.as_deref(), Some("p3"));
            }
            found_total += exact.iter().filter(|id| found.contains(id)).count();
            wanted_total += exact.len();
        }
        let recall = found_total as f64 / wanted_total as f64;
        assert!(recall >= 0.95, "recall@10 against the exact scan: {recall}");
        let found = ids(&index.nearest(&scoped, MODEL, &fresh_vector, 10).unwrap());
        assert_eq!(found[0], fresh, "the fresh tail is scanned too");
        // Most queries find under ten of p3 among the graph's 64 unfiltered candidates and
        // take the filtered walk; none scans every vector.
        let stats = index.stats();
        assert_eq!(stats.exact_queries, 0);
        assert!(stats.filtered_queries >= 20, "{stats:?}");
        assert_eq!(stats.filtered_queries + stats.approximate_queries, 31);

        // Added to the graph since: found through its point now (the tail is empty), so
        // a project's slot list kept from before must have been made again.
        index.keep_up(MODEL, 48).unwrap();
        index.wait_idle(MODEL, 48);
        assert_eq!(index.stats().absorbed, 1);
        let found = ids(&index.nearest(&scoped, MODEL, &fresh_vector, 10).unwrap());
        assert_eq!(found[0], fresh, "the absorbed point is compared");
    }
}
