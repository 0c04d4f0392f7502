//! Nearest vectors through pgvector: cosine distance over `vector::vector(N)`, with an
//! HNSW index (`vector_cosine_ops`) per dimension N, filtered by the memory filter
//! (workspace, project, validity, ...) in the same query.
//!
//! An HNSW index needs one dimension, and levh keeps vectors of several models (the hash
//! embedder's 256, MiniLM's 384, ...) in one table: each dimension gets a partial index
//! over the rows of that dimension, created the first time a vector of it is written.
//! pgvector's iterative index scans (0.8+) keep reading the index until the filter has
//! passed enough rows, so a project-scoped search still fills its page; for a small
//! project the planner can instead read the project's rows by their index and sort them.

use crate::connection::Db;
use levh_core::{MemoryFilter, MemoryId};

use crate::query::{Bound, limit, where_clause};
use crate::rows::{column, parse_id};
use crate::{PostgresStore, PostgresStoreError};

/// pgvector's HNSW index takes vectors of at most this many dimensions; larger ones are
/// searched by an exact scan.
const HNSW_MAX_DIMENSIONS: i32 = 2000;

/// The advisory lock key taken while an index of a new dimension is created, so two
/// processes writing the first vectors of a model do not both create it.
const VECTOR_INDEX_LOCK: i64 = 0x6c65_7668_564e_4458;

fn index_name(dimension: i32) -> String {
    format!("memory_embeddings_hnsw_{dimension}")
}

impl PostgresStore {
    /// Learns which dimensions have their index already (at open).
    pub(crate) fn load_vector_indexes(&self) -> Result<(), PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT indexname FROM pg_indexes
              WHERE tablename = 'memory_embeddings' AND indexname LIKE 'memory_embeddings_hnsw_%'",
            &[],
        )?;
        let mut known = self
            .vector_indexes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for row in rows {
            let name: String = column(&row, 0)?;
            if let Some(dimension) = name
                .strip_prefix("memory_embeddings_hnsw_")
                .and_then(|d| d.parse().ok())
            {
                known.insert(dimension);
            }
        }
        Ok(())
    }

    /// Creates the HNSW index of each of `dimensions` that has none yet, in a transaction
    /// of its own before the write that brings the first vector of it. Public for
    /// `levh migrate`, which builds each index once after copying the vectors.
    pub fn ensure_vector_indexes(
        &self,
        dimensions: impl IntoIterator<Item = usize>,
    ) -> Result<(), PostgresStoreError> {
        let missing: Vec<i32> = {
            let known = self
                .vector_indexes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut missing: Vec<i32> = dimensions
                .into_iter()
                .filter_map(|d| i32::try_from(d).ok())
                .filter(|d| (1..=HNSW_MAX_DIMENSIONS).contains(d) && !known.contains(d))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        if missing.is_empty() {
            return Ok(());
        }
        let mut connection = self.connection()?;
        let mut tx = connection.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&VECTOR_INDEX_LOCK])?;
        for &dimension in &missing {
            // The dimension is an integer of ours, written into the DDL (it cannot be bound).
            tx.batch_execute(&format!(
                "CREATE INDEX IF NOT EXISTS {} ON memory_embeddings
                     USING hnsw ((vector::vector({dimension})) vector_cosine_ops)
                     WHERE dimension = {dimension}",
                index_name(dimension)
            ))?;
        }
        tx.commit()?;
        self.vector_indexes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend(missing);
        Ok(())
    }

    /// Up to `count` memories matching `filter` whose `model` vectors are nearest `query`
    /// by cosine, best first, with their cosine similarity.
    pub(crate) fn nearest_vectors(
        &self,
        filter: &MemoryFilter,
        model: &str,
        query: &[f32],
        count: usize,
    ) -> Result<Vec<(MemoryId, f32)>, PostgresStoreError> {
        let Ok(dimension) = i32::try_from(query.len()) else {
            return Ok(Vec::new());
        };
        if dimension == 0 || count == 0 {
            return Ok(Vec::new());
        }
        let mut bound = Bound::default();
        let vector = bound.bind(pgvector::Vector::from(query.to_vec()));
        let model = bound.bind(model.to_owned());
        let clause = where_clause(filter, &mut bound);
        // The dimension is written into the SQL: the index's expression and predicate must
        // match the query's literally for the planner to use it.
        let distance = format!("(e.vector::vector({dimension}) <=> {vector}::vector)");
        let sql = format!(
            "SELECT m.id, (1 - {distance})::float4 FROM memory_embeddings e
               JOIN memories m ON m.seq = e.memory_seq
              WHERE e.dimension = {dimension} AND e.model = {model} AND {clause}
              ORDER BY {distance} LIMIT {}",
            bound.bind(limit(count))
        );
        let mut connection = self.connection()?;
        // Look at least as far as asked for (the connection keeps reading the index until
        // the filter passed that many rows, in exact order: see `connection.rs`).
        connection.search_breadth(count.clamp(40, 1000))?;
        let rows = connection.query(&sql, &bound.params())?;
        rows.iter()
            .map(|row| Ok((parse_id(column(row, 0)?)?, column(row, 1)?)))
            .collect()
    }
}
