//! The planner's statistics, kept fresh after bulk writes.
//!
//! PostgreSQL plans each query from statistics that `ANALYZE` gathers; autovacuum
//! gathers them about a minute after a table changed a lot. Until then a table filled by
//! an import looks empty to the planner, which then joins memories and vectors in a
//! nested loop instead of using the HNSW index or a hash join: a scoped search over 2,000
//! memories took 35 ms instead of 0.6 ms (measured with `EXPLAIN ANALYZE` before and
//! after `ANALYZE`, right after `levh import`). So the store looks at its hot tables
//! after every few hundred rows it writes and analyzes those that changed by a fifth
//! since their last statistics (or never had any), as autovacuum would, only sooner.

use crate::connection::Db;
use std::sync::atomic::Ordering;

use crate::{PostgresStore, PostgresStoreError};

/// Rows written between two looks at the statistics (one query).
const LOOK_EVERY: u64 = 500;

/// The tables whose size and spread decide the plans of levh's frequent reads (search,
/// the gate's comparison, the held queue, entities, the event log's tail).
const TABLES: &[&str] = &[
    "memories",
    "memory_embeddings",
    "near_duplicate_keys",
    "held_candidates",
    "memory_entities",
    "events",
];

impl PostgresStore {
    /// Counts `rows` written; every [`LOOK_EVERY`] rows, analyzes the tables whose
    /// statistics are stale. A failure is logged, never the caller's: the write it
    /// follows is committed.
    pub(crate) fn note_rows_written(&self, rows: u64) {
        let before = self.written_since_look.fetch_add(rows, Ordering::Relaxed);
        if before + rows < LOOK_EVERY {
            return;
        }
        self.written_since_look.store(0, Ordering::Relaxed);
        if let Err(error) = self.analyze_stale_tables() {
            tracing::warn!(%error, "planner statistics not refreshed");
        }
    }

    /// Analyzes each of [`TABLES`] that changed by a fifth (at least [`LOOK_EVERY`]
    /// rows) since its last statistics, or never had any. Returns the tables analyzed.
    pub fn analyze_stale_tables(&self) -> Result<Vec<String>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let stale: Vec<String> = connection
            .query(
                "SELECT relname::text FROM pg_stat_user_tables
                  WHERE schemaname = current_schema() AND relname::text = ANY($1)
                    AND (coalesce(last_analyze, last_autoanalyze) IS NULL
                         OR n_mod_since_analyze > greatest($2, n_live_tup / 5))",
                &[&TABLES, &(LOOK_EVERY as i64)],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect();
        for table in &stale {
            // A name from TABLES (the query only returns those), never the caller's.
            connection.batch_execute(&format!("ANALYZE {table}"))?;
        }
        Ok(stale)
    }
}

#[cfg(test)]
mod tests {
    use crate::connection::Db;
    use levh_core::{
        AdmissionRecord, AdmissionVerdict, Embedding, Kind, Memory, MemoryId, MemoryState,
        NewMemoryRecord, Timestamp, Workspace, text,
    };

    /// The n-th memory of an import, with a 3-dimensional vector.
    fn record(n: i64) -> NewMemoryRecord {
        let at = Timestamp::from_second(1_700_000_000 + n).unwrap();
        let content = format!("bulk memory number {n} of the import");
        NewMemoryRecord {
            memory: Memory {
                id: MemoryId::new_at(at),
                workspace: Workspace::default(),
                project: Some(format!("project-{}", n % 10)),
                content_hash: text::content_hash(&content),
                content: content.clone(),
                kind: Kind::default(),
                source: "test".into(),
                state: MemoryState {
                    importance: 0.5,
                    pinned: false,
                    stability_hours: 168.0,
                    last_recalled_at: None,
                    recall_count: 0,
                    created_at: at,
                },
                valid_from: at,
                valid_to: None,
                superseded_by: None,
                admission: AdmissionRecord {
                    verdict: AdmissionVerdict::Admit,
                    reasons: vec![],
                    decided_by: "test".into(),
                },
                metadata: serde_json::json!({}),
                session_id: None,
                embedding_model: Some("test".into()),
                embedding_dimension: Some(3),
            },
            embedding: Some(Embedding {
                model: "test".into(),
                vector: vec![1.0, n as f32, 0.5],
            }),
            near_duplicate_keys: text::near_duplicate_keys(&content),
            working: false,
            forgotten_at: None,
        }
    }

    /// Right after a bulk write the planner knows the tables' size: the write analyzed
    /// them, without waiting for autovacuum.
    #[test]
    fn a_bulk_write_leaves_the_planner_statistics_fresh() {
        let Some(store) = crate::testing::store() else {
            return;
        };
        let store: &crate::PostgresStore = &store;
        let analyzed = |store: &crate::PostgresStore| -> i64 {
            store
                .connection()
                .unwrap()
                .query_one(
                    "SELECT count(*) FROM pg_stat_user_tables
                      WHERE relname IN ('memories', 'memory_embeddings', 'near_duplicate_keys')
                        AND coalesce(last_analyze, last_autoanalyze) IS NOT NULL",
                    &[],
                )
                .unwrap()
                .get(0)
        };
        let before = analyzed(store);
        let writes: Vec<levh_core::BatchWrite> = (0..600)
            .map(|n| levh_core::BatchWrite::Memory {
                record: record(n),
                neighbours: vec![],
                identical_seen: vec![],
            })
            .collect();
        levh_core::Store::write_batch(store, &writes, None, &|_| None, &levh_core::Actor::cli())
            .unwrap();
        assert_eq!(before, 0, "a fresh database has no statistics yet");
        assert_eq!(
            analyzed(store),
            3,
            "the bulk write analyzed the tables it filled"
        );
        assert!(
            store.analyze_stale_tables().unwrap().is_empty(),
            "nothing is stale right after"
        );
    }
}
