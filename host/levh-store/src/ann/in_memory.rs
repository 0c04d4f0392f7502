//! A small store's vectors kept in memory, for the exact scan.
//!
//! Below [`AnnConfig::exact_below`](super::AnnConfig) vectors there is no graph and a query
//! scans exactly. From SQLite that meant reading every vector the filter allows — scoped
//! to a project of a few hundred memories, a third of a search's server CPU over REST at
//! 3k (`scripts/compare-python-levh.sh`, `perf record`). This copy holds each vector's
//! stored bytes (at most `exact_below` of them: 7.7 MB at 5k × 384-d), so the scan
//! compares them in memory and reads out of SQLite only the best few, in score order,
//! to check them against the caller's filter: the first `limit` that pass are the
//! answer, since every vector after them scores lower. Scores are computed from the same
//! bytes as the SQL path's, so the answer is the exact scan's.
//!
//! The copy follows the change log (`vector_changes`, migration 0005) as the graph's tail
//! does: before each use it reads the vectors written since the change it covers — new
//! memories and re-written vectors alike, by any process. A memory deleted since (a purge)
//! moves the counter of migration 0020 (`project_changes`), and the copy is read afresh:
//! no vector of a purged memory stays in this process. Past `exact_below` vectors the copy
//! is dropped for good (the graph takes over).

use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, params};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{SqliteStoreError, vectors};

/// One model's vectors (each its stored little-endian bytes), kept up to date.
#[derive(Debug, Default)]
pub(super) struct InMemory {
    copy: Mutex<Copy>,
}

#[derive(Debug, Default)]
struct Copy {
    /// The last change number read.
    covered: i64,
    /// `project_changes.n` when the copy was read: a memory deleted or moved since moves it.
    deletions: i64,
    /// Every vector's bytes, one after another, in slot order.
    bytes: Vec<u8>,
    /// The memory seq of each slot.
    seqs: Vec<i64>,
    /// Slot of each memory seq.
    slots: FxHashMap<i64, usize>,
    /// The model passed the size kept: nothing is kept from then on in this process
    /// (a store rarely shrinks back, and counting its vectors again after every write
    /// would cost more than the copy saves).
    too_many: bool,
}

impl InMemory {
    /// The memories among `allowed` (every one kept, when `None`) best first by their
    /// vector's score against `query`, with the score — or `None` when the model has more
    /// than `at_most` vectors (none are kept then).
    pub(super) fn ranked(
        &self,
        conn: &Connection,
        model: &str,
        query: &[f32],
        allowed: Option<&FxHashSet<i64>>,
        at_most: usize,
    ) -> Result<Option<Vec<(f32, i64)>>, SqliteStoreError> {
        let mut copy = self.copy.lock().unwrap_or_else(PoisonError::into_inner);
        if !copy.catch_up(conn, model, query.len(), at_most)? {
            return Ok(None);
        }
        let width = query.len() * 4;
        let score = |slot: usize| vectors::dot(query, &copy.bytes[slot * width..][..width]);
        let mut ranked: Vec<(f32, i64)> = match allowed {
            // A project's memories: looked up by seq (the smaller side).
            Some(allowed) if allowed.len() < copy.seqs.len() => allowed
                .iter()
                .filter_map(|seq| copy.slots.get(seq).map(|&slot| (score(slot), *seq)))
                .collect(),
            Some(allowed) => (0..copy.seqs.len())
                .filter(|&slot| allowed.contains(&copy.seqs[slot]))
                .map(|slot| (score(slot), copy.seqs[slot]))
                .collect(),
            None => (0..copy.seqs.len())
                .map(|slot| (score(slot), copy.seqs[slot]))
                .collect(),
        };
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(Some(ranked))
    }

    /// How many vectors the copy holds (tests).
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .seqs
            .len()
    }
}

impl Copy {
    /// Reads the vectors written since the change covered. False when the model holds
    /// more than `at_most` vectors (the copy is dropped).
    fn catch_up(
        &mut self,
        conn: &Connection,
        model: &str,
        dimension: usize,
        at_most: usize,
    ) -> Result<bool, SqliteStoreError> {
        if self.too_many {
            return Ok(false);
        }
        let deletions: i64 = conn
            .prepare_cached("SELECT n FROM project_changes")?
            .query_row([], |row| row.get(0))?;
        if deletions != self.deletions {
            *self = Copy {
                deletions,
                ..Copy::default()
            };
        }
        let mut latest = conn.prepare_cached(
            "SELECT max(change) FROM vector_changes
                 WHERE model = ?1 AND dimension = ?2 AND change > ?3",
        )?;
        let Some(last) = latest
            .query_row(params![model, dimension as i64, self.covered], |row| {
                row.get::<_, Option<i64>>(0)
            })?
        else {
            return Ok(true);
        };
        let mut changed = conn.prepare_cached(
            "SELECT e.memory_seq, e.vector FROM vector_changes c
             CROSS JOIN memory_embeddings e ON e.memory_seq = c.memory_seq
             WHERE c.model = ?1 AND c.dimension = ?2 AND c.change > ?3 AND c.change <= ?4
               AND e.model = ?1 AND e.dimension = ?2",
        )?;
        let mut rows = changed.query(params![model, dimension as i64, self.covered, last])?;
        let width = dimension * 4;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let blob = vectors::blob(row, 1)?;
            if blob.len() != width {
                continue; // not a vector of this dimension: never scored, as in SQL
            }
            match self.slots.get(&seq) {
                Some(&slot) => self.bytes[slot * width..][..width].copy_from_slice(blob),
                None => {
                    if self.seqs.len() >= at_most {
                        *self = Copy {
                            too_many: true,
                            ..Copy::default()
                        };
                        return Ok(false);
                    }
                    self.slots.insert(seq, self.seqs.len());
                    self.seqs.push(seq);
                    self.bytes.extend_from_slice(blob);
                }
            }
        }
        self.covered = last;
        Ok(true)
    }
}
